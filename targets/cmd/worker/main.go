// Command worker is the horizontal-scaling document's replica: fixed saturation throughput,
// a bounded queue, 503 beyond it, utilisation as a Prometheus gauge. See targets/worker.
package main

import (
	"context"
	"log/slog"

	"github.com/edgeproof/rlharness/internal/service"
	"github.com/edgeproof/rlharness/targets/worker"
)

func main() {
	service.Main("worker", worker.ParseFlags, func(ctx context.Context, cfg worker.Config, log *slog.Logger) error {
		return worker.Run(ctx, cfg, log)
	})
}
