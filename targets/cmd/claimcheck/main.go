// Command claimcheck is one process of the claim-check pipeline (document 004): a
// producer (POST /events) or a consumer in the stream's consumer group, by its node index.
// Injected crashes exit with status 3. See targets/claimcheck for its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgeproof/rlharness/targets/claimcheck"
)

func main() {
	cfg, err := claimcheck.ParseFlags("claimcheck", os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		os.Stderr.WriteString("claimcheck: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := claimcheck.Run(ctx, cfg, claimcheck.Options{Logger: log}); err != nil {
		log.Error("claimcheck failed", "err", err.Error())
		stop()
		os.Exit(1)
	}
}
