// Command noop is the throughput ceiling target: an HTTP server that answers
// 200 to every path without deciding anything, so a load test against it
// measures the harness and the network, not a limiter.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/edgeproof/rlharness/internal/service"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGTERM;
// a fleet stops members with a similar timeout before it sends SIGKILL.
const shutdownGrace = 5 * time.Second

func main() {
	fs := flag.NewFlagSet("noop", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to listen on, host:port [env NOOP_LISTEN]")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if err := service.EnvFallback(fs, "NOOP_", os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, "noop:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen); err != nil {
		slog.Error("noop target failed", "err", err)
		os.Exit(1)
	}
}

// run serves until ctx is cancelled, then drains in-flight requests.
func run(ctx context.Context, listen string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is the port taken? pass --listen or NOOP_LISTEN)", listen, err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(answer),
		ReadHeaderTimeout: 5 * time.Second,
	}
	slog.Info("noop target listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", listen, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	slog.Info("noop target stopped")
	return nil
}

// answer is the whole target: /healthz and every other path get 200.
func answer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", "3")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ok\n"))
}
