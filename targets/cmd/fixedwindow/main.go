// Command fixedwindow is a tiny limiter that is not ours: a fixed window counted per client,
// in memory or in Redis (INCR, then PEXPIRE on the first request of a window). It exists so
// that the harness's `--target` path can be tested on a limiter with a known flaw, the 2x
// burst at a window edge, that it must catch. The client comes from a query parameter.
//
//	fixedwindow --listen :8080 --limit 600 --window 60s [--redis host:port] [--param client] [--reject-status 429]
//
// GET /healthz answers 200; every other path is a decision: 200, or --reject-status over
// the limit. With Redis unreachable it lets the request through (fail-open).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/internal/service"
)

type limiter struct {
	limit  int64
	window time.Duration
	rdb    *redis.Client // nil: in memory

	mu     sync.Mutex
	epoch  int64
	counts map[string]int64
}

// take counts one request of client id at now and says whether it is within the limit.
func (l *limiter) take(ctx context.Context, id string, now time.Time) (bool, error) {
	w := now.UnixNano() / int64(l.window)
	if l.rdb != nil {
		key := "fw:" + id + ":" + strconv.FormatInt(w, 10)
		n, err := l.rdb.Incr(ctx, key).Result()
		if err != nil {
			return true, err
		}
		if n == 1 {
			l.rdb.PExpire(ctx, key, 2*l.window)
		}
		return n <= l.limit, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w != l.epoch {
		l.epoch, l.counts = w, make(map[string]int64)
	}
	l.counts[id]++
	return l.counts[id] <= l.limit, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		// As the other targets (service.Main): a bad flag, environment value or combination is 2.
		fmt.Fprintln(os.Stderr, "fixedwindow:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fixedwindow:", err)
		os.Exit(1)
	}
}

// config is the command line: see the package comment.
type config struct {
	listen, redis, param string
	limit                int64
	window               time.Duration
	reject               int
}

// parseFlags reads the command line from args (without the program name); a flag not given
// takes its FIXEDWINDOW_* variable (looked up with lookupEnv), else its default. Usage and
// malformed flags go to out; it returns flag.ErrHelp for -h/--help.
func parseFlags(args []string, lookupEnv func(string) (string, bool), out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fixedwindow", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.listen, "listen", ":8080", "address to listen on [env FIXEDWINDOW_LISTEN]")
	fs.Int64Var(&c.limit, "limit", 600, "requests per window per client [env FIXEDWINDOW_LIMIT]")
	fs.DurationVar(&c.window, "window", time.Minute, "window length; windows start at multiples of it since the Unix epoch [env FIXEDWINDOW_WINDOW]")
	fs.StringVar(&c.redis, "redis", "", "Redis host:port to count in; in memory if empty [env FIXEDWINDOW_REDIS]")
	fs.StringVar(&c.param, "param", "client", "query parameter that names the client [env FIXEDWINDOW_PARAM]")
	fs.IntVar(&c.reject, "reject-status", http.StatusTooManyRequests, "status of a rejected request [env FIXEDWINDOW_REJECT_STATUS]")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := service.EnvFallback(fs, "FIXEDWINDOW_", lookupEnv); err != nil {
		return c, err
	}
	if c.limit < 1 || c.window <= 0 {
		return c, fmt.Errorf("--limit must be >= 1 and --window > 0 (got %d, %s)", c.limit, c.window)
	}
	return c, nil
}

// run serves decisions until SIGINT or SIGTERM.
func run(c config) error {
	l := &limiter{limit: c.limit, window: c.window, counts: map[string]int64{}}
	if c.redis != "" {
		l.rdb = redis.NewClient(&redis.Options{Addr: c.redis, DialTimeout: 50 * time.Millisecond,
			ReadTimeout: 50 * time.Millisecond, WriteTimeout: 50 * time.Millisecond, MaxRetries: -1})
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get(c.param)
		if id == "" {
			http.Error(w, "missing query parameter "+c.param, http.StatusBadRequest)
			return
		}
		ok, err := l.take(r.Context(), id, time.Now())
		if err != nil {
			log.Warn("store unreachable: letting the request through", "err", err)
		}
		if !ok {
			w.WriteHeader(c.reject)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Addr: c.listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("fixedwindow listening", "listen", c.listen, "limit", c.limit, "window", c.window, "redis", c.redis)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
