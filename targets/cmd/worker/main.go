// Command worker is the horizontal-scaling document's replica: fixed saturation throughput,
// a bounded queue, 503 beyond it, utilisation as a Prometheus gauge. See targets/worker.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgeproof/rlharness/targets/worker"
)

func main() {
	cfg, err := worker.ParseFlags("worker", os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		os.Stderr.WriteString("worker: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := worker.Run(ctx, cfg, log); err != nil {
		log.Error("worker failed", "err", err.Error())
		stop()
		os.Exit(1)
	}
}
