// Package claimcheck is the claim-check pipeline's processes: a producer that takes
// delivery events over HTTP and writes them to Redis by the placement, and consumers that
// read the stream in a consumer group. Both inject the crashes of a plan kept in Redis by
// really exiting, so that what Redis holds afterwards is what crashes leave behind.
package claimcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/internal/service"
)

// Defaults of the command line.
const (
	DefaultListen     = ":8080"
	DefaultProducers  = 1
	DefaultPlacement  = cc.Claim
	DefaultDeletion   = cc.Immediate
	DefaultTTL        = time.Minute // DD11's 7 days, scaled to outlive a short run
	DefaultVisibility = time.Second // how long an unacknowledged entry waits before XAUTOCLAIM
	// CrashExitCode is the exit status of an injected crash.
	CrashExitCode = 3
)

// Config is one process's settings.
type Config struct {
	Listen     string
	Redis      string
	NodeIndex  int
	NodeCount  int
	Producers  int // nodes 0 … Producers−1 are producers, the others consumers
	Placement  cc.Placement
	Deletion   cc.Deletion
	TTL        time.Duration // payload time-to-live under the TTL policy
	Visibility time.Duration
}

// Role is "producer" or "consumer", from the node index.
func (c Config) Role() string {
	if c.NodeIndex < c.Producers {
		return "producer"
	}
	return "consumer"
}

// ParseFlags reads the command line, with CLAIMCHECK_* environment variables as fallbacks.
func ParseFlags(name string, args []string, env func(string) (string, bool), out io.Writer) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	var c Config
	var placement, deletion string
	fs.StringVar(&c.Listen, "listen", DefaultListen, "HTTP listen address: the producer's /events, everyone's /healthz [CLAIMCHECK_LISTEN]")
	fs.StringVar(&c.Redis, "redis", "", "Redis address host:port: queue, store, ledger [CLAIMCHECK_REDIS]")
	nodeIndex := fs.String("node-index", "0", "this process's index; below --producers it is a producer [CLAIMCHECK_NODE_INDEX]")
	nodeCount := fs.String("node-count", "1", "processes in the pipeline [CLAIMCHECK_NODE_COUNT]")
	producers := fs.String("producers", strconv.Itoa(DefaultProducers), "how many of the nodes are producers [CLAIMCHECK_PRODUCERS]")
	fs.StringVar(&placement, "placement", string(DefaultPlacement), "attach (proof in the message) or claim (proof in the store) [CLAIMCHECK_PLACEMENT]")
	fs.StringVar(&deletion, "deletion", string(DefaultDeletion), "immediate (consumer deletes) or ttl (payload expires) [CLAIMCHECK_DELETION]")
	ttl := fs.String("ttl", DefaultTTL.String(), "payload time-to-live under --deletion ttl (DD11, scaled) [CLAIMCHECK_TTL]")
	vis := fs.String("visibility", DefaultVisibility.String(), "idle time before an unacknowledged entry is reclaimed [CLAIMCHECK_VISIBILITY]")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := service.EnvFallback(fs, "CLAIMCHECK_", env); err != nil {
		return c, err
	}
	var err error
	ints := []struct {
		name string
		s    string
		dst  *int
	}{{"node-index", *nodeIndex, &c.NodeIndex}, {"node-count", *nodeCount, &c.NodeCount}, {"producers", *producers, &c.Producers}}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(f.s); err != nil || *f.dst < 0 {
			return c, fmt.Errorf("--%s must be a whole number >= 0 (got %q)", f.name, f.s)
		}
	}
	if c.Placement, err = cc.ParsePlacement(placement); err != nil {
		return c, fmt.Errorf("--placement: %w", err)
	}
	if c.Deletion, err = cc.ParseDeletion(deletion); err != nil {
		return c, fmt.Errorf("--deletion: %w", err)
	}
	if c.TTL, err = time.ParseDuration(*ttl); err != nil || c.TTL <= 0 {
		return c, fmt.Errorf("--ttl must be a duration > 0 such as 60s (got %q)", *ttl)
	}
	if c.Visibility, err = time.ParseDuration(*vis); err != nil || c.Visibility <= 0 {
		return c, fmt.Errorf("--visibility must be a duration > 0 such as 1s (got %q)", *vis)
	}
	if c.Redis == "" {
		return c, errors.New("--redis is required: the pipeline's queue and store (host:port)")
	}
	return c, nil
}

// Options change how Run behaves, for tests.
type Options struct {
	Logger *slog.Logger
	// Crash ends the process at an injected crash; default os.Exit(CrashExitCode). A test
	// passes a function that stops the role's goroutine instead.
	Crash func()
}

// Run serves /healthz and runs the role until ctx ends.
func Run(ctx context.Context, cfg Config, opt Options) error {
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	crash := opt.Crash
	if crash == nil {
		crash = func() { os.Exit(CrashExitCode) }
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis, PoolSize: 16})
	defer rdb.Close()
	if err := waitRedis(ctx, rdb); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	var consumerDone chan error
	switch cfg.Role() {
	case "producer":
		p := &producer{cfg: cfg, rdb: rdb, log: log, crash: crash, plan: lazyPlan{key: cc.ProducerPlan}}
		p.pipe = &cc.Producer{Placement: cfg.Placement, Queue: cc.NewRedisQueue(rdb), Store: cc.NewRedisStore(rdb)}
		if cfg.Deletion == cc.TTL {
			p.pipe.TTL = cfg.TTL
		}
		mux.Handle("POST /events", p)
	default:
		if err := cc.CreateGroup(ctx, rdb); err != nil {
			return fmt.Errorf("create consumer group %s on %s: %w", cc.GroupName, cc.StreamKey, err)
		}
		c := newConsumer(cfg, rdb, log, crash)
		consumerDone = make(chan error, 1)
		go func() { consumerDone <- c.run(ctx) }()
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("claim-check process ready", "role", cfg.Role(), "node", cfg.NodeIndex, "placement", cfg.Placement,
		"deletion", cfg.Deletion, "listen", ln.Addr().String())
	err = srv.Serve(ln)
	if consumerDone != nil {
		if cerr := <-consumerDone; cerr != nil && !errors.Is(cerr, context.Canceled) {
			return cerr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func waitRedis(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := rdb.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis at %s did not answer PING: %w", rdb.Options().Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lazyPlan loads a crash plan on first use: the harness writes it after the processes
// are up, before it sends traffic.
type lazyPlan struct {
	key  string
	once sync.Once
	plan cc.Plan
	err  error
}

func (l *lazyPlan) get(ctx context.Context, rdb redis.UniversalClient) (cc.Plan, error) {
	l.once.Do(func() { l.plan, l.err = cc.LoadPlan(ctx, rdb, l.key) })
	return l.plan, l.err
}
