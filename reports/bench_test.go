package reports

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// A harness bench directory (bench.json, no summary.json) gets the performance table as its
// report: every figure with its target, status and conditions, and the steps behind them.
func TestGenerateRendersABenchRun(t *testing.T) {
	dir := t.TempDir()
	b := result.Bench{
		StartedAt: time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC), Cores: 2, GoMaxProcs: 2,
		Figures: []result.BenchFigure{
			{Item: 2, Name: "fleet ceiling, delayed / no-op", Display: "3735 / 4134 req/s = 0.90", Target: ">= 0.90", Status: result.StatusMet, Conditions: "cores 2, docker/host networking"},
			{Item: 6, Name: "p99 added by the limiter", Display: "+38.09 ms", Target: "<= 0.5 ms", Status: result.StatusNotMet, Conditions: "rate asked 1688 req/s", Note: "noisy on 2 cores"},
			{Item: 3, Name: "store commands/s, delayed / central", Display: "40.0 / 100 cmd/s", Target: "<= 1/500 at HS2", Status: result.StatusNotMeasured, Why: "generator-bound", Conditions: "rate asked 100 req/s"},
		},
		Decisions: []result.DecisionCost{{Name: "x-time-rate/Allow", NsPerOp: 105, VsRate: 1, N: 1000}},
		Fleets: []result.FleetBench{{Name: "delayed", Network: "host", Ceiling: 3735,
			Steps:  []result.Step{{Rate: 5062, Achieved: 4216, Why: "achieved 4216 of 5062 req/s"}},
			Steady: &result.Step{Rate: 1868, Achieved: 1868, Sustained: true, Latency: result.Percentiles{P99: 17 * time.Millisecond}}}},
		Memory: []result.MemoryLayout{{Name: "sliding_window, 12 slices (ours: one hash per client)", Clients: 200_000, Records: 12, PerClient: 261, EstimateTotal: 115.2e6}},
		Profiles: []result.Profile{{Name: "harness sender", Rate: 4000, Requests: 20000, CPUPerRequestUs: 115, AllocsPerRequest: 64.6, GCShare: 0.109,
			CPU:   []result.ProfileFunc{{Function: "internal/runtime/syscall/linux.Syscall6", Flat: 0.361, Cum: 0.361}, {Function: "runtime.scanObject", Flat: 0.083, Cum: 0.1}},
			Alloc: []result.ProfileFunc{{Function: "harness/schedule.NewBackground", Flat: 0.0864, Cum: 0.12}}}},
		Baseline: &result.ProfileBaseline{From: "runs/before/bench.json", Commit: "c493bf5",
			Profiles: []result.Profile{{Name: "harness sender", Rate: 4000, Requests: 20000, CPUPerRequestUs: 121.7, AllocsPerRequest: 96.6}}},
	}
	if err := result.Write(dir, result.BenchFile, b); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{
		`<td>fleet ceiling, delayed / no-op</td><td>3735 / 4134 req/s = 0.90</td><td>&gt;= 0.90</td><td><span class="pass">met</span></td><td><small>cores 2, docker/host networking</small></td>`,
		`<span class="fail">not met</span>`, "noisy on 2 cores",
		"achieved 4216 of 5062 req/s", "<td class=\"n\">17.00</td>", "115.20", "x-time-rate/Allow",
		"<td>not measured: generator-bound</td>", `<td class="n">5,062</td><td class="n">4,216</td>`,
		"<h2>Generator profiles</h2>", `<td>harness sender</td><td class="n">4,000</td><td class="n">20000</td>`, `<td class="n">64.6</td>`, `<td class="n">10.9</td>`,
		`<tr><td>internal/runtime/syscall/linux.Syscall6</td><td class="n">36.1</td><td class="n">36.1</td><td>harness/schedule.NewBackground</td><td class="n">8.6</td><td class="n">12.0</td></tr>`,
		`<tr><td>runtime.scanObject</td><td class="n">8.3</td><td class="n">10.0</td></tr>`,
		"Generator profiles before (baseline)", "From runs/before/bench.json, commit c493bf5", `<td class="n">96.6</td>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if w.JUnit != "" {
		t.Errorf("a bench run has no gates, but a JUnit file %q was named", w.JUnit)
	}
}

// A slice's page shows its systems side by side, with a chart of what a request costs each
// process and one of latency, and "-" where a figure was not measured.
func TestGenerateRendersASlice(t *testing.T) {
	dir := t.TempDir()
	steady := func(rate float64, p99 time.Duration) *result.Step {
		return &result.Step{Rate: rate, Achieved: rate, Sustained: true, Latency: result.Percentiles{P99: p99, P999: 2 * p99}}
	}
	b := result.Bench{StartedAt: time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC), Cores: 2,
		Figures: []result.BenchFigure{{Item: 8, Name: "slice: CPU per decision, bounded / no-op", Display: "44.0 / 40.0 us = 1.10x", Target: "<= 1.2x", Status: result.StatusMet}},
		Slice: &result.SliceBench{Traffic: schedule.Slice{TimeScale: 0.2, Rate: 5000, Clients: 25_000, Nodes: 8}, Rate: 5000, StoreCPU: 0.125,
			Systems: []result.FleetBench{
				{Name: "noop", Conditions: result.Conditions{Target: "noop"}, Nodes: "none: answers 200 without deciding", Ceiling: 6000,
					Steady: steady(5000, 2*time.Millisecond), Replica: &result.ProcessCost{CPUPerRequestUs: 40}, Generator: &result.ProcessCost{CPUPerRequestUs: 110}},
				{Name: "bounded", Conditions: result.Conditions{Target: "replica"}, Nodes: "node 0 of 8", Ceiling: 5800,
					Steady: steady(5000, 2300*time.Microsecond), Replica: &result.ProcessCost{CPUPerRequestUs: 44, RSSPerClient: 310},
					StoreCPU: &result.StoreCPU{Percent: 2.5, MsPerKiloRequest: 5}, StoreCmdPerRequest: 0.01},
			}},
	}
	if err := result.Write(dir, result.BenchFile, b); err != nil {
		t.Fatal(err)
	}
	page, err := GenerateBench(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	for _, want := range []string{
		"One replica's share of HS2, side by side", "node 0 of 8, 5,000 req/s asked from 25000 clients",
		`<tr><td>bounded</td><td><small>node 0 of 8</small></td><td class="n">5000</td><td class="n">5,800 (the generator's)</td><td class="n">2.30</td><td class="n">4.60</td><td class="n">&#43;0.30</td><td class="n">44.0</td><td class="n">1.10</td><td class="n">5.00</td><td class="n">20 %</td><td class="n">0.0100</td><td class="n">&#43;310</td><td class="n">-</td><td class="n">-</td></tr>`,
		"CPU a request, by process", "Latency of the steady run", "<svg", "<h2>Fleet bounded",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
