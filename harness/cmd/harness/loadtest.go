package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/limiters"
)

func newLoadtestCmd() *cobra.Command {
	cfg := loadtest.DefaultConfig()
	var algorithm, mode string
	var verbose bool
	var baseline string
	var targets, faults []string
	var schedulePath string
	cmd := &cobra.Command{
		Use:   "loadtest",
		Short: "Bring up Redis and the replicas, replay the documents' traffic, gate the run",
		Long: `Brings up Redis and N limiter replicas (Docker by default, or local processes), replays
the documents' probe patterns and a background population with Vegeta, attributes every
response to its client and checks the three requirements: no client above 1.1x its limit in
any window, no client under its limit rejected, no rejection or 5xx because the store failed.

The design under test (--algorithm, --mode, and in delayed mode --design) is gated. With
--matrix every other algorithm x mode runs as a comparison that tests the document's claim
about it, without gating, and so does the other delayed design on the sliding window
(sliding_window/delayed-document beside the bounded design under test).

Exit codes: 0 every gate passed; 1 a promise broken or a gate failed (or a regression
against --baseline); 2 the run could not be made (flags, Docker, the fleet); 3 generator-bound:
the generator fell behind its schedule (or its shards' clocks disagreed by more than the
lateness tolerance), so the figures are not evidence either way.

--shards N sends every scenario from N generator shards, each a 'harness attack' process
(--shard-runner process) or a container of rlharness/harness:dev on the host's network
(--shard-runner container), all from one aligned start; their outcomes are merged and
judged as one run.

--time-scale F shrinks every duration (window, slices, sync interval, pattern timing, outage)
by F and so raises every rate by 1/F: every ratio the checks test is preserved.

--fail-open runs the fault scenarios (docs/faults.md): store-stop, store-pause, store-slow
(every store reply delayed twice the store timeout through a TCP proxy), store-restart (Redis
killed and started again empty) and replica-kill (one replica SIGKILLed, its requests sent to
the others, started again after the outage); --faults picks some of them. A target file gets
the store faults where the harness runs its store and replica-kill where it starts several
nodes.

--target FILE tests a limiter the harness did not write, as a target file describes it (see
docs/targets.md): every scenario and check runs on it, at the time scale its declared window
implies (a 60 s window runs at the documents' own time). Give --target
more than once to put systems side by side in one run; "replica" names the built-in design.
The first is gated, the others are comparisons.

--schedule FILE replays a schedule file (harness hunt writes one per family: the traffic that
did the most harm) exactly: its offsets, clients and replicas from a window edge, its store
fault at its offsets, judged as every scenario is; the built-in replica at the file's time
scale, replica count and design (unless --design says otherwise).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Algorithm = limiters.Algorithm(algorithm)
			cfg.Mode = limiters.Mode(mode)
			var err error
			if cfg.Faults, err = loadtest.ParseFaults(faults); err != nil {
				return err
			}
			for _, path := range targets {
				if path == loadtest.BuiltinTarget {
					cfg.Targets = append(cfg.Targets, nil)
					continue
				}
				t, err := target.Load(path)
				if err != nil {
					return err
				}
				cfg.Targets = append(cfg.Targets, t)
			}
			if schedulePath != "" {
				f, err := schedule.ReadFile(schedulePath)
				if err != nil {
					return err
				}
				if !cmd.Flags().Changed("design") {
					cfg.Design = "" // the file's design, unless --design says otherwise
				}
				if cfg, err = cfg.WithSchedule(&f); err != nil {
					return err
				}
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelInfo
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			cfg.Progress = cmd.OutOrStdout()
			cfg.Commit = commit()
			sum, err := loadtest.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			loadtest.WriteVerdict(cmd.OutOrStdout(), sum)
			fmt.Fprintf(cmd.OutOrStdout(), "summary: %s/summary.json\n", cfg.OutDir)
			repErr := writeReport(cmd.OutOrStdout(), cfg.OutDir, baseline)
			if sum.Interrupted { // neither verdict: what was measured is cut short
				return &gateError{msg: fmt.Sprintf("the run was interrupted: summary.json holds what was measured so far, marked interrupted; see %s/report.html", cfg.OutDir)}
			}
			return verdictError(sum.Pass, sum.GeneratorBound, len(sum.Failed), cfg.OutDir, repErr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Provider, "provider", cfg.Provider, "fleet provider: docker (Testcontainers) or local (processes on 127.0.0.1)")
	f.StringVar(&cfg.Network, "network", cfg.Network, "docker networking: bridge (ports published on 127.0.0.1) or host")
	f.IntVar(&cfg.Spec.Replicas, "replicas", cfg.Spec.Replicas, "limiter replicas (HS4)")
	f.StringVar(&algorithm, "algorithm", string(cfg.Algorithm), "design under test: fixed_window, sliding_window or token_bucket")
	f.StringVar(&mode, "mode", string(cfg.Mode), "design under test: central, split or delayed")
	f.StringVar(&cfg.Design, "design", string(limiters.DesignBounded), "delayed mode's design under test: bounded (an unsynced budget per client, past it one store call; docs/design-bound.md) or document (the document's delayed sync); with --matrix the other one runs as a comparison")
	f.DurationVar(&cfg.SyncInterval, "sync-interval", cfg.SyncInterval, "delayed-sync interval before scaling (HS5)")
	f.DurationVar(&cfg.StoreTimeout, "store-timeout", cfg.StoreTimeout, "replicas' store call timeout (not scaled)")
	f.Float64Var(&cfg.Spec.TimeScale, "time-scale", cfg.Spec.TimeScale, "multiply every duration by F (0 < F <= 1) and every rate by 1/F")
	f.Float64Var(&cfg.Spec.Rate, "rate", cfg.Spec.Rate, "background population's aggregate rate asked, requests/s as sent (HS2: 40000)")
	f.IntVar(&cfg.Spec.Clients, "clients", cfg.Spec.Clients, "background clients tracked (HS1)")
	f.Uint64Var(&cfg.Spec.Seed, "seed", cfg.Spec.Seed, "seed of the schedule (clients, arrivals, replicas)")
	f.BoolVar(&cfg.FailOpen, "fail-open", cfg.FailOpen, "also run the fault scenarios, those of --faults (on --store cluster: master-kill and master-pause)")
	f.StringSliceVar(&faults, "faults", []string{"all"}, "the fault scenarios --fail-open runs: all, or some of store-stop, store-pause, store-slow, store-restart, replica-kill")
	f.StringVar(&cfg.Store, "store", "redis", "counter store: redis (one Redis) or cluster (a Redis Cluster of 3 masters + 3 replicas; docker needs --network host)")
	f.Float64Var(&cfg.StoreCPU, "store-cpu", 0, "give the one Redis this share of a core (docker provider: its CPU quota), a slow store whose calls take time in proportion to their work; 0: no limit")
	f.DurationVar(&cfg.ClusterNodeTimeout, "cluster-node-timeout", 2*time.Second, "--store cluster: how long a silent master goes before its replica takes over (not scaled)")
	f.BoolVar(&cfg.Matrix, "matrix", cfg.Matrix, "also run every other algorithm x mode as a comparison")
	f.StringVar(&cfg.Only, "only", "", "run only the scenarios whose name contains this text (or one of several, comma-separated)")
	f.DurationVar(&cfg.Outage, "outage", cfg.Outage, "how long the store (or the killed replica) stays down in a fault scenario, before scaling; store-restart starts it again at once")
	f.DurationVar(&cfg.RecoveryGrace, "recovery-grace", cfg.RecoveryGrace, "time after the store returns before the 1.1x gate applies again (not scaled)")
	f.DurationVar(&cfg.Gates.LatenessP99, "max-lateness", cfg.Gates.LatenessP99, "generator-bound when the p99 lateness of sends exceeds this (0: 2% of a slice at the time scale, 20ms at 0.2)")
	f.Float64Var(&cfg.Gates.MinRateRatio, "min-rate-ratio", cfg.Gates.MinRateRatio, "generator-bound when achieved/asked rate falls below this")
	f.IntVar(&cfg.Shards, "shards", cfg.Shards, "generator shards per scenario, each sending its share of the clients (1: in this process)")
	f.StringVar(&cfg.ShardRunner, "shard-runner", cfg.ShardRunner, "how shards run: process (harness attack on this machine) or container (the harness image, host networking)")
	f.StringVar(&cfg.HarnessImage, "harness-image", loadtest.DefaultHarnessImage, "the container runner's image (scripts/build-images.sh harness)")
	f.StringVar(&cfg.BinDir, "bin-dir", "", "--provider local: run prebuilt programs from this directory (replica, noop, redis-server, redis-cli: the HS2 kit's bin/) instead of go build and PATH")
	f.StringVar(&cfg.OutDir, "out", cfg.OutDir, "run directory: outcomes, summary.json, report")
	f.StringVar(&baseline, "baseline", "", "an earlier run's summary.json to compare with; exit 1 on a regression beyond tolerance")
	f.StringArrayVar(&targets, "target", nil, "a target file describing the limiter to test (repeatable; \"replica\" is the built-in design, the default)")
	f.StringVar(&schedulePath, "schedule", "", "replay a schedule file (harness hunt writes them) exactly, in place of the documents' traffic: one scenario per system, its store fault if it has one")
	f.BoolVarP(&verbose, "verbose", "v", false, "log the fleet's lifecycle")
	return cmd
}
