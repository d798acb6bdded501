// Package service is the command line shared by the targets' main packages: parse the
// flags (with environment fallbacks), run until SIGINT or SIGTERM, and map the outcome to an
// exit code: 0 for --help or a clean stop, 2 for bad flags, 1 for a failure.
package service

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a target. parse reads its flags (it prints the usage itself on a malformed one);
// run serves until ctx ends, logging as JSON to stderr.
func Main[C any](name string,
	parse func(name string, args []string, lookupEnv func(string) (string, bool), out io.Writer) (C, error),
	run func(ctx context.Context, cfg C, log *slog.Logger) error) {
	cfg, err := parse(name, os.Args[1:], os.LookupEnv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		// A malformed flag was also shown with the usage; a bad value or combination only here.
		os.Stderr.WriteString(name + ": " + err.Error() + "\n")
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error(name+" failed", "err", err.Error())
		stop()
		os.Exit(1)
	}
}
