package main

import (
	"io"
	"log/slog"

	"github.com/spf13/pflag"
)

// fleetFlags defines --provider and --network on f into provider and network, their
// defaults the values they hold: where every command that starts a fleet runs it.
func fleetFlags(f *pflag.FlagSet, provider, network *string) {
	f.StringVar(provider, "provider", *provider, "fleet provider: docker (Testcontainers) or local (processes on 127.0.0.1)")
	if network != nil {
		f.StringVar(network, "network", *network, "docker networking: bridge (ports published on 127.0.0.1) or host")
	}
}

// runFlags are the flags every command that runs a fleet shares: --provider, --network
// (nil: the command declares its own), --bin-dir (nil: not offered), --out and
// --verbose, which sets the one logger of the run.
type runFlags struct {
	verbose bool
}

// newRunFlags defines the run's shared flags on f; each flag's default is the value its
// destination holds, out's usage says what the run directory receives.
func newRunFlags(f *pflag.FlagSet, provider, network, binDir, out *string, outUsage string) *runFlags {
	r := &runFlags{}
	fleetFlags(f, provider, network)
	if binDir != nil {
		f.StringVar(binDir, "bin-dir", *binDir, "--provider local: run prebuilt programs from this directory (replica, noop, redis-server, redis-cli: the HS2 kit's bin/) instead of go build and PATH")
	}
	f.StringVar(out, "out", *out, outUsage)
	f.BoolVarP(&r.verbose, "verbose", "v", false, "log the fleet's lifecycle")
	return r
}

// logger is the run's logger on w: warnings and errors, with --verbose the fleet's lifecycle.
func (r *runFlags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if r.verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
