// Command replica is the limiter replica, the service under test: every request is one
// rate-limit decision (200 or 429 with RateLimit header fields). See targets/replica and
// docs/DESIGN.md for its flags, rule file and endpoints.
package main

import (
	"context"
	"log/slog"

	"github.com/edgeproof/rlharness/internal/service"
	"github.com/edgeproof/rlharness/targets/replica"
)

func main() {
	service.Main("replica", replica.ParseFlags, func(ctx context.Context, cfg replica.Config, log *slog.Logger) error {
		return replica.Run(ctx, cfg, replica.WithLogger(log))
	})
}
