package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
)

// fakeSender sustains every rate up to ceiling and records what it was asked.
type fakeSender struct {
	ceiling float64
	asked   []float64
	failAt  int // the n-th call (1-based) returns an error; 0 never
}

func (f *fakeSender) send(_ context.Context, rate float64) (result.Step, error) {
	f.asked = append(f.asked, rate)
	if f.failAt == len(f.asked) {
		return result.Step{}, errors.New("fleet gone")
	}
	return result.Step{Rate: rate, Sustained: rate <= f.ceiling}, nil
}

func TestSearchFindsTheCeiling(t *testing.T) {
	s := Search{Start: 1000, Min: 100, Max: 64000, Factor: 2, Refine: 2, MaxSteps: 20}
	tests := []struct {
		name    string
		ceiling float64
		want    float64
		capped  bool
		asked   []float64
	}{
		// 1000 2000 4000 ✓, 8000 ✗, then √(4000·8000) = 5657 ✓, √(5657·8000) = 6727 ✗.
		{"climbs then bisects", 6000, 5657, false, []float64{1000, 2000, 4000, 8000, 5657, 6727}},
		// 1000 ✗: step down to 500 ✓, then bisect 707 ✓, 841 ✗.
		{"first step fails", 800, 707, false, []float64{1000, 500, 707, 841}},
		{"nothing sustained", 50, 0, false, []float64{1000, 500, 250, 125}},
		{"capped at max", 1e9, 64000, true, []float64{1000, 2000, 4000, 8000, 16000, 32000, 64000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSender{ceiling: tt.ceiling}
			c, err := s.Run(context.Background(), f.send)
			if err != nil {
				t.Fatal(err)
			}
			if round(c.Rate) != tt.want || c.Capped != tt.capped {
				t.Errorf("ceiling %v capped %v, want %v %v", c.Rate, c.Capped, tt.want, tt.capped)
			}
			if len(f.asked) != len(tt.asked) || len(c.Steps) != len(tt.asked) {
				t.Fatalf("asked %v, want %v", f.asked, tt.asked)
			}
			for i := range f.asked {
				if round(f.asked[i]) != tt.asked[i] {
					t.Errorf("step %d asked %v, want %v", i, f.asked[i], tt.asked[i])
				}
			}
		})
	}
}

// A confirmed search sends a failed step again and believes the second answer.
func TestSearchConfirmsFailures(t *testing.T) {
	s := Search{Start: 1000, Min: 100, Max: 64000, Factor: 2, Refine: 0, MaxSteps: 20, Confirm: true}
	flaky := 0
	var asked []float64
	send := func(_ context.Context, rate float64) (result.Step, error) {
		asked = append(asked, rate)
		ok := rate <= 4000
		if rate == 2000 && flaky == 0 { // one neighbour's burst
			flaky++
			ok = false
		}
		return result.Step{Rate: rate, Sustained: ok}, nil
	}
	c, err := s.Run(context.Background(), send)
	if err != nil || c.Rate != 4000 {
		t.Fatalf("ceiling %v (%v), want 4000", c.Rate, err)
	}
	want := []float64{1000, 2000, 2000, 4000, 8000, 8000}
	if len(asked) != len(want) {
		t.Fatalf("asked %v, want %v", asked, want)
	}
	for i := range want {
		if asked[i] != want[i] {
			t.Errorf("asked %v, want %v", asked, want)
			break
		}
	}
}

// Interleaved searches take their steps in turn, and one that finishes leaves the others
// running to their own ceilings.
func TestInterleaveTakesTurns(t *testing.T) {
	s := Search{Start: 1000, Min: 100, Max: 64000, Factor: 2, Refine: 0, MaxSteps: 20}
	var mu sync.Mutex
	var order []string
	fake := func(name string, ceiling float64) Sender {
		return func(_ context.Context, rate float64) (result.Step, error) {
			mu.Lock()
			order = append(order, fmt.Sprintf("%s%.0f", name, rate))
			mu.Unlock()
			time.Sleep(time.Millisecond) // give the other searches every chance to cut in
			return result.Step{Rate: rate, Sustained: rate <= ceiling}, nil
		}
	}
	cs, errs := s.Interleave(context.Background(), fake("a", 4000), fake("b", 1000), fake("c", 16000))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("search %d: %v", i, err)
		}
	}
	if cs[0].Rate != 4000 || cs[1].Rate != 1000 || cs[2].Rate != 16000 {
		t.Errorf("ceilings %v %v %v, want 4000 1000 16000", cs[0].Rate, cs[1].Rate, cs[2].Rate)
	}
	want := "a1000 b1000 c1000 a2000 b2000 c2000 a4000 c4000 a8000 c8000 c16000 c32000"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order\n%s\nwant\n%s", got, want)
	}
}

func round(v float64) float64 { return float64(int64(v + 0.5)) }

func TestSearchIsBoundedAndStopsOnErrors(t *testing.T) {
	s := Search{Start: 1000, Min: 100, Max: 1e12, Factor: 1.5, Refine: 2, MaxSteps: 4}
	f := &fakeSender{ceiling: 1e12}
	c, err := s.Run(context.Background(), f.send)
	if err != nil || len(f.asked) != 4 || round(c.Rate) != 3375 || c.Capped {
		t.Errorf("ceiling %v capped %v after %d steps (%v), want 3375 after 4, not capped", c.Rate, c.Capped, len(f.asked), err)
	}
	f = &fakeSender{ceiling: 1e12, failAt: 2}
	if _, err := s.Run(context.Background(), f.send); err == nil || !strings.Contains(err.Error(), "step at 1,500 req/s: fleet gone") {
		t.Errorf("err = %v, want the step's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f = &fakeSender{ceiling: 1e12}
	if _, err := s.Run(ctx, f.send); !errors.Is(err, context.Canceled) || len(f.asked) != 0 {
		t.Errorf("canceled search: %v after %d steps", err, len(f.asked))
	}
	for _, bad := range []Search{{Start: 0, Min: 1, Max: 1, Factor: 2, MaxSteps: 1}, {Start: 10, Min: 1, Max: 100, Factor: 1, MaxSteps: 1}, {Start: 10, Min: 1, Max: 5, Factor: 2, MaxSteps: 1}} {
		if _, err := bad.Run(context.Background(), f.send); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestJudge(t *testing.T) {
	g := accounting.DefaultGates()
	tests := []struct {
		name string
		st   result.Step
		ok   bool
		why  string
	}{
		{"kept up", result.Step{Rate: 1000, Achieved: 990, Lateness: result.Percentiles{P99: 2 * time.Millisecond}}, true, ""},
		{"errors", result.Step{Rate: 1000, Achieved: 1000, Errors: 3}, false, "3 errors"},
		{"behind", result.Step{Rate: 1000, Achieved: 900}, false, "achieved 900 of 1,000 req/s (< 95 %)"},
		{"late", result.Step{Rate: 1000, Achieved: 1000, Lateness: result.Percentiles{P99: 12 * time.Millisecond}}, false, "generator p99 lateness 12ms > 10ms"},
	}
	for _, tt := range tests {
		st := tt.st
		judge(&st, g)
		if st.Sustained != tt.ok || st.Why != tt.why {
			t.Errorf("%s: sustained %v %q, want %v %q", tt.name, st.Sustained, st.Why, tt.ok, tt.why)
		}
	}
}

func TestInfoField(t *testing.T) {
	if v, err := infoField("# Memory\r\nused_memory:1234\r\nused_memory_human:1.2K\r\n", "used_memory"); err != nil || v != 1234 {
		t.Errorf("used_memory %d (%v), want 1234", v, err)
	}
}

func TestSharedRate(t *testing.T) {
	for _, tt := range []struct{ a, b, floor, want float64 }{
		{4000, 3000, 100, 1500}, {0, 3000, 100, 1500}, {100, 120, 100, 100},
	} {
		if got := sharedRate(tt.a, tt.b, tt.floor); got != tt.want {
			t.Errorf("sharedRate(%v, %v, %v) = %v, want %v", tt.a, tt.b, tt.floor, got, tt.want)
		}
	}
}

// measured is a run as Run would leave it, with round figures.
func measured() result.Bench {
	step := func(rate, p99ms float64) *result.Step {
		return &result.Step{Rate: rate, Achieved: rate, Duration: 5 * time.Second, Answered: int(rate * 5), Sustained: true,
			Latency: result.Percentiles{P99: time.Duration(p99ms * float64(time.Millisecond))}}
	}
	cond := func(mode string) result.Conditions {
		return result.Conditions{Provider: "docker", Network: "host", Replicas: 8, Mode: mode, SyncInterval: 200 * time.Millisecond}
	}
	ceilSteps := []result.Step{{Rate: 1000, Duration: 5 * time.Second, Sustained: true}, {Rate: 1500, Duration: 5 * time.Second}}
	return result.Bench{
		Cores: 2, GoMaxProcs: 2,
		Decisions: []result.DecisionCost{
			{Name: "sliding_window/delayed", NsPerOp: 60, VsRate: 1.2},
			{Name: "token_bucket/split", NsPerOp: 90, VsRate: 1.8},
			{Name: "fixed_window/central", NsPerOp: 40, VsRate: 0.8, AllocsPerOp: 1},
			{Name: RateName, NsPerOp: 50, VsRate: 1},
		},
		Fleets: []result.FleetBench{
			{Name: FleetNoop, Network: "host", Conditions: cond(""), Ceiling: 4000, Steps: ceilSteps, Steady: step(1500, 1.0),
				Rounds: []result.Step{*step(1500, 1.0), *step(1500, 1.2), *step(1500, 0.9)}},
			{Name: FleetVegeta, Network: "host", Conditions: cond(""), Ceiling: 5000, Steps: ceilSteps},
			{Name: FleetDelayed, Network: "host", Conditions: cond("delayed"), Ceiling: 3000, Steps: ceilSteps, Steady: step(1500, 1.3),
				Rounds:         []result.Step{*step(1500, 1.3), *step(1500, 1.2), *step(1500, 1.4)},
				StoreCmdPerSec: 30, StoreCmdPerRequest: 30.0 / 1500},
			{Name: FleetCentral, Network: "host", Conditions: cond("central"), Steady: step(1500, 2),
				StoreCmdPerSec: 1500, StoreCmdPerRequest: 1},
			{Name: FleetPeer, Network: "host", Conditions: cond("peer-gcra"), Ceiling: 2000, Steps: ceilSteps, Steady: step(1500, 2.5),
				StoreCmdPerSec: 1500, StoreCmdPerRequest: 1},
		},
		Profiles: []result.Profile{
			{Name: ProfileHarness, Rate: 4000, CPUPerRequestUs: 110, AllocsPerRequest: 65, AllocBytesPerRequest: 9000, GCShare: 0.1,
				CPU: []result.ProfileFunc{{Function: "internal/runtime/syscall/linux.Syscall6", Flat: 0.36, Cum: 0.36}}},
			{Name: ProfileVegeta, Rate: 4000, CPUPerRequestUs: 100, AllocsPerRequest: 66, AllocBytesPerRequest: 6000, GCShare: 0.04},
		},
		Memory: []result.MemoryLayout{
			{Name: "fixed_window (ours: one hash per client)", Clients: 200_000, Records: 1, UsedDelta: 33_200_000, PerClient: 166, Estimate: 48, EstimateTotal: 9.6e6},
			{Name: "sliding_window, 12 slices (ours: one hash per client)", Clients: 200_000, Records: 12, UsedDelta: 52_000_000, PerClient: 260, Estimate: 576, EstimateTotal: 115.2e6},
		},
	}
}

func TestFiguresJudgeEveryTarget(t *testing.T) {
	b := measured()
	figs := Figures(b)
	want := []struct {
		item   int
		name   string
		value  float64
		status string
	}{
		{1, "decision sliding_window/delayed", 1.2, result.StatusMet},
		{1, "decision token_bucket/split", 1.8, result.StatusNotMet},
		{1, "decision fixed_window/central", 0.8, result.StatusNotMet}, // an allocation
		{1, "decision " + RateName, 1, result.StatusNoTarget},
		{2, "generator ceiling, harness sender / plain Vegeta", 0.8, result.StatusNotMet},
		{2, "generator CPU per request, harness sender / plain Vegeta", 1.1, result.StatusNoTarget},
		{2, "fleet ceiling, delayed / no-op", 0.75, result.StatusNotMet},
		// 30 cmd/s against 1 per request: 1/50 at 1500 req/s; projected with the design's
		// 40/s (8 nodes / 0.2 s), the higher, 1/1000 at HS2's 40,000.
		{3, "store commands/s, delayed / central", 0.001, result.StatusMet},
		{4, "peer ceiling vs ours", 2000, result.StatusNoTarget},
		{4, "peer p99 vs ours", 2.5, result.StatusNoTarget},
		{4, "peer store commands/s vs ours", 1500, result.StatusNoTarget},
		{5, "memory fixed_window (ours: one hash per client)", 166, result.StatusNoTarget},
		{5, "memory sliding_window, 12 slices (ours: one hash per client)", 260, result.StatusMet},
		{6, "p99 added by the limiter (delayed - no-op)", 0.3, result.StatusMet},
	}
	if len(figs) != len(want) {
		t.Fatalf("%d figures, want %d: %+v", len(figs), len(want), figs)
	}
	for i, w := range want {
		f := figs[i]
		if f.Item != w.item || f.Name != w.name || f.Status != w.status || !near(f.Value, w.value) {
			t.Errorf("figure %d: %d %q %v %q, want %d %q %v %q", i, f.Item, f.Name, f.Value, f.Status, w.item, w.name, w.value, w.status)
		}
		if f.Conditions == "" {
			t.Errorf("figure %d (%s) has no conditions", i, f.Name)
		}
	}
	if d := figs[5].Display; d != "110.0 / 100.0 us = 1.10; allocations 65.0 / 66.0, 9000 / 6000 B; GC 10 / 4 % of CPU" {
		t.Errorf("generator cost %q", d)
	}
	b.Baseline = &result.ProfileBaseline{Commit: "c493bf5", Profiles: []result.Profile{{Name: ProfileHarness, CPUPerRequestUs: 121.7, AllocsPerRequest: 96.6, AllocBytesPerRequest: 9287}}}
	if n := Figures(b)[5].Note; !strings.HasSuffix(n, "; before (c493bf5): harness sender 121.7 us, 96.6 allocations, 9287 B a request") {
		t.Errorf("generator cost note %q: want the baseline's figures", n)
	}
	if d := figs[4].Display; d != "4,000 / 5,000 req/s = 0.80" {
		t.Errorf("generator ceiling %q", d)
	}
	if d := figs[7].Display; !strings.Contains(d, "30.0 / 1,500 cmd/s = 1/50 at 1,500 req/s; at HS2 40.0 / 40,000 = 1/1,000") {
		t.Errorf("store figure %q: want the measured ratio and the projection to HS2", d)
	}
	if c := figs[6].Conditions; !strings.Contains(c, "cores 2, docker/host networking, 8 replicas + Redis") || !strings.Contains(c, "1,000✓ 1,500✗") {
		t.Errorf("ceiling conditions %q", c)
	}
	if c := figs[13].Conditions; !strings.Contains(c, "rate asked 1,500 req/s") || !strings.Contains(c, "for 5 s") || !strings.Contains(c, "medians of 3 and 3 runs") {
		t.Errorf("latency conditions %q", c)
	}
}

// A fleet ceiling within 10 % of the generator's (the harness's sender against no-op
// replicas) is the generator's ceiling: GENERATOR-BOUND, never a ratio that passes.
func TestCeilingFigureIsGeneratorBound(t *testing.T) {
	for _, tt := range []struct {
		name             string
		noop, delayed    float64
		noopCapped       bool
		wantStatus, disp string
		value            float64
	}{
		{"the generator's ceiling twice (a search that stopped where the generator did)", 3375, 3375, false, result.StatusGeneratorBound, "3,375 / 3,375 req/s = 1.00: GENERATOR-BOUND", 1},
		{"within 10 %", 4000, 3601, false, result.StatusGeneratorBound, "3,601 / 4,000 req/s = 0.90: GENERATOR-BOUND", 0.90025},
		{"just below 90 %: a real ratio", 4000, 3599, false, result.StatusNotMet, "3,599 / 4,000 req/s = 0.90", 0.89975},
		{"well below: the limiter's own ceiling", 6000, 3000, false, result.StatusNotMet, "3,000 / 6,000 req/s = 0.50", 0.5},
		{"both searches capped: two lower bounds, no ratio", 8000, 8000, true, result.StatusNotMeasured, "8,000+ / 8,000+ req/s = 1.00", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := map[string]*result.FleetBench{
				FleetNoop:    {Name: FleetNoop, Ceiling: tt.noop, Capped: tt.noopCapped},
				FleetDelayed: {Name: FleetDelayed, Ceiling: tt.delayed, Capped: tt.noopCapped},
			}
			f := ceilingFigure(result.Bench{Cores: 2}, fs)
			if f.Status != tt.wantStatus || f.Display != tt.disp || !near(f.Value, tt.value) {
				t.Errorf("got %q %q %v, want %q %q %v", f.Status, f.Display, f.Value, tt.wantStatus, tt.disp, tt.value)
			}
			if bound := tt.wantStatus == result.StatusGeneratorBound; bound != strings.Contains(f.Note, "measured the generator") {
				t.Errorf("note %q", f.Note)
			}
		})
	}
	for _, tt := range []struct {
		fleet, gen float64
		want       bool
	}{{3375, 3375, true}, {3038, 3375, true}, {3037, 3375, false}, {5000, 4000, true}, {100, 0, false}} {
		if got := result.GeneratorBound(tt.fleet, tt.gen); got != tt.want {
			t.Errorf("result.GeneratorBound(%v, %v) = %v, want %v", tt.fleet, tt.gen, got, tt.want)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// A ceiling from a search that stopped at its maximum rate is a lower bound: the ratio is
// met or not met only where the bound settles it.
func TestRatioStatusWithCappedSearches(t *testing.T) {
	for _, tt := range []struct {
		name           string
		value          float64
		numCap, denCap bool
		want           string
	}{
		{"neither capped, met", 0.95, false, false, result.StatusMet},
		{"neither capped, not met", 0.85, false, false, result.StatusNotMet},
		{"both capped (bench on 2 cores: 200+ / 200+)", 1, true, true, result.StatusNotMeasured},
		{"numerator capped: at least the value, met", 0.95, true, false, result.StatusMet},
		{"numerator capped: at least 0.85 settles nothing", 0.85, true, false, result.StatusNotMeasured},
		{"denominator capped: at most 0.85, not met", 0.85, false, true, result.StatusNotMet},
		{"denominator capped: at most 0.95 settles nothing", 0.95, false, true, result.StatusNotMeasured},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, note := ratioStatus(tt.value, 0.9, tt.numCap, tt.denCap)
			if got != tt.want {
				t.Errorf("ratioStatus(%v, 0.9, %v, %v) = %q (%s), want %q", tt.value, tt.numCap, tt.denCap, got, note, tt.want)
			}
			if (tt.numCap || tt.denCap) != (note != "") {
				t.Errorf("note %q", note)
			}
		})
	}
}

func TestFiguresSayWhatWasNotMeasured(t *testing.T) {
	b := measured()
	b.Fleets[3].Error = "start the central fleet: docker down"
	b.Decisions, b.Memory = nil, nil
	figs := Figures(b)
	got := map[string]string{}
	for _, f := range figs {
		got[f.Name] = f.Status + " / " + f.Conditions
	}
	for name, want := range map[string]string{
		"decision cost vs x/time/rate":        result.StatusNotMeasured,
		"store commands/s, delayed / central": result.StatusNotMeasured + " / central: start the central fleet: docker down",
		"store memory per client":             result.StatusNotMeasured,
		"fleet ceiling, delayed / no-op":      result.StatusNotMet,
	} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("%s: %q, want it to start %q", name, got[name], want)
		}
	}
	none := Figures(result.Bench{Cores: 2})
	if len(none) != 7 {
		t.Errorf("an empty run has %d figures, want one per item (6) and the generator's", len(none))
	}
	for _, f := range none {
		if f.Status != result.StatusNotMeasured {
			t.Errorf("empty run: %s is %q", f.Name, f.Status)
		}
	}
}

func TestWriteTable(t *testing.T) {
	b := measured()
	b.Figures = Figures(b)
	b.Errors = []string{"fleets (bridge): docker down"}
	var buf bytes.Buffer
	if err := WriteTable(&buf, b); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "#  figure") || !strings.Contains(lines[0], "conditions") {
		t.Errorf("header %q", lines[0])
	}
	// Rows measured alike share a key; the keys are listed after the table.
	if !strings.Contains(lines[1], "[a]") || !strings.Contains(lines[4], "[a]") || !strings.Contains(lines[5], "[b]") {
		t.Errorf("condition keys:\n%s", out)
	}
	for _, want := range []string{
		"conditions:\n  [a] in-process testing.B",
		"0.75", "not met", "met",
		"note 3 (store commands/s, delayed / central): delayed = 8 nodes / 200ms sync = 40 cmd/s",
		"not measured: fleets (bridge): docker down",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Every row's columns line up: the status column starts at the same offset.
	col := strings.Index(lines[0], "status")
	for _, l := range lines[1 : 1+len(b.Figures)] {
		if len(l) < col || (l[col-1] != ' ' || l[col] == ' ') {
			t.Errorf("row not aligned at column %d: %q", col, l)
		}
	}
	if conditionKey(0) != "a" || conditionKey(25) != "z" || conditionKey(26) != "aa" || conditionKey(27) != "ab" {
		t.Error("condition keys after z")
	}
}

// The local decision path allocates nothing, and its cost comes out as a ratio to
// x/time/rate measured in the same run.
func TestDecisionsReportRatioAndAllocations(t *testing.T) {
	got := Decisions("sliding_window/delayed")
	if len(got) != 2 || got[0].Name != "sliding_window/delayed" || got[1].Name != RateName {
		t.Fatalf("cases %+v, want sliding_window/delayed and %s", got, RateName)
	}
	for _, d := range got {
		if d.NsPerOp <= 0 || d.N == 0 || d.VsRate <= 0 || d.AllocsPerOp != 0 {
			t.Errorf("%+v: want a positive cost, a ratio and zero allocations", d)
		}
	}
	if got[1].VsRate != 1 {
		t.Errorf("x/time/rate against itself: %v", got[1].VsRate)
	}
}

// Each layout is loaded into a real redis-server and measured: ours keeps a 12-slice client
// in one small hash, far below the document's twelve keys.
func TestMemoryMeasuresEveryLayout(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not found on PATH; CI must install it")
		}
		t.Skip("redis-server not found on PATH: install it (apt-get install -y redis-server)")
	}
	ls, err := Memory(context.Background(), "", 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 7 {
		t.Fatalf("%d layouts, want 7", len(ls))
	}
	ours, marked, within, hot, doc := ls[2], ls[3], ls[4], ls[5], ls[6]
	for _, l := range ls {
		t.Logf("%s: %d records, %.0f B per client (used_memory), %.0f B (MEMORY USAGE)", l.Name, l.Records, l.PerClient, l.SampleUsage)
		if l == within {
			continue
		}
		if l.Clients != 2000 || l.PerClient <= 0 || l.SampleUsage <= 0 || l.Samples == 0 || l.Estimate != float64(48*l.Records) || l.Keys < 2000 {
			t.Errorf("%+v", l)
		}
	}
	if ours.Records != 12 || doc.Records != 12 || ours.SampleUsage*3 > doc.SampleUsage {
		t.Errorf("12-slice client: ours %.0f B (MEMORY USAGE), the document's layout %.0f B: want ours under a third", ours.SampleUsage, doc.SampleUsage)
	}
	// Eight push marks of about 20 B each on top of the slices, still under the document's.
	if extra := marked.SampleUsage - ours.SampleUsage; extra < 8*10 || extra > 8*40 || marked.SampleUsage > doc.SampleUsage {
		t.Errorf("12-slice client pushed by 8 replicas: %.0f B, without marks %.0f B, the document's %.0f B: want 8 marks of 10-40 B each, under the document's",
			marked.SampleUsage, ours.SampleUsage, doc.SampleUsage)
	}
	// The bounded design keeps nothing of a client within its budgets (the epoch key only;
	// what used_memory gains is the scripts' cache, whatever the clients), and a few hundred
	// fields of one at its limit: far more than the document's 12 slices.
	if within.Clients != 2000 || within.Records != 0 || within.Keys != 1 || within.UsedDelta > 64<<10 || within.SampleUsage != 0 {
		t.Errorf("bounded, within the budgets: %+v; want nothing kept per client", within)
	}
	if hot.Records != 600 || hot.SampleUsage < 20*doc.SampleUsage {
		t.Errorf("bounded, a client at its limit: %d records, %.0f B; want 600 sub-slices, far over the document's %.0f B", hot.Records, hot.SampleUsage, doc.SampleUsage)
	}
}

// The latency figure is the median of each fleet's runs at a rate, beside the no-op
// fleet's own spread; it says when the added p99 is within that spread, and when it falls
// with the rate by more than the spread.
func TestLatencyFiguresTakeMediansAndShowTheSpread(t *testing.T) {
	run := func(rate float64, p99ms ...float64) []result.Step {
		var out []result.Step
		for _, v := range p99ms {
			out = append(out, result.Step{Rate: rate, Achieved: rate, Duration: 5 * time.Second, Sustained: true,
				Latency: result.Percentiles{P50: time.Millisecond, P99: time.Duration(v * float64(time.Millisecond))}})
		}
		return out
	}
	for _, tt := range []struct {
		name            string
		noop, delayed   []result.Step
		status, display []string
		notes           []string // a substring of each row's note; "" for none
	}{
		{"above the target but within the spread",
			run(1500, 1.0, 2.0, 1.2), run(1500, 1.8, 1.9, 3.0),
			[]string{result.StatusNotMet}, []string{"1.90 - 1.20 = +0.70 ms (p50 +0.00 ms); no-op's own p99 1.00 to 2.00 ms: a spread of 1.00 ms"},
			[]string{"cannot resolve 0.5 ms"}},
		{"met", run(1500, 1.0, 1.1, 1.2), run(1500, 1.3, 1.4, 9.0),
			[]string{result.StatusMet}, []string{"1.40 - 1.10 = +0.30 ms (p50 +0.00 ms); no-op's own p99 1.00 to 1.20 ms: a spread of 0.20 ms"},
			[]string{""}},
		{"falls with the rate by more than the spread",
			append(run(1500, 1.0, 1.1, 1.2), run(750, 0.8, 0.9, 0.8)...), append(run(1500, 3.0, 3.1, 3.2), run(750, 1.0, 0.9, 0.9)...),
			[]string{result.StatusNotMet, result.StatusNoTarget},
			[]string{"3.10 - 1.10 = +2.00 ms (p50 +0.00 ms); no-op's own p99 1.00 to 1.20 ms: a spread of 0.20 ms",
				"0.90 - 0.80 = +0.10 ms (p50 +0.00 ms); no-op's own p99 0.80 to 0.90 ms: a spread of 0.10 ms"},
			[]string{"", "falls from +2.00 ms at 1,500 req/s to +0.10 ms here"}},
		{"the same at both rates", append(run(1500, 1.0, 1.1, 1.2), run(750, 0.8, 0.9, 0.8)...), append(run(1500, 2.0, 2.1, 2.2), run(750, 1.8, 1.7, 1.9)...),
			[]string{result.StatusNotMet, result.StatusNoTarget}, nil, []string{"", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := map[string]*result.FleetBench{
				FleetNoop:    {Name: FleetNoop, Rounds: tt.noop},
				FleetDelayed: {Name: FleetDelayed, Rounds: tt.delayed},
			}
			got := latencyFigures(result.Bench{Cores: 2}, fs)
			if len(got) != len(tt.status) {
				t.Fatalf("%d rows, want %d: %+v", len(got), len(tt.status), got)
			}
			for i, f := range got {
				if f.Status != tt.status[i] || (tt.display != nil && f.Display != tt.display[i]) {
					t.Errorf("row %d: got %q %q, want %q %q", i, f.Status, f.Display, tt.status[i], tt.display)
				}
				if (tt.notes[i] == "") != (f.Note == "") || !strings.Contains(f.Note, tt.notes[i]) {
					t.Errorf("row %d: note %q, want it to say %q", i, f.Note, tt.notes[i])
				}
			}
		})
	}
	if got := latencyFigures(result.Bench{}, map[string]*result.FleetBench{FleetNoop: {Name: FleetNoop}, FleetDelayed: {Name: FleetDelayed}}); len(got) != 1 || got[0].Status != result.StatusNotMeasured {
		t.Errorf("no rounds: %+v, want one row not measured", got)
	}
}

func TestLatencyRates(t *testing.T) {
	for _, tt := range []struct {
		shared, floor float64
		want          []float64
	}{
		{1688, 100, []float64{1688, 844}},
		{150, 100, []float64{150, 100}},
		{100, 100, []float64{100}},
	} {
		if got := latencyRates(tt.shared, tt.floor); !slices.Equal(got, tt.want) {
			t.Errorf("latencyRates(%v, %v) = %v, want %v", tt.shared, tt.floor, got, tt.want)
		}
	}
}

// Plain Vegeta sustaining no step leaves the generator's ratio not measured, and the
// profiles' cost per request still reported.
func TestGeneratorFiguresWithoutVegetasCeiling(t *testing.T) {
	b := measured()
	b.Fleets[1].Ceiling = 0
	figs := generatorFigures(b, map[string]*result.FleetBench{FleetNoop: &b.Fleets[0], FleetVegeta: &b.Fleets[1]})
	if len(figs) != 2 || figs[0].Status != result.StatusNotMeasured || !strings.HasPrefix(figs[0].Conditions, "plain Vegeta sustained no step") ||
		figs[1].Status != result.StatusNoTarget || !near(figs[1].Value, 1.1) {
		t.Errorf("figures %+v: want the ratio not measured and the cost 1.10", figs)
	}
}
