// Command replica is the limiter replica, the service under test: every request is one
// rate-limit decision (200 or 429 with RateLimit header fields). See targets/replica and
// docs/DESIGN.md for its flags, rule file and endpoints.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgeproof/rlharness/targets/replica"
)

func main() {
	cfg, err := replica.ParseFlags("replica", os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		// A malformed flag was also shown with the usage; a bad value or combination only here.
		os.Stderr.WriteString("replica: " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := replica.Run(ctx, cfg, replica.WithLogger(log)); err != nil {
		log.Error("replica failed", "err", err.Error())
		stop()
		os.Exit(1)
	}
}
