package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/bench"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/reports"
)

// benchHelp is harness bench --help.
const benchHelp = `Measures how fast and cheap the limiter is as ratios taken in one run, since absolute
figures drift on a shared machine, and prints the table with each figure's target, whether it
was met and its conditions (cores, networking, rate asked, duration):

  1. decision cost of every algorithm x mode beside x/time/rate's Allow (testing.B, allocations)
  2. the generator's ceiling: the harness's sender against 8 no-op replicas beside plain Vegeta's
     constant rate against the same replicas, and each one's CPU and allocations per request
     (profiles); fleet ceiling: the highest rate sustained (errors 0, generator on schedule) by
     8 limiter replicas + Redis in delayed sync over 8 no-op replicas, by a step-up search;
     GENERATOR-BOUND when within 10 % of the generator's ceiling
  3. store commands/s, delayed sync over central, at the same offered rate
  4. a peer, go-redis/redis_rate (replica --mode peer-gcra), in the same run: ceiling, p99, store
  5. store memory per tracked client: 200,000 clients through each counter layout
  6. p99 added by the limiter at half the ceiling and at a quarter: medians of 3 runs of each fleet
     taken in turn, beside the no-op fleet's own spread over its runs

Writes bench.json and report.html to --out. The heavy parts (fleets, the 200,000-client load)
should not share the machine with another load test: make bench runs this under flock.

--slice measures one replica's share of HS2 instead (make bench-slice, docs/bench.md): one
replica told it is node 0 of 8 (--node, --nodes), sent 5,000 req/s (--rate) from 25,000
clients (--clients: each sends the node all its requests, as behind a balancer that keeps a
client on one node; 200,000 each send it an eighth, as behind one that spreads every client
over the nodes, as a load test does) and the probes' share for its node, time-scaled as make loadtest
(--time-scale 0.2), its Redis held to 1/8 of a core (--store-cpu), each of --systems on a
fleet of its own, side by side: the no-op target, the bounded design, the document's design,
redis_rate and envoyproxy/ratelimit (its target file; image: make images-envoy). Per system:
achieved rate and ceiling, p99 and p99.9 and what the limiter adds over no-op, the replica's
CPU per decision and memory per client from /proc, Redis's CPU per request, round trips per
request and memory per client, the generator's own CPU per request. harness plan reads its
bench.json.`

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	out, html := "runs/bench", ""
	var flags *benchFlags
	var run *runFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the limiter's cost side by side: decisions, fleet ceiling, store commands, a peer, memory, latency",
		Long:  benchHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = run.logger(os.Stderr)
			cfg.Progress = cmd.OutOrStdout()
			cfg.Commit = commit()
			if err := flags.Apply(cmd.Flags()); err != nil {
				return err
			}
			if cfg.ProfileDir == "" {
				cfg.ProfileDir = out
			}
			b, runErr := bench.Run(cmd.Context(), cfg)
			if b.StartedAt.IsZero() { // the config was refused: nothing measured
				return runErr
			}
			if err := result.Write(out, result.BenchFile, b); err != nil {
				return errors.Join(runErr, err)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if err := bench.WriteTable(cmd.OutOrStdout(), b); err != nil {
				return errors.Join(runErr, err)
			}
			page, err := reports.GenerateBenchAs(out, html)
			if err != nil {
				return errors.Join(runErr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "bench: %s/%s, report: %s\n", out, result.BenchFile, page)
			if runErr == nil && len(b.Errors) > 0 { // a part that could not be measured is no figure
				fmt.Fprintf(cmd.OutOrStdout(), "RESULT: NOT MADE: %s\n", strings.Join(b.Errors, "; "))
				return fmt.Errorf("NOT MADE: %d part(s) of the bench could not be measured: %s", len(b.Errors), strings.Join(b.Errors, "; "))
			}
			return runErr
		},
	}
	f := cmd.Flags()
	run = newRunFlags(f, &cfg.Provider, nil, &cfg.BinDir, &out, "run directory for bench.json and report.html")
	f.StringVar(&html, "html", reports.HTMLFile, "the report's file name in --out (bench.html beside a load test's report.html)")
	flags = newBenchFlags(f, &cfg)
	return cmd
}
