package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
)

func newAttackCmd() *cobra.Command {
	var flags *attackFlags
	cmd := &cobra.Command{
		Use:   "attack --shard i/N --target URL... [--start TIME] --out DIR",
		Short: "Send one shard of a load test's schedule; harness judge merges the shards",
		Long: `Builds the whole schedule from the seed and flags (the same on every machine), sends the
requests of the clients of shard i of N (client index mod N: every client on exactly one
shard) at the targets, and writes DIR/shard-<i>/outcomes.csv and shard.json (shard, seed,
start instant, clock offset). 'harness judge DIR' merges the shards and judges the whole run.

Every shard must be given the same --start (RFC 3339, e.g. 2026-12-03T08:00:00Z); without it
a shard starts at the next window edge since the epoch, which shards started within one
window of each other agree on. --clock-ref HOST:PORT reads that Redis's TIME (several samples,
the least round trip kept) so the judge can bound the skew between machines.

In a Kubernetes Indexed Job give --shard '$JOB_COMPLETION_INDEX/N' (or '/N'): the index is
read from the environment. Exit codes: 0 sent, 2 could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ac, err := flags.Config(os.Getenv)
			if err != nil {
				return err
			}
			ac.Progress, ac.Commit = cmd.OutOrStdout(), commit()
			m, err := loadtest.Attack(cmd.Context(), ac)
			if err != nil {
				return err
			}
			off := "not measured"
			if m.ClockOffset != nil {
				off = fmt.Sprintf("%v ± %v against %s", m.ClockOffset.Offset, m.ClockOffset.RTT/2, m.ClockOffset.Reference)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "shard %d/%d: %d of %d sent, clock offset %s; %s\n", m.Shard, m.Shards, m.Sent, m.Scheduled, off, loadtest.ShardDir(ac.OutDir, m.Shard))
			return nil
		},
	}
	flags = newAttackFlags(cmd.Flags())
	return cmd
}

func newJudgeCmd() *cobra.Command {
	var jc loadtest.JudgeConfig
	jc.Gates = loadtest.DefaultConfig().Gates
	jc.Gates.Clock = "" // the clock the run was gated on, unless --gate-clock says otherwise
	var baseline string
	cmd := &cobra.Command{
		Use:   "judge DIR...",
		Short: "Judge the shards of a run written by harness attack, or what a killed load test wrote",
		Long: `Reads every shard (DIR is a shard's directory or a run directory holding shard-*/), checks
that they are one run (one schedule, one start, every shard 0..N-1 once), rebuilds the
schedule from the seed, merges the outcomes and judges them with the load test's accounting
and gates. It reports every shard's clock offset and the largest skew between machines; a
skew beyond the lateness tolerance marks the run generator-bound, as a late generator does.
Writes summary.json, the merged outcomes and report.html to --out (default: the first DIR).

A finished load test's run directory (DIR holding */scenario.json and its summary.json) is
judged again from its outcomes as the run judged it, on both clocks, with --gate-clock and the
generator flags where given; the store's, sync's and fault's figures are the run's.

A load test's run directory (DIR holding */scenario.json) that a kill (SIGKILL, a crash)
left without summary.json, or with a summary.json short of a scenario: every scenario the
summary lacks is judged from its outcomes.csv, on the part of its schedule that was sent and
answered before the kill; the store's and the sync's figures went with the run. summary.json
is written marked incomplete, and the exit code is 1.

Exit codes: 0 pass; 1 a promise broken or a gate failed (or a regression against
--baseline), or a killed run judged (incomplete); 2 the shards could not be read or do not
form one run; 3 generator-bound.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jc.OutDir == "" {
				jc.OutDir = args[0]
			}
			jc.Commit = commit()
			judge := loadtest.Judge
			if len(args) == 1 && loadtest.Killed(args[0]) { // a load test's run directory
				judge = func(paths []string, jc loadtest.JudgeConfig) (result.Summary, error) {
					return loadtest.JudgeRunDir(paths[0], jc)
				}
			}
			sum, err := judge(args, jc)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, r := range sum.Scenarios {
				if sk := r.ClockSkew; sk != nil {
					for _, o := range sk.Offsets {
						off := "not measured"
						if o.Known {
							off = fmt.Sprintf("%v ± %v", o.Offset, o.RTT/2)
						}
						fmt.Fprintf(out, "shard %d on %s: clock offset %s\n", o.Shard, o.Host, off)
					}
					fmt.Fprintf(out, "clock skew between machines: %v (tolerance %v, measured %v)\n", sk.Max, sk.Tolerance, sk.Measured)
				}
			}
			loadtest.WriteVerdict(out, sum)
			fmt.Fprintf(out, "summary: %s/summary.json\n", jc.OutDir)
			repErr := writeReport(out, jc.OutDir, baseline)
			return judgedError(summaryJudged(sum), jc.OutDir, repErr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&jc.OutDir, "out", "", "where summary.json and the report go (default: the first DIR)")
	gateFlags(f, &jc.Gates)
	f.StringVar(&baseline, "baseline", "", "an earlier run's summary.json to compare with; exit 1 on a regression beyond tolerance")
	return cmd
}
