package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/limiters"
)

// Targets of the figures harness bench measures (docs/bench.md).
const (
	TargetDecisionRatio = 1.5       // decision cost within 1.5× x/time/rate, zero allocations
	TargetCeilingRatio  = 0.90      // limiter fleet ceiling ≥ 0.90 × the no-op fleet's
	TargetStoreRatio    = 1.0 / 500 // delayed / central store commands at the document's rate
	TargetAddedP99Ms    = 0.5       // p99 added by the limiter at half the ceiling
)

// docSlidingBytes is the document's sliding window memory: HS1 clients × 12 records × 48 B.
const docSlidingBytes = model.TrackedClients * model.Slices * model.RecordBytes

func status(ok bool) string {
	if ok {
		return result.StatusMet
	}
	return result.StatusNotMet
}

// ratioStatus judges num / den >= target where a search that stopped at its maximum rate
// gives only a lower bound of its ceiling: a capped numerator makes value a lower bound of
// the ratio (met is proven, not met is not), a capped denominator an upper bound (not met is
// proven, met is not), and both capped leave the ratio unknown. note says which, if any.
func ratioStatus(value, target float64, numCapped, denCapped bool) (verdict, note string) {
	return lowerBoundRatio(value, target, numCapped, denCapped, searchCapped)
}

// lowerBound says why a ceiling is only a lower bound of itself, and what would settle it.
type lowerBound struct{ one, both, remedy string }

var (
	searchCapped = lowerBound{"stopped at its maximum rate", "stopped at their maximum rate", "search higher"}
	// generatorReached: a ceiling within result.GeneratorBoundMargin of the no-op replica's is where
	// the generator stopped, not the system.
	generatorReached = lowerBound{"reached the generator's ceiling", "reached the generator's ceiling", "send from more generators"}
	// stillClimbing: a search that stopped at its maximum rate or its last step with every
	// step sustained (result.Climbing).
	stillClimbing = lowerBound{"stopped while still climbing", "stopped while still climbing", "search higher, or with more steps"}
)

// lowerBoundRatio is ratioStatus for ceilings that are lower bounds for the reason why.
func lowerBoundRatio(value, target float64, numLow, denLow bool, why lowerBound) (verdict, note string) {
	switch {
	case numLow && denLow:
		return result.StatusNotMeasured, fmt.Sprintf("both searches %s: both ceilings are lower bounds, so their ratio is not measured; %s", why.both, why.remedy)
	case numLow && value < target:
		return result.StatusNotMeasured, fmt.Sprintf("the first search %s: the ratio is at least %.2f, which does not settle %.2f; %s", why.one, value, target, why.remedy)
	case denLow && value >= target:
		return result.StatusNotMeasured, fmt.Sprintf("the second search %s: the ratio is at most %.2f, which does not settle %.2f; %s", why.one, value, target, why.remedy)
	case numLow || denLow:
		return status(value >= target), fmt.Sprintf("a search %s: that ceiling is a lower bound, which settles the ratio either way", why.one)
	}
	return status(value >= target), ""
}

// Figures builds the table from what a run measured: one row per figure, in the order of
// their numbers, each with its target, whether it was met and the conditions it was measured in.
func Figures(b result.Bench) []result.BenchFigure {
	if b.Slice != nil {
		return sliceFigures(b)
	}
	var out []result.BenchFigure
	out = append(out, decisionFigures(b)...)
	byNet := map[string]map[string]*result.FleetBench{}
	var nets []string
	for i := range b.Fleets {
		f := &b.Fleets[i]
		if byNet[f.Network] == nil {
			byNet[f.Network] = map[string]*result.FleetBench{}
			nets = append(nets, f.Network)
		}
		byNet[f.Network][f.Name] = f
	}
	var ceil, store, peer, lat []result.BenchFigure
	for _, n := range nets {
		fs := byNet[n]
		ceil = append(ceil, generatorFigures(b, fs)...)
		ceil = append(ceil, ceilingFigure(b, fs))
		store = append(store, storeFigure(b, fs))
		peer = append(peer, peerFigures(b, fs)...)
		lat = append(lat, latencyFigures(b, fs)...)
	}
	if len(nets) == 0 {
		for _, it := range []struct {
			item int
			name string
		}{{2, "generator ceiling, harness sender / plain Vegeta"}, {2, "fleet ceiling, delayed / no-op"}, {3, "store commands, delayed / central"}, {4, "peer (go-redis/redis_rate)"}, {6, "p99 added by the limiter"}} {
			f := result.BenchFigure{Item: it.item, Name: it.name, Status: result.StatusNotMeasured, Display: "-", Conditions: "fleet not run"}
			switch it.item {
			case 2:
				ceil = append(ceil, f)
			case 3:
				store = append(store, f)
			case 4:
				peer = append(peer, f)
			case 6:
				lat = append(lat, f)
			}
		}
	}
	out = append(out, ceil...)
	out = append(out, store...)
	out = append(out, peer...)
	out = append(out, memoryFigures(b)...)
	out = append(out, lat...)
	out = append(out, clusterFigures(b)...)
	return out
}

func decisionFigures(b result.Bench) []result.BenchFigure {
	cond := fmt.Sprintf("in-process testing.B, one goroutine, fastest of 3 interleaved rounds of 0.3 s, cores %d, GOMAXPROCS %d, same run as x/time/rate", b.Cores, b.GoMaxProcs)
	if len(b.Decisions) == 0 {
		return []result.BenchFigure{{Item: 1, Name: "decision cost vs x/time/rate", Display: "-", Status: result.StatusNotMeasured, Conditions: "not run"}}
	}
	var out []result.BenchFigure
	for _, d := range b.Decisions {
		f := result.BenchFigure{Item: 1, Name: "decision " + d.Name, Value: d.VsRate, Unit: "x x/time/rate",
			Display:    fmt.Sprintf("%.1f ns/op = %.2fx, %d allocs/op", d.NsPerOp, d.VsRate, d.AllocsPerOp),
			Conditions: cond}
		if d.Name == RateName {
			f.Status, f.Target = result.StatusNoTarget, "the reference"
		} else {
			f.Target = fmt.Sprintf("<= %.1fx, 0 allocs", TargetDecisionRatio)
			f.Status = status(d.VsRate > 0 && d.VsRate <= TargetDecisionRatio && d.AllocsPerOp == 0)
		}
		out = append(out, f)
	}
	return out
}

// fleetCond is a fleet figure's conditions.
func fleetCond(b result.Bench, f *result.FleetBench, what string) string {
	c := f.Conditions
	provider := c.Provider
	if provider == "" {
		provider = "?"
	}
	replicas := fmt.Sprintf("%d replicas", c.Replicas)
	if c.NodeCount > 0 {
		replicas = fmt.Sprintf("%d replica told it is one of %d nodes", c.Replicas, c.NodeCount)
	}
	return fmt.Sprintf("cores %d, %s/%s networking, %s%s, %s", b.Cores, provider, fleet.Networking(provider, f.Network), replicas, storeNote(f), what)
}

func storeNote(f *result.FleetBench) string {
	switch {
	case f.Name == FleetNoop:
		return " (no-op)"
	case f.Conditions.StoreCPU > 0:
		return fmt.Sprintf(" + Redis held to %s of a core", share(f.Conditions.StoreCPU))
	}
	return " + Redis"
}

// share is a share of a core as a fraction where it is one (1/8), else a decimal.
// heldTo says what Redis was held to: a share of a core, or nothing (--store-cpu 0).
func heldTo(f float64) string {
	if f <= 0 {
		return "Redis unheld"
	}
	return fmt.Sprintf("Redis held to %s of a core", share(f))
}

func share(f float64) string {
	if n := math.Round(1 / f); n > 1 && math.Abs(1/n-f) < 1e-9 {
		return fmt.Sprintf("1/%.0f", n)
	}
	return fmt.Sprintf("%.3g", f)
}

func steps(f *result.FleetBench) string {
	if len(f.Steps) == 0 {
		return "no steps"
	}
	var asked []string
	for _, s := range f.Steps {
		mark := "✓"
		if !s.Sustained {
			mark = "✗"
		}
		asked = append(asked, result.Rate(s.Rate)+mark)
	}
	return fmt.Sprintf("step-up of %.0f s steps asked %s req/s", f.Steps[0].Duration.Seconds(), strings.Join(asked, " "))
}

func missing(fs map[string]*result.FleetBench, names ...string) string {
	for _, n := range names {
		f := fs[n]
		switch {
		case f == nil:
			return n + " fleet not run"
		case f.Error != "":
			return n + ": " + f.Error
		}
	}
	return ""
}

func ceilingFigure(b result.Bench, fs map[string]*result.FleetBench) result.BenchFigure {
	f := result.BenchFigure{Item: 2, Name: "fleet ceiling, delayed / no-op", Unit: "ratio", Target: fmt.Sprintf(">= %.2f, below the generator's ceiling", TargetCeilingRatio)}
	if m := missing(fs, FleetNoop, FleetDelayed); m != "" || fs[FleetNoop].Ceiling <= 0 {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", m
		if m == "" {
			f.Conditions = "the no-op fleet sustained no step: " + steps(fs[FleetNoop])
		}
		return f
	}
	n, d := fs[FleetNoop], fs[FleetDelayed]
	f.Value = d.Ceiling / n.Ceiling
	f.Conditions = fleetCond(b, d, fmt.Sprintf("sustained = errors 0, achieved >= 95 %%, generator p99 lateness <= 10 ms; delayed: %s; no-op: %s", steps(d), steps(n)))
	// The harness's sender against replicas that do nothing is the generator's ceiling: a
	// fleet within 10 % of it stopped where the generator did, whatever its own ceiling is.
	if !n.Capped && result.GeneratorBound(d.Ceiling, n.Ceiling) {
		f.Status = result.StatusGeneratorBound
		f.Display = fmt.Sprintf("%s%s / %s req/s = %.2f: GENERATOR-BOUND", result.Rate(d.Ceiling), atLeast(d), result.Rate(n.Ceiling), f.Value)
		f.Note = fmt.Sprintf("the delayed fleet sustained within %.0f %% of the generator's own ceiling (the harness's sender against no-op replicas, %s req/s): the search measured the generator; the limiter's ceiling is at least %s req/s. Send from more generators to measure it",
			100*result.GeneratorBoundMargin, result.Rate(n.Ceiling), result.Rate(d.Ceiling))
		return f
	}
	f.Display = fmt.Sprintf("%s%s / %s%s req/s = %.2f", result.Rate(d.Ceiling), atLeast(d), result.Rate(n.Ceiling), atLeast(n), f.Value)
	f.Status, f.Note = ratioStatus(f.Value, TargetCeilingRatio, d.Capped, n.Capped)
	return f
}

// generatorFigures are the generator's own ceiling, the harness's sender against the no-op
// fleet beside plain Vegeta's constant rate against the same replicas, and what each costs
// a request in this process (the profiles).
func generatorFigures(b result.Bench, fs map[string]*result.FleetBench) []result.BenchFigure {
	f := result.BenchFigure{Item: 2, Name: "generator ceiling, harness sender / plain Vegeta", Unit: "ratio", Target: fmt.Sprintf(">= %.2f", TargetGeneratorRatio)}
	m := missing(fs, FleetNoop, FleetVegeta)
	switch {
	case m != "":
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", m
		return []result.BenchFigure{f}
	case fs[FleetVegeta].Ceiling <= 0:
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", "plain Vegeta sustained no step: "+steps(fs[FleetVegeta])
	default:
		n, v := fs[FleetNoop], fs[FleetVegeta]
		f.Value = n.Ceiling / v.Ceiling
		f.Display = fmt.Sprintf("%s%s / %s%s req/s = %.2f", result.Rate(n.Ceiling), atLeast(n), result.Rate(v.Ceiling), atLeast(v), f.Value)
		f.Status, f.Note = ratioStatus(f.Value, TargetGeneratorRatio, n.Capped, v.Capped)
		f.Conditions = fleetCond(b, n, fmt.Sprintf("one process each against the same no-op replicas, searched in turn; harness: the schedule of the background population, attribution, accounting; vegeta: vegeta.Rate + Attack, one static target per replica; harness: %s; vegeta: %s",
			steps(n), steps(v)))
	}
	n := fs[FleetNoop]
	out := []result.BenchFigure{f}
	var h, pv *result.Profile
	for i := range b.Profiles {
		switch b.Profiles[i].Name {
		case ProfileHarness:
			h = &b.Profiles[i]
		case ProfileVegeta:
			pv = &b.Profiles[i]
		}
	}
	if h != nil && pv != nil && pv.CPUPerRequestUs > 0 {
		out = append(out, result.BenchFigure{Item: 2, Name: "generator CPU per request, harness sender / plain Vegeta",
			Value: h.CPUPerRequestUs / pv.CPUPerRequestUs, Unit: "ratio", Status: result.StatusNoTarget,
			Display: fmt.Sprintf("%.1f / %.1f us = %.2f; allocations %.1f / %.1f, %.0f / %.0f B; GC %.0f / %.0f %% of CPU",
				h.CPUPerRequestUs, pv.CPUPerRequestUs, h.CPUPerRequestUs/pv.CPUPerRequestUs, h.AllocsPerRequest, pv.AllocsPerRequest,
				h.AllocBytesPerRequest, pv.AllocBytesPerRequest, 100*h.GCShare, 100*pv.GCShare),
			Conditions: fleetCond(b, n, fmt.Sprintf("CPU and allocation profiles of this process over one step each (%.0f s with its schedule and report) at %s req/s against the same no-op replicas (runtime/pprof; the replicas run elsewhere); top functions in the report",
				h.WallSeconds, result.Rate(h.Rate))),
			Note: "harness top CPU: " + topLine(h.CPU, 5) + "; vegeta: " + topLine(pv.CPU, 5) + baselineNote(b.Baseline),
		})
	}
	return out
}

func atLeast(f *result.FleetBench) string {
	if f.Capped {
		return "+"
	}
	return ""
}

func storeFigure(b result.Bench, fs map[string]*result.FleetBench) result.BenchFigure {
	f := result.BenchFigure{Item: 3, Name: "store commands/s, delayed / central", Unit: "ratio",
		Target: fmt.Sprintf("<= 1/%.0f at HS2 (%s req/s)", 1/TargetStoreRatio, result.Rate(model.PeakRate))}
	if m := missing(fs, FleetDelayed, FleetCentral); m != "" || fs[FleetCentral].Steady == nil || fs[FleetDelayed].Steady == nil {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", m
		return f
	}
	d, c := fs[FleetDelayed], fs[FleetCentral]
	if c.StoreCmdPerSec <= 0 {
		f.Status, f.Display, f.Conditions = result.StatusNotMeasured, "-", "central mode sent the store no command"
		return f
	}
	measured := d.StoreCmdPerSec / c.StoreCmdPerSec
	// Delayed sync sends one exchange per node per interval whatever the rate (once every
	// node has news each interval); central sends one command per request. So the delayed
	// figure stays and the central one scales with the rate: at HS2 central would send
	// 40,000 × its commands per request.
	atPeak := c.StoreCmdPerRequest * model.PeakRate
	// A loaded machine stretches the sync interval (a ticker drops the ticks an exchange
	// overruns), so the projection takes the design's nodes / interval when it is higher.
	delayedAtPeak := max(d.StoreCmdPerSec, nodesPerSec(d))
	projected := delayedAtPeak / atPeak
	f.Value = projected
	f.Display = fmt.Sprintf("%.1f / %s cmd/s = 1/%s at %s req/s; at HS2 %.1f / %s = 1/%s",
		d.StoreCmdPerSec, result.Rate(c.StoreCmdPerSec), result.Rate(1/measured), result.Rate(d.Steady.Rate), delayedAtPeak, result.Rate(atPeak), result.Rate(1/projected))
	f.Status = status(projected <= TargetStoreRatio)
	f.Conditions = fleetCond(b, d, fmt.Sprintf("same offered rate %s req/s for %.0f s each, INFO commandstats top-level commands (scripts' inner commands left out), sync %v",
		result.Rate(d.Steady.Rate), d.Steady.Duration.Seconds(), d.Conditions.SyncInterval))
	f.Note = fmt.Sprintf("delayed = %d nodes / %v sync = %.0f cmd/s at any rate above ~%.0f req/s; central = 1 per request, so the ratio is %.0f / rate: 1/%s at our rate, 1/%s at HS2",
		d.Conditions.Replicas, d.Conditions.SyncInterval, nodesPerSec(d), nodesPerSec(d), nodesPerSec(d), result.Rate(1/measured), result.Rate(1/projected))
	if d.Conditions.Design == string(limiters.DesignBounded) {
		f.Note = fmt.Sprintf("delayed = the bounded design: %d nodes' epoch reads / %v sync = %.0f cmd/s at any rate, plus one call per request of a client past a node's unsynced budget (none in this population: every client at most half its limit, about 1.5 requests per node and window at HS2); central = 1 per request, so the ratio is %.0f / rate: 1/%s at our rate, 1/%s at HS2",
			d.Conditions.Replicas, d.Conditions.SyncInterval, nodesPerSec(d), nodesPerSec(d), result.Rate(1/measured), result.Rate(1/projected))
	}
	f.Note += "; " + storeWork(d, c)
	return withEvidence(f, *d.Steady, *c.Steady)
}

// storeWork is what the store's work cost in each fleet's steady run, beside its round
// trips: the commands run inside scripts and Redis's CPU.
func storeWork(fleets ...*result.FleetBench) string {
	var parts []string
	for _, f := range fleets {
		s := fmt.Sprintf("%s per request %.4f round trips + %.4f commands inside scripts, Redis CPU ", f.Name, f.StoreCmdPerRequest, f.StoreScriptCmdPerRequest)
		if c := f.StoreCPU; c != nil {
			s += fmt.Sprintf("%.1f %% of a core (%.2f ms per 1,000 requests)", c.Percent, c.MsPerKiloRequest)
		} else {
			s += "not measured"
			if f.StoreCPUWhy != "" {
				s += " (" + f.StoreCPUWhy + ")"
			}
		}
		parts = append(parts, s)
	}
	return "store work: " + strings.Join(parts, "; ")
}

// nodesPerSec is the exchanges a delayed fleet makes a second when every node has news.
func nodesPerSec(f *result.FleetBench) float64 {
	if f.Conditions.SyncInterval <= 0 {
		return 0
	}
	return float64(f.Conditions.Replicas) / f.Conditions.SyncInterval.Seconds()
}

func peerFigures(b result.Bench, fs map[string]*result.FleetBench) []result.BenchFigure {
	name := "peer go-redis/redis_rate vs ours (delayed)"
	if m := missing(fs, FleetPeer, FleetDelayed); m != "" || fs[FleetPeer].Steady == nil || fs[FleetDelayed].Steady == nil {
		return []result.BenchFigure{{Item: 4, Name: name, Display: "-", Status: result.StatusNotMeasured, Conditions: m}}
	}
	p, d := fs[FleetPeer], fs[FleetDelayed]
	cond := fleetCond(b, p, fmt.Sprintf("peer-gcra: GCRA in one Redis script per decision; ours: sliding window, delayed sync; p99 and store at %s req/s; peer %s", result.Rate(p.Steady.Rate), steps(p)))
	// The ceilings are the highest rates sustained; the p99 and the store's commands rest on
	// the steady runs, which must have been sustained (Sustained).
	return []result.BenchFigure{
		{Item: 4, Name: "peer ceiling vs ours", Value: p.Ceiling, Unit: "req/s", Status: result.StatusNoTarget, Conditions: cond,
			Display: fmt.Sprintf("peer %s%s vs ours %s%s req/s (%.2fx)%s", result.Rate(p.Ceiling), atLeast(p), result.Rate(d.Ceiling), atLeast(d), ratio(p.Ceiling, d.Ceiling), boundNote(fs, p, d))},
		withEvidence(result.BenchFigure{Item: 4, Name: "peer p99 vs ours", Value: ms(p.Steady.Latency.P99), Unit: "ms", Status: result.StatusNoTarget, Conditions: cond,
			Display: fmt.Sprintf("peer %.2f vs ours %.2f ms", ms(p.Steady.Latency.P99), ms(d.Steady.Latency.P99))}, *p.Steady, *d.Steady),
		withEvidence(result.BenchFigure{Item: 4, Name: "peer store commands/s vs ours", Value: p.StoreCmdPerSec, Unit: "commands/s", Status: result.StatusNoTarget, Conditions: cond,
			Display: fmt.Sprintf("peer %s (%.2f/request) vs ours %.1f (%.4f/request)", result.Rate(p.StoreCmdPerSec), p.StoreCmdPerRequest, d.StoreCmdPerSec, d.StoreCmdPerRequest)}, *p.Steady, *d.Steady),
	}
}

// baselineNote is the harness's and Vegeta's cost per request in the baseline run, before.
func baselineNote(base *result.ProfileBaseline) string {
	if base == nil {
		return ""
	}
	var parts []string
	for _, p := range base.Profiles {
		parts = append(parts, fmt.Sprintf("%s %.1f us, %.1f allocations, %.0f B a request", p.Name, p.CPUPerRequestUs, p.AllocsPerRequest, p.AllocBytesPerRequest))
	}
	commit := base.Commit
	if commit == "" {
		commit = base.From
	}
	return fmt.Sprintf("; before (%s): %s", commit, strings.Join(parts, "; "))
}

// boundNote names the fleets whose ceiling is the generator's (GeneratorBound against the
// no-op fleet's), so that no comparison of them is read as the limiters'.
func boundNote(fs map[string]*result.FleetBench, fleets ...*result.FleetBench) string {
	n := fs[FleetNoop]
	if n == nil || n.Capped {
		return ""
	}
	var bound []string
	for _, f := range fleets {
		if result.GeneratorBound(f.Ceiling, n.Ceiling) {
			bound = append(bound, f.Name)
		}
	}
	if len(bound) == 0 {
		return ""
	}
	return "; GENERATOR-BOUND: " + strings.Join(bound, ", ")
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func memoryFigures(b result.Bench) []result.BenchFigure {
	if len(b.Memory) == 0 {
		return []result.BenchFigure{{Item: 5, Name: "store memory per client", Display: "-", Status: result.StatusNotMeasured, Conditions: "not run"}}
	}
	var out []result.BenchFigure
	for _, m := range b.Memory {
		total := float64(m.UsedDelta)
		f := result.BenchFigure{Item: 5, Name: "memory " + m.Name, Value: m.PerClient, Unit: "bytes/client",
			Display: fmt.Sprintf("%.0f B/client (MEMORY USAGE %.0f) = %.2f MB; document %.0f B = %.2f MB",
				m.PerClient, m.SampleUsage, total/1e6, m.Estimate, m.EstimateTotal/1e6),
			Status: result.StatusNoTarget,
			Conditions: fmt.Sprintf("real redis-server, %d clients (HS1) with %d counters each, INFO memory used_memory delta, MEMORY USAGE of %d sampled clients; %s",
				m.Clients, m.Records, m.Samples, m.Layout),
		}
		if strings.Contains(m.Name, "bounded design") { // not the document's layout: no estimate of its
			f.Display = fmt.Sprintf("%.1f B/client (MEMORY USAGE %.0f), %d keys for %d clients = %.2f MB",
				m.PerClient, m.SampleUsage, m.Keys, m.Clients, total/1e6)
			f.Conditions = fmt.Sprintf("real redis-server, %d clients with up to %d sub-slices each, INFO memory used_memory delta (the scripts' cache included), MEMORY USAGE of %d sampled clients; %s",
				m.Clients, m.Records, m.Samples, m.Layout)
		}
		if m.Records > 1 && strings.Contains(m.Name, "ours") {
			f.Target = fmt.Sprintf("well under %.2f MB", float64(docSlidingBytes)/1e6)
			f.Status = status(total < docSlidingBytes)
			f.Note = fmt.Sprintf("%.2fx under the document's %.2f MB; TestRedisSlidingHashMatchesLocalAtTheDocumentsRule proves the same decisions", docSlidingBytes/total, float64(docSlidingBytes)/1e6)
		}
		out = append(out, f)
	}
	return out
}

// WriteTable prints the table: one row per figure with its value, target and status, and
// a key to the conditions it was measured in (rows measured alike share one), then the
// notes that explain a figure and what could not be measured.
func WriteTable(w io.Writer, b result.Bench) error {
	if b.Slice != nil {
		if err := writeSlice(w, b); err != nil {
			return err
		}
	}
	var conds []string
	key := map[string]string{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tfigure\tvalue\ttarget\tstatus\tconditions\n")
	for _, f := range b.Figures {
		target := f.Target
		if target == "" {
			target = "-"
		}
		k, ok := key[f.Conditions]
		if !ok {
			k = conditionKey(len(conds))
			key[f.Conditions] = k
			conds = append(conds, f.Conditions)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t[%s]\n", f.Item, f.Name, f.Display, target, f.StatusText(), k)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "conditions:")
	for i, c := range conds {
		fmt.Fprintf(w, "  [%s] %s\n", conditionKey(i), c)
	}
	for _, f := range b.Figures {
		if f.Note != "" {
			fmt.Fprintf(w, "note %d (%s): %s\n", f.Item, f.Name, f.Note)
		}
	}
	for _, e := range b.Errors {
		fmt.Fprintf(w, "not measured: %s\n", e)
	}
	return nil
}

// conditionKey names the i-th distinct conditions: a, b, …, z, aa, ab, …
func conditionKey(i int) string {
	if i < 26 {
		return string(rune('a' + i))
	}
	return conditionKey(i/26-1) + string(rune('a'+i%26))
}
