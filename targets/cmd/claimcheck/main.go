// Command claimcheck is one process of the claim-check pipeline (document 004): a
// producer (POST /events) or a consumer in the stream's consumer group, by its node index.
// Injected crashes exit with status 3. See targets/claimcheck for its flags.
package main

import (
	"context"
	"log/slog"

	"github.com/edgeproof/rlharness/internal/service"
	"github.com/edgeproof/rlharness/targets/claimcheck"
)

func main() {
	service.Main("claimcheck", claimcheck.ParseFlags, func(ctx context.Context, cfg claimcheck.Config, log *slog.Logger) error {
		return claimcheck.Run(ctx, cfg, claimcheck.Options{Logger: log})
	})
}
