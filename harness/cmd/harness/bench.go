package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/bench"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/reports"
)

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	slice := bench.DefaultSlice()
	var networks, out, html string
	out = "runs/bench"
	var sliceMode bool
	var run *runFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the limiter's cost side by side: decisions, fleet ceiling, store commands, a peer, memory, latency",
		Long: `Measures how fast and cheap the limiter is as ratios taken in one run, since absolute
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
clients (--clients) and the probes' share for its node, time-scaled as make loadtest
(--time-scale 0.2), its Redis held to 1/8 of a core (--store-cpu), each of --systems on a
fleet of its own, side by side: the no-op target, the bounded design, the document's design,
redis_rate and envoyproxy/ratelimit (its target file; image: make images-envoy). Per system:
achieved rate and ceiling, p99 and p99.9 and what the limiter adds over no-op, the replica's
CPU per decision and memory per client from /proc, Redis's CPU per request, round trips per
request and memory per client, the generator's own CPU per request. harness plan reads its
bench.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Networks = nil
			for _, n := range strings.Split(networks, ",") {
				if n = strings.TrimSpace(n); n != "" {
					cfg.Networks = append(cfg.Networks, n)
				}
			}
			cfg.Logger = run.logger(os.Stderr)
			cfg.Progress = cmd.OutOrStdout()
			cfg.Commit = commit()
			if err := sliceFlags(cmd, &cfg, &slice, sliceMode); err != nil {
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
	f.StringVar(&networks, "network", strings.Join(cfg.Networks, ","), "docker networking modes to measure, comma-separated: host, bridge")
	f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas in every fleet (HS4)")
	f.DurationVar(&cfg.Step, "step", cfg.Step, "length of each fixed-rate step and steady run")
	f.Float64Var(&cfg.Search.Start, "start-rate", cfg.Search.Start, "ceiling search: first rate asked, req/s")
	f.Float64Var(&cfg.Search.Max, "max-rate", cfg.Search.Max, "ceiling search: highest rate asked, req/s")
	f.Float64Var(&cfg.Search.Factor, "factor", cfg.Search.Factor, "ceiling search: step-up factor")
	f.IntVar(&cfg.Search.Refine, "refine", cfg.Search.Refine, "ceiling search: bisections after the first failed step")
	f.IntVar(&cfg.Search.MaxSteps, "max-steps", cfg.Search.MaxSteps, "ceiling search: most steps per fleet")
	f.IntVar(&cfg.Clients, "clients", cfg.Clients, "background clients each step draws from (HS1)")
	f.IntVar(&cfg.MemoryClients, "memory-clients", cfg.MemoryClients, "clients loaded into each counter layout (HS1)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the schedules and samples")
	f.BoolVar(&cfg.NoDecisions, "no-decisions", false, "skip figure 1 (in-process decisions)")
	f.BoolVar(&cfg.NoMemory, "no-memory", false, "skip figure 5 (store memory)")
	f.BoolVar(&cfg.NoFleet, "no-fleet", false, "skip the fleets (figures 2, 3, 4, 6)")
	f.BoolVar(&cfg.NoPeer, "no-peer", false, "skip the peer limiter (figure 4)")
	f.BoolVar(&cfg.NoCluster, "no-cluster", false, "skip figure 7 (delayed sync on a Redis Cluster: store commands beside one Redis, memory per shard)")
	f.Float64Var(&cfg.ClusterRate, "cluster-rate", cfg.ClusterRate, "figure 7: the offered rate of the one-Redis and cluster steady runs, req/s")
	f.BoolVar(&cfg.NoGenerator, "no-generator", false, "skip plain Vegeta's search and the generator profiles (figure 2's generator ceiling)")
	f.BoolVar(&cfg.GeneratorOnly, "generator-only", false, "measure only the generator: the no-op fleet with the harness's sender and with plain Vegeta, and their profiles")
	f.StringVar(&cfg.ProfileDir, "profile-dir", "", "write the generator profiles' raw pprof files here (go tool pprof); default: the run directory")
	f.StringVar(&cfg.Baseline, "baseline", "", "an earlier bench.json whose generator profiles the report shows beside this run's (before/after)")
	f.StringVar(&html, "html", reports.HTMLFile, "the report's file name in --out (bench.html beside a load test's report.html)")
	f.BoolVar(&sliceMode, "slice", false, "measure one replica's share of HS2, system by system, instead of the other figures (the flags below)")
	f.Float64Var(&slice.Rate, "rate", slice.Rate, "--slice: req/s sent to the one replica (HS2 / HS4); stepped down to the most this machine sends where the no-op replica falls behind")
	f.IntVar(&slice.Node, "node", slice.Node, "--slice: the replica's node index")
	f.IntVar(&slice.Nodes, "nodes", slice.Nodes, "--slice: the fleet size the replica is told (HS4)")
	loadtest.TimeScaleFlag(f, &slice.TimeScale, "--slice only, as make loadtest (window 12 s at 0.2)")
	f.Float64Var(&slice.StoreCPU, "store-cpu", slice.StoreCPU, "--slice: the share of a core each system's Redis is held to (docker: its CPU quota), 1/HS4 so it is as busy per request as with HS4 nodes; 0: not held")
	f.DurationVar(&slice.Steady, "steady", slice.Steady, "--slice: length of each system's steady run (one window at time scale 0.2)")
	f.StringSliceVar(&slice.Systems, "systems", slice.Systems, "--slice: the systems after the no-op replica: bounded, document, redis_rate, or a target file with a store the harness runs")
	return cmd
}

// sliceFlags puts --slice's settings into cfg: the clients default to HS1 / HS4, the steps to
// one window and the search to one from the slice's rate, unless the command line set them. Without --slice
// its flags are refused.
func sliceFlags(cmd *cobra.Command, cfg *bench.Config, slice *bench.SliceConfig, on bool) error {
	f := cmd.Flags()
	own := []string{"rate", "node", "nodes", "time-scale", "store-cpu", "steady", "systems"}
	if !on {
		for _, n := range own {
			if f.Changed(n) {
				return fmt.Errorf("--%s is a --slice flag: add --slice, or leave it out", n)
			}
		}
		return nil
	}
	if f.Changed("clients") {
		slice.Clients = cfg.Clients
	}
	if !f.Changed("step") {
		cfg.Step = slice.Step()
	}
	search := bench.DefaultSliceSearch(slice.Rate)
	for _, v := range []struct {
		flag     string
		to, from *float64
	}{{"start-rate", &cfg.Search.Start, &search.Start}, {"max-rate", &cfg.Search.Max, &search.Max}, {"factor", &cfg.Search.Factor, &search.Factor}} {
		if !f.Changed(v.flag) {
			*v.to = *v.from
		}
	}
	if !f.Changed("refine") {
		cfg.Search.Refine = search.Refine
	}
	if !f.Changed("max-steps") {
		cfg.Search.MaxSteps = search.MaxSteps
	}
	cfg.Search.Min = min(cfg.Search.Min, cfg.Search.Start)
	cfg.Slice = slice
	return nil
}
