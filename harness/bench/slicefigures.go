package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// printCost prints what a slice's steady run cost the system, as it finishes.
func printCost(cfg Config, f result.FleetBench) {
	cost := func(c *result.ProcessCost, why, unit string) string {
		if c == nil {
			return "not measured (" + why + ")"
		}
		return fmt.Sprintf("%.1f us/%s (%.2f of a core), RSS %+.0f B/client", c.CPUPerRequestUs, unit, c.Cores, c.RSSPerClient)
	}
	store := "no store"
	switch {
	case f.StoreCPU != nil:
		store = fmt.Sprintf("Redis %.1f us/request (%.1f %% of a core), %.4f round trips/request", f.StoreCPU.MsPerKiloRequest, f.StoreCPU.Percent, f.StoreCmdPerRequest)
	case f.StoreCPUWhy != "":
		store = "Redis CPU not measured (" + f.StoreCPUWhy + ")"
	}
	if m := f.StoreMemory; m != nil {
		store += fmt.Sprintf(", %+.1f B/client", m.PerClient)
	}
	fmt.Fprintf(cfg.Progress, "             replica %s; %s; generator %s\n", cost(f.Replica, f.ReplicaWhy, "decision"), store, cost(f.Generator, f.GeneratorWhy, "request"))
}

// sliceFigures are the slice's targets, each on the bounded design against the
// no-op replica or redis_rate in the same run: CPU per decision, the p99 it adds, Redis's
// busy share of its share of a core, and its ceiling over redis_rate's.
func sliceFigures(b result.Bench) []result.BenchFigure {
	fs := map[string]*result.FleetBench{}
	for i := range b.Slice.Systems {
		fs[b.Slice.Systems[i].Name] = &b.Slice.Systems[i]
	}
	out := []result.BenchFigure{sliceCPUFigure(b, fs)}
	name := "slice: p99 added by the bounded design (bounded - no-op)"
	if m := missing(fs, SliceNoop, SliceBounded); m != "" {
		out = append(out, result.BenchFigure{Item: 8, Name: name, Unit: "ms", Target: fmt.Sprintf("<= %.1f ms", TargetAddedP99Ms), Status: result.StatusNotMeasured, Display: "-", Conditions: m})
	} else {
		out = append(out, addedP99(b, 8, name, fs[SliceNoop], fs[SliceBounded], func(int) string { return "the slice's rate" })...)
	}
	return append(out, sliceStoreFigure(b, fs), sliceCeilingFigure(b, fs))
}

// sliceCond is a slice figure's conditions.
func sliceCond(b result.Bench, f *result.FleetBench, what string) string {
	s := b.Slice
	return fleetCond(b, f, fmt.Sprintf("one replica's share of HS2: %s req/s from %s and the probes' share for node %d, time scale %g (window %v); %s",
		result.Rate(s.Rate), slicePopulation(s.Traffic), s.Traffic.Node, s.Traffic.TimeScale, s.Traffic.Window(), what))
}

// slicePopulation is a slice's clients and, where they are HS1's, the balancer they stand for.
func slicePopulation(s schedule.Slice) string {
	n := result.Rate(float64(s.Clients)) + " clients"
	if r := s.Routing(); r != "" {
		return n + " (" + r + ")"
	}
	return n
}

func sliceCPUFigure(b result.Bench, fs map[string]*result.FleetBench) result.BenchFigure {
	f := result.BenchFigure{Item: 8, Name: "slice: CPU per decision, bounded / no-op", Unit: "ratio", Target: fmt.Sprintf("<= %.1fx", TargetSliceCPURatio)}
	if m := missing(fs, SliceNoop, SliceBounded); m != "" {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", m
		return f
	}
	n, d := fs[SliceNoop], fs[SliceBounded]
	for _, x := range []*result.FleetBench{n, d} {
		if x.Replica == nil {
			f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", sliceCond(b, x, "")
			f.Why = x.Name + "'s replica CPU: " + orNoRun(x.ReplicaWhy)
			return f
		}
	}
	f.Value = d.Replica.CPUPerRequestUs / n.Replica.CPUPerRequestUs
	f.Display = fmt.Sprintf("%.1f / %.1f us = %.2fx (%.2f / %.2f of a core)", d.Replica.CPUPerRequestUs, n.Replica.CPUPerRequestUs, f.Value, d.Replica.Cores, n.Replica.Cores)
	f.Status = status(f.Value <= TargetSliceCPURatio)
	f.Conditions = sliceCond(b, d, fmt.Sprintf("the replica process's CPU (the sum of its threads' /proc schedstat) over each steady run of %.0f s, per request answered", d.Steady.Duration.Seconds()))
	return withEvidence(f, *n.Steady, *d.Steady)
}

func orNoRun(why string) string {
	if why == "" {
		return "no steady run"
	}
	return why
}

func sliceStoreFigure(b result.Bench, fs map[string]*result.FleetBench) result.BenchFigure {
	f := result.BenchFigure{Item: 8, Name: "slice: Redis busy at its share of a core (bounded)", Unit: "share", Target: fmt.Sprintf("< %.0f %%", 100*TargetSliceStoreBusy)}
	d := fs[SliceBounded]
	switch {
	case d == nil || d.Error != "" && d.Steady == nil:
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", missing(fs, SliceBounded)
		return f
	case b.Slice.StoreCPU <= 0:
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", sliceCond(b, d, "")
		f.Why = "Redis was not held to a share of a core (--store-cpu 0)"
		return f
	case d.StoreCPU == nil:
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", sliceCond(b, d, "")
		f.Why = "Redis CPU: " + orNoRun(d.StoreCPUWhy)
		return f
	}
	c := d.StoreCPU
	f.Value = c.Percent / 100 / b.Slice.StoreCPU
	f.Display = fmt.Sprintf("%.1f %% of a core = %.0f %% of its %s (%.1f us a request, %.4f round trips a request)",
		c.Percent, 100*f.Value, share(b.Slice.StoreCPU), c.MsPerKiloRequest, d.StoreCmdPerRequest)
	f.Status = status(f.Value < TargetSliceStoreBusy)
	f.Conditions = sliceCond(b, d, fmt.Sprintf("INFO cpu (the main thread's) over the steady run of %.0f s, against the share Redis was held to", d.Steady.Duration.Seconds()))
	return withEvidence(f, *d.Steady)
}

func sliceCeilingFigure(b result.Bench, fs map[string]*result.FleetBench) result.BenchFigure {
	f := result.BenchFigure{Item: 8, Name: "slice: ceiling, bounded / redis_rate", Unit: "ratio", Target: fmt.Sprintf(">= %.1f", TargetSliceCeilingVsP)}
	if m := missing(fs, SliceNoop, SliceBounded, SlicePeer); m != "" {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", m
		return f
	}
	n, d, p := fs[SliceNoop], fs[SliceBounded], fs[SlicePeer]
	if d.Ceiling <= 0 || p.Ceiling <= 0 {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", sliceCond(b, d, "")
		f.Why = fmt.Sprintf("a search sustained no step: bounded %s; redis_rate %s", steps(d), steps(p))
		return f
	}
	f.Value = d.Ceiling / p.Ceiling
	f.Display = fmt.Sprintf("%s%s / %s%s req/s = %.2f", result.Rate(d.Ceiling), atLeast(d), result.Rate(p.Ceiling), atLeast(p), f.Value)
	f.Conditions = sliceCond(b, d, fmt.Sprintf("highest step sustained (errors 0, achieved >= 95 %%, generator p99 lateness <= 10 ms), searched in turn with the no-op replica's (%s); bounded: %s; redis_rate: %s",
		ceilingOf(n), steps(d), steps(p)))
	// A ceiling within the margin of the no-op replica's is the generator's, and one whose
	// search ran out of steps while still climbing is where it stopped: lower bounds both.
	bound := func(x *result.FleetBench) bool {
		return !result.Climbing(*n) && result.GeneratorBound(x.Ceiling, n.Ceiling)
	}
	switch {
	case bound(d) || bound(p):
		f.Status, f.Note = lowerBoundRatio(f.Value, TargetSliceCeilingVsP, result.Climbing(*d) || bound(d), result.Climbing(*p) || bound(p), generatorReached)
		if result.Climbing(*d) || result.Climbing(*p) {
			f.Note += "; a search stopped while still climbing too"
		}
	default:
		f.Status, f.Note = lowerBoundRatio(f.Value, TargetSliceCeilingVsP, result.Climbing(*d), result.Climbing(*p), stillClimbing)
	}
	if f.Status == result.StatusNotMeasured && (bound(d) || bound(p)) {
		f.Why = WhyGeneratorBound
	}
	return f
}

func ceilingOf(f *result.FleetBench) string {
	return fmt.Sprintf("no-op %s%s req/s", result.Rate(f.Ceiling), atLeast(f))
}

// writeSlice prints the systems side by side, then what each row rests on.
func writeSlice(w io.Writer, b result.Bench) error {
	s := b.Slice
	fmt.Fprintf(w, "One replica's share of HS2, side by side: node %d of %d, %s req/s asked from %s clients and the probes' share, time scale %g, %s\n",
		s.Traffic.Node, s.Traffic.Nodes, result.Rate(s.Traffic.Rate), result.Rate(float64(s.Traffic.Clients)), s.Traffic.TimeScale, heldTo(s.StoreCPU))
	if s.RateWhy != "" {
		fmt.Fprintf(w, "rate: %s\n", s.RateWhy)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tachieved\tceiling\tp99 ms\tp99.9 ms\tp99 added\tCPU us/decision\tx no-op\tRedis us/req\tRedis busy\tround trips/req\tRSS B/client\tRedis B/client\tgenerator us/req\t")
	for _, r := range s.Rows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.System, achieved(r), ceilingCell(r),
			num(r.P99Ms, "%.2f"), num(r.P999Ms, "%.2f"), num(r.AddedP99Ms, "%+.2f"), num(r.CPUPerDecisionUs, "%.1f"), num(r.VsNoop, "%.2f"),
			num(r.RedisCPUPerRequestUs, "%.2f"), pctCell(r.RedisBusy), num(r.RoundTrips, "%.4f"), num(r.RSSPerClient, "%+.0f"),
			num(r.RedisPerClient, "%+.1f"), num(r.GeneratorUs, "%.1f"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range s.Rows() {
		line := fmt.Sprintf("  %s: one of %d: %s", r.System, s.Traffic.Nodes, r.Nodes)
		if !r.Sustained && r.Why != "" {
			line += "; steady run NOT sustained: " + r.Why
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "  achieved: the steady run's rate, * where it was not sustained; ceiling: + a search that stopped while still climbing (at its maximum rate or its last step): at least that, (gen) within 10 % of the no-op replica's: the generator's; p99 added: over the no-op replica's steady run (one run each; the judged figure below takes medians of rounds); CPU from /proc over the traffic, Redis's from INFO cpu")
	fmt.Fprintln(w)
	return nil
}

func num(v float64, f string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(f, v)
}

func pctCell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

func achieved(r result.SliceRow) string {
	if math.IsNaN(r.Achieved) {
		return "-"
	}
	s := result.Rate(r.Achieved)
	if !r.Sustained {
		s += "*"
	}
	return s
}

func ceilingCell(r result.SliceRow) string {
	if r.Ceiling <= 0 {
		return "-"
	}
	s := result.Rate(r.Ceiling)
	if r.Capped {
		s += "+"
	}
	if r.Generator {
		s += " (gen)"
	}
	return strings.TrimSpace(s)
}
