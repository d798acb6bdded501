package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/claimtest"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
)

// addRunSubcommands adds subs under "harness run", creating it when no other command file
// has.
func addRunSubcommands(root *cobra.Command, subs ...*cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() == "run" {
			c.AddCommand(subs...)
			return
		}
	}
	run := &cobra.Command{Use: "run", Short: "Run a document's system on real infrastructure beside its model"}
	run.AddCommand(subs...)
	root.AddCommand(run)
}

func newRunClaimCheckCmd() *cobra.Command {
	var (
		cfg                 claimtest.Config
		provider, out       string
		placement, deletion string
		faults              = faultsFlag("true")
		all                 bool
		seed                uint
	)
	cmd := &cobra.Command{
		Use:   "claimcheck",
		Short: "The claim-check pipeline on Redis Streams with the fault window's crashes, measured beside the model",
		Long: `Starts Redis, one producer and consumers (fleet), sends delivery events with their
40,000-byte proofs through Vegeta, kills the producer between its two writes and consumers
before their ack as the model's crash plan says (DD10, seed 20260730), waits for the stream
to drain and reads every figure back from Redis, beside the model's for the same events.
Exit 1 when a check fails (an acknowledged event not processed exactly once, ...).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelError}))
			p, err := fleet.NewProvider(provider, log)
			if err != nil {
				return err
			}
			cfg.Seed, cfg.Logger = uint32(seed), log
			settings := model.ClaimSettingsRows
			if !all {
				pl, err := claimcheck.ParsePlacement(placement)
				if err != nil {
					return err
				}
				s := model.ClaimSetting{Placement: pl}
				if pl == claimcheck.Claim {
					if s.Deletion, err = claimcheck.ParseDeletion(deletion); err != nil {
						return err
					}
				}
				settings = []model.ClaimSetting{s}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Claim-check pipeline on real Redis Streams (%s provider)\n", provider)
			var results []result.ClaimRun
			failed := 0
			for _, withFaults := range faults.conditions() {
				for _, s := range settings {
					c := cfg
					c.Placement, c.Deletion = s.Placement, s.Deletion
					if withFaults {
						c.ProducerCrash, c.ConsumerCrash = claimcheck.ProducerCrashP, claimcheck.ConsumerCrashP
					}
					r, err := claimtest.Run(cmd.Context(), p, c)
					if err != nil {
						return fmt.Errorf("%s: %w", s.Name(), err)
					}
					results = append(results, r)
					if err := claimtest.Render(cmd.OutOrStdout(), r); err != nil {
						return err
					}
					if !r.Pass {
						failed++
					}
				}
			}
			if out != "" {
				if err := claimtest.Write(out, results); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s\n", filepath.Join(out, claimtest.ResultFile))
			}
			if failed > 0 {
				return &gateError{msg: fmt.Sprintf("claimcheck: %d of %d runs failed a check", failed, len(results))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	provider = "local"
	fleetFlags(f, &provider, &cfg.Network)
	f.IntVar(&cfg.Events, "events", claimtest.DefaultEvents, "delivery events per run (at most 20,000: 40 kB each)")
	f.Float64Var(&cfg.Rate, "rate", claimtest.DefaultRate, "events per second sent to the producer")
	f.IntVar(&cfg.Consumers, "consumers", claimtest.DefaultConsumers, "consumer processes in the group")
	f.StringVar(&placement, "placement", "claim", "attach or claim (with --all=false)")
	f.StringVar(&deletion, "deletion", "immediate", "immediate or ttl, for the claim placement (with --all=false)")
	f.BoolVar(&all, "all", true, "run the document's three settings: attach, claim immediate, claim ttl")
	f.Var(&faults, "faults", "inject the fault window's crashes (DD10: 0.005 producer, 0.01 consumer): true, false, or both (every setting fault-free, then under the fault window)")
	f.Lookup("faults").NoOptDefVal = "true"
	f.UintVar(&seed, "seed", model.ClaimSeed, "seed of the crash plan (the document's generator)")
	f.DurationVar(&cfg.TTL, "ttl", claimtest.DefaultTTL, "payload time-to-live under the ttl policy (DD11's 7 days, scaled)")
	f.DurationVar(&cfg.Visibility, "visibility", claimtest.DefaultVisibility, "idle time before an unacknowledged entry is reclaimed (XAUTOCLAIM)")
	f.DurationVar(&cfg.Drain, "drain", claimtest.DefaultDrain, "longest wait for the consumers to finish the stream")
	f.StringVar(&cfg.Binary, "binary", "", "local provider: a built targets/cmd/claimcheck (built with go build if empty)")
	f.StringVar(&out, "out", "", "run directory to write claimcheck.json to (the report reads it)")
	return cmd
}

// faultsFlag is --faults: true, false or both, so that one run directory can hold every
// setting with and without the fault window, as the document's two tables do.
type faultsFlag string

func (f *faultsFlag) String() string { return string(*f) }

func (f *faultsFlag) Set(v string) error {
	switch v {
	case "true", "false", "both":
		*f = faultsFlag(v)
		return nil
	}
	return fmt.Errorf("use true, false or both (got %q)", v)
}

func (f *faultsFlag) Type() string { return "true|false|both" }

// conditions are the fault conditions to run, fault-free first as in the document.
func (f faultsFlag) conditions() []bool {
	switch f {
	case "false":
		return []bool{false}
	case "both":
		return []bool{false, true}
	}
	return []bool{true}
}
