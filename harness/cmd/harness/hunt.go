package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/hunt"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
)

func newHuntCmd() *cobra.Command {
	rc := hunt.RunConfig{Load: loadtest.DefaultConfig(), Budget: hunt.DefaultBudget, Requests: hunt.DefaultRequests,
		MaxRate: hunt.DefaultMaxRate, Coarse: hunt.DefaultCoarse, Levels: hunt.DefaultLevels, Fault: result.FaultStop,
		Pressure: hunt.DefaultPressure, PressureShare: hunt.DefaultPressureShare, PressureRequests: hunt.DefaultPressureRequests}
	rc.Load.OutDir = "runs/hunt"
	var system *systemFlags
	var run *runFlags
	cmd := &cobra.Command{
		Use:   "hunt",
		Short: "Search for the traffic that breaks the limiter: aimed families, a budgeted search, replayable worst cases",
		Long: `Searches for the worst traffic one client can send: families of aimed traffic (bursts at a
window edge, at a token bucket's refill, at the end of a slice and right after it drops,
spread over every replica at one instant, a fresh client's limit to each replica, right after
each replica's sync tick, during a store fault, the limit twice a window apart, and a herd of
fresh clients each sending its limit once a window for three windows with a busy sender's
jitter, which says how many of the herd got more than 1.1x), each with parameters searched by a coarse
sweep and then refinement of the worst point, many variants at once in one run, each its own
client, judged exactly as harness loadtest judges: the busiest window-long interval of
accepted requests, false rejects by the client's own window. At-limit clients (exactly the
limit per window, paced with jitter or in window-aligned bursts, over the replicas) must
never be rejected. A learning step first reads the window edges and each replica's sync tick
from the responses to a few probes.

Under pressure (--pressure, default 3 levels): the generator's ceiling is measured first (a
burst sent at once), then each family's worst point is sent at the top level first, by a herd
as large as one pass at that ceiling allows, then at the levels below; a family's pressure line
ends with the pressure reached ("held at a peak of N req/s, K store timeouts ...", or where it
broke), not only the level asked.

The same target files, providers and time scale as loadtest (--target FILE, repeatable; each
system is hunted in turn on a fleet of its own). --budget bounds each system's search in wall
time (its fleet's start not counted), --budget-requests in requests.

Writes DIR/hunt.json, report.html and per family the worst variant's schedule file, which
'harness loadtest --schedule FILE' (with the same --target or --design) replays exactly.

Exit codes: 0 no family broke 1.1x (or, during a store fault, one limit per node, no error
while the store was away and 1.1x after it) and no client within its limit was rejected; 1 one did (on traffic the generator
sent faithfully), or the run was interrupted; 2 the hunt could not be made; 3 generator-bound:
nothing broke, and some family's every variant was sent late or slow (loadtest's lateness and
rate gates on its own sends), so the hunt has no evidence for it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := system.Apply(); err != nil {
				return err
			}
			rc.Load.Logger = run.logger(os.Stderr)
			rc.Progress, rc.Commit, rc.OutDir = cmd.OutOrStdout(), commit(), rc.Load.OutDir
			h, err := hunt.Run(cmd.Context(), rc)
			if err != nil && len(h.Systems) == 0 {
				return err
			}
			hunt.WriteSummary(cmd.OutOrStdout(), h, rc.OutDir)
			fmt.Fprintf(cmd.OutOrStdout(), "hunt: %s/%s\n", rc.OutDir, result.HuntFile)
			repErr := writeReport(cmd.OutOrStdout(), rc.OutDir, "")
			if err != nil {
				return err
			}
			return judgedError(huntJudged(h), rc.OutDir, repErr)
		},
	}
	f := cmd.Flags()
	run = newRunFlags(f, &rc.Load.Provider, &rc.Load.Network, &rc.Load.BinDir, &rc.Load.OutDir, "run directory: hunt.json, the schedules, the rounds' outcomes, report.html")
	system = newSystemFlags(f, &rc.Load)
	timeScaleFlag(f, &rc.Load.Spec.TimeScale, targetScale)
	f.DurationVar(&rc.Budget, "budget", rc.Budget, "wall time each system's search may take, its fleet's start not counted")
	f.IntVar(&rc.Requests, "budget-requests", rc.Requests, "requests each system may be sent")
	f.Float64Var(&rc.MaxRate, "max-rate", rc.MaxRate, "the most requests per second a burst is asked for (the generator's pace)")
	f.StringSliceVar(&rc.Families, "families", nil, "the families to hunt with, comma-separated (default all: "+fmt.Sprint(hunt.FamilyNames())+")")
	f.IntVar(&rc.Coarse, "coarse", rc.Coarse, "the most points of a family's coarse sweep")
	f.IntVar(&rc.Levels, "refine", rc.Levels, "refinement levels after the coarse sweep (each halves the step around the worst point)")
	f.IntVar(&rc.Pressure, "pressure", rc.Pressure, "the pressure ladder's top level: after the generator's ceiling is measured, each family's worst point is also sent unpaced by a herd of fresh clients, the top level first (its herd sized from the ceiling), then the levels below, until the bound breaks; the end says the peak reached (0: no pressure search)")
	f.Float64Var(&rc.PressureShare, "pressure-share", rc.PressureShare, "the factor each pressure level puts on an attack's bursts (level k: share^(k-1), at most 8 limits in a window per client)")
	f.StringVar(&rc.Fault, "fault", rc.Fault, "the fault rounds' fault (the store-fault and partition-edge families'): store-stop, store-pause, on a topology (--zones) partition or partition-blackhole (the farthest zone cut from the store), or none")
	f.Uint64Var(&rc.Seed, "seed", rc.Load.Spec.Seed, "seed of the variants' traffic and of the coarse sweep's sample")
	return cmd
}
