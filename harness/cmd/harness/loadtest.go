package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// loadtestHelp is harness loadtest --help.
const loadtestHelp = `Brings up Redis and N limiter replicas (Docker by default, or local processes), replays
the documents' probe patterns and a background population with Vegeta, attributes every
response to its client and checks the four promises: no client above 1.1x its limit in any
window (no overshoot), no client under its limit rejected (no false rejects), a client over
its limit still admitted its limit (no lock-out), no rejection or 5xx because the store failed
(fail open).

The design under test (--algorithm, --mode, and in delayed mode --design) is gated. With
--matrix every other algorithm x mode runs as a comparison that tests the document's claim
about it, without gating, and so does the other delayed design on the sliding window
(sliding_window/delayed-document beside the bounded design under test).

Exit codes: 0 every gate passed; 1 a promise broken or a gate failed (or a regression
against --baseline); 2 the run could not be made (flags, Docker, the fleet, a target the
provider cannot start: RESULT: NOT MADE, never FAIL); 3 generator-bound:
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
scale, replica count and design (unless --design says otherwise).`

// targetScale is --time-scale's note where a target file may run: its own window sets its scale.
const targetScale = "a target file's follows its window"

func newLoadtestCmd() *cobra.Command {
	cfg := loadtest.DefaultConfig()
	cfg.Design = string(limiters.DesignBounded)
	var baseline string
	var schedulePath string
	var system *systemFlags
	var scenarios *scenarioFlags
	var run *runFlags
	cmd := &cobra.Command{
		Use:   "loadtest",
		Short: "Bring up Redis and the replicas, replay the documents' traffic, gate the run",
		Long:  loadtestHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(system.Apply(), scenarios.Apply()); err != nil {
				return err
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
			cfg.Logger = run.logger(os.Stderr)
			cfg.Progress = cmd.OutOrStdout()
			cfg.Commit = commit()
			sum, err := loadtest.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			loadtest.WriteVerdict(cmd.OutOrStdout(), sum)
			fmt.Fprintf(cmd.OutOrStdout(), "summary: %s/summary.json\n", cfg.OutDir)
			repErr := writeReport(cmd.OutOrStdout(), cfg.OutDir, baseline)
			return judgedError(summaryJudged(sum), cfg.OutDir, repErr)
		},
	}
	f := cmd.Flags()
	run = newRunFlags(f, &cfg.Provider, &cfg.Network, &cfg.BinDir, &cfg.OutDir, "run directory: outcomes, summary.json, report")
	system = newSystemFlags(f, &cfg)
	specFlags(f, &cfg.Spec, targetScale)
	scenarios = newScenarioFlags(f, &cfg)
	f.StringVar(&baseline, "baseline", "", "an earlier run's summary.json to compare with; exit 1 on a regression beyond tolerance")
	f.StringVar(&schedulePath, "schedule", "", "replay a schedule file (harness hunt writes them) exactly, in place of the documents' traffic: one scenario per system, its store fault if it has one")
	return cmd
}
