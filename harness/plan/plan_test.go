package plan

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// truth are the costs the synthetic slice runs below are made of: busy cores = fixed + a
// cost a request + a cost a request past a budget; the generator's a cost a request and one
// a request for each core the replica and Redis keep busy beside it.
var truth = struct{ gen0, gen1, gen2, rep0, rep1, rep2, red0, red2 float64 }{
	gen0: 0.05, gen1: 100e-6, gen2: 20e-6, rep0: 0.02, rep1: 40e-6, rep2: 300e-6, red0: 0.004, red2: 60e-6,
}

// run is a slice run of the bounded design at rate from clients at node 0 of 8, whose busy
// cores are what truth makes of its traffic, as a run measures them.
func run(t *testing.T, rate float64, clients int) Input {
	t.Helper()
	tr := schedule.Slice{TimeScale: 0.2, Rate: rate, Clients: clients, Node: 0, Nodes: 8, Duration: 12 * time.Second, Seed: 7}
	past, err := PastBudget(tr)
	if err != nil {
		t.Fatal(err)
	}
	n := int(12 * rate)
	rep := truth.rep0 + truth.rep1*rate + truth.rep2*rate*past
	red := truth.red0 + truth.red2*rate*past
	gen := truth.gen0 + truth.gen1*rate + truth.gen2*rate*(rep+red)
	b := result.Bench{Commit: "abc123", Cores: 2, StartedAt: time.Unix(int64(rate)+int64(clients), 0),
		Slice: &result.SliceBench{Traffic: tr, Rate: rate, StoreCPU: 0.125, Systems: []result.FleetBench{{Name: "bounded",
			Steady:    &result.Step{Rate: rate, Achieved: rate, Duration: 12 * time.Second, Requests: n, Answered: n, Sustained: true, Seed: 7},
			Replica:   &result.ProcessCost{Cores: rep, RSSBefore: 20 << 20, RSSPerClient: 500},
			Generator: &result.ProcessCost{Cores: gen},
			StoreCPU:  &result.StoreCPU{Percent: 100 * red}, StoreCmdPerRequest: past,
			StoreMemory: &result.StoreMemory{PerClient: 30},
		}}}}
	return Input{File: fmt.Sprintf("runs/c%d-r%.0f/bench.json", clients, rate), Bench: b}
}

// runs are slice runs at each rate from 25,000 clients (kept on one node) and 200,000
// (spread over the nodes).
func runs(t *testing.T, rates ...float64) []Input {
	var out []Input
	for _, c := range []int{25_000, 200_000} {
		for _, r := range rates {
			out = append(out, run(t, r, c))
		}
	}
	return out
}

// Runs whose costs are a fixed part plus costs a request and a request past a budget give
// back those costs, each part's, to the last digit.
func TestFitCostsRecoversEveryPart(t *testing.T) {
	c, err := FitCosts(runs(t, 1000, 2000, 3000), "bounded", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Fit
		want map[Term]float64
	}{
		{"generator", c.Generator, map[Term]float64{Fixed: truth.gen0, PerRequest: truth.gen1, PerRequestBeside: truth.gen2}},
		{"replica", c.Replica, map[Term]float64{Fixed: truth.rep0, PerRequest: truth.rep1, PerPastBudget: truth.rep2}},
		{"Redis", c.Redis, map[Term]float64{Fixed: truth.red0, PerPastBudget: truth.red2}},
	} {
		if len(tc.f.Terms) != len(tc.want) || tc.f.Points != 6 || tc.f.Worst > 1e-9 {
			t.Errorf("%s: %v over %d points, worst %.2g; want %d terms over 6, exact", tc.name, tc.f.Terms, tc.f.Points, tc.f.Worst, len(tc.want))
		}
		for term, w := range tc.want {
			if g := tc.f.Coefficient(term); math.Abs(g-w) > 1e-9*math.Max(1, w) {
				t.Errorf("%s %s: %.6g, want %.6g", tc.name, term, g, w)
			}
		}
	}
	if !c.HasRedis || c.Nodes != 8 || c.TimeScale != 0.2 || c.Steady != 12*time.Second {
		t.Errorf("costs' conditions: %+v", c)
	}
}

// The fit keeps only the terms its runs can tell apart, and no cost that falls as its load
// grows: one run, or runs all at one rate, give a cost a request; a per-past-budget cost
// the runs say is negative is left out, and so is one whose load the runs hardly change;
// it weighs each run's error relative to its measure.
func TestFitKeepsOnlyWhatTheRunsShow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		loads     []Load
		cores     []float64
		terms     []Term
		wantTerms []Term
		wantCoef  []float64
	}{
		{"one run", []Load{{Rate: 1000}}, []float64{0.1}, []Term{Fixed, PerRequest}, []Term{PerRequest}, []float64{100e-6}},
		{"one rate", []Load{{Rate: 1000, Past: 0.1}, {Rate: 1000, Past: 0.01}}, []float64{0.1, 0.1}, []Term{Fixed, PerRequest}, []Term{PerRequest}, []float64{100e-6}},
		{"a cost that falls", []Load{{Rate: 1000, Past: 0.01}, {Rate: 2000, Past: 0.1}, {Rate: 3000, Past: 0.02}},
			[]float64{0.11, 0.12, 0.31}, []Term{Fixed, PerRequest, PerPastBudget}, []Term{Fixed, PerRequest}, nil},
		{"fixed and a request", []Load{{Rate: 1000}, {Rate: 3000}}, []float64{0.15, 0.35}, []Term{Fixed, PerRequest}, []Term{Fixed, PerRequest}, []float64{0.05, 100e-6}},
		// 200,000 clients at a node: the store calls a second are the probes' at every rate,
		// so the fixed part is not told from them, and the calls carry Redis's whole cost.
		{"a load the runs hardly span", []Load{{Rate: 1000, Past: 0.0732}, {Rate: 3000, Past: 0.0244}, {Rate: 5000, Past: 0.01464}},
			[]float64{0.014, 0.020, 0.016}, []Term{Fixed, PerPastBudget}, []Term{PerPastBudget},
			[]float64{(1/0.014 + 1/0.020 + 1/0.016) / (73.2 * (1/0.014/0.014 + 1/0.020/0.020 + 1/0.016/0.016))}},
		// The generator's cost a request where the replica and Redis beside it keep 0.1, 0.2
		// and 0.4 cores busy: 100 us a request for each busy core beside it, less 10 us a
		// request; the cost a request that falls is left out.
		{"a cost a request that falls beside the cores beside it", []Load{{Rate: 1000, Beside: 0.1}, {Rate: 2000, Beside: 0.2}, {Rate: 3000, Beside: 0.4}},
			[]float64{0.10, 0.12, 0.19}, []Term{Fixed, PerRequest, PerRequestBeside}, []Term{Fixed, PerRequestBeside}, nil},
		// Two runs cannot tell a cost beside the other parts' cores from a cost a request: it
		// goes first, and they give a fixed part and a cost a request.
		{"two runs and the cores beside them", []Load{{Rate: 1000, Beside: 0.1}, {Rate: 3000, Beside: 0.3}}, []float64{0.15, 0.35},
			[]Term{Fixed, PerRequest, PerRequestBeside}, []Term{Fixed, PerRequest}, []float64{0.05, 100e-6}},
		{"the cores beside it", []Load{{Rate: 1000, Beside: 0.1}, {Rate: 2000, Beside: 0.2}, {Rate: 3000, Beside: 0.4}},
			[]float64{0.11, 0.14, 0.22}, []Term{Fixed, PerRequestBeside}, []Term{Fixed, PerRequestBeside}, []float64{0.1, 100e-6}},
		// Least squares on the relative error: c = Σ(x/y) / Σ(x/y)², not Σxy / Σx².
		{"the relative error", []Load{{Rate: 1000}, {Rate: 2000}, {Rate: 3000}}, []float64{0.1, 0.2, 0.6}, []Term{PerRequest}, []Term{PerRequest}, []float64{2.5e4 / 2.25e8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fit(tc.loads, tc.cores, tc.terms)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(f.Terms) != fmt.Sprint(tc.wantTerms) {
				t.Fatalf("terms %v, want %v", f.Terms, tc.wantTerms)
			}
			for i, w := range tc.wantCoef {
				if math.Abs(f.Coef[i]-w) > 1e-9 {
					t.Errorf("%s: %.6g, want %.6g", f.Terms[i], f.Coef[i], w)
				}
			}
		})
	}
	if _, err := fit(nil, nil, []Term{Fixed}); err == nil {
		t.Error("a fit of no run gave no error")
	}
}

// A node decides a client alone up to its budget of the client's requests in a window; the
// requests after it are the store's.
func TestPastBudgetCountsTheStoresRequests(t *testing.T) {
	const w = 12 * time.Second
	sched := func(ats ...[]time.Duration) schedule.Schedule {
		var s schedule.Schedule
		for c, as := range ats {
			s.Clients = append(s.Clients, schedule.Client{ID: fmt.Sprint(c), Limit: 5})
			for _, a := range as {
				s.Requests = append(s.Requests, schedule.Request{At: a, Client: int32(c)})
			}
		}
		// in time order, as a schedule is
		for i := range s.Requests {
			for j := i + 1; j < len(s.Requests); j++ {
				if s.Requests[j].At < s.Requests[i].At {
					s.Requests[i], s.Requests[j] = s.Requests[j], s.Requests[i]
				}
			}
		}
		return s
	}
	s := time.Second
	for _, tc := range []struct {
		name string
		s    schedule.Schedule
		want float64
	}{
		{"five in a window, budget 3", sched([]time.Duration{0, s, 2 * s, 3 * s, 4 * s}), 2.0 / 5},
		{"a window apart", sched([]time.Duration{0, w, 2 * w, 3 * w, 4 * w}), 0},
		{"the first leaves the window", sched([]time.Duration{0, s, 2 * s, w + s/2}), 0},
		{"two clients, one past", sched([]time.Duration{0, s, 2 * s, 3 * s}, []time.Duration{0, s, 2 * s}), 1.0 / 7},
		{"past its limit: refused without the store", sched([]time.Duration{0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s}), 2.0 / 7},
		{"nothing sent", sched(), 0},
	} {
		if g := pastBudget(tc.s, w, 3); math.Abs(g-tc.want) > 1e-12 {
			t.Errorf("%s: %.4f past a budget, want %.4f", tc.name, g, tc.want)
		}
	}
	// The slice's own traffic: the same rate from fewer clients passes more budgets.
	sticky, err := PastBudget(schedule.Slice{TimeScale: 0.2, Rate: 5000, Clients: 25_000, Nodes: 8, Duration: w, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	spread, err := PastBudget(schedule.Slice{TimeScale: 0.2, Rate: 5000, Clients: 200_000, Nodes: 8, Duration: w, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !(sticky > 2*spread && sticky > 0.01) {
		t.Errorf("5,000 req/s at a node: %.4f past a budget from 25,000 clients, %.4f from 200,000", sticky, spread)
	}
}

// HS2 from the fitted costs: every part is the fit read at the fleet's load, and the
// balancer changes Redis's size, not the rest.
func TestMakeSizesEveryPartForItsBalancer(t *testing.T) {
	c, err := FitCosts(runs(t, 1000, 2000, 3000, 5000), "bounded", false)
	if err != nil {
		t.Fatal(err)
	}
	redis := map[bool]float64{}
	for _, sticky := range []bool{false, true} {
		p, err := Make(c, Ask{Rate: 40_000, Replicas: 8, Clients: 200_000, Sticky: sticky, System: "bounded", Utilisation: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		clients := 200_000
		if sticky {
			clients = 25_000
		}
		past, err := PastBudget(schedule.Slice{TimeScale: 0.2, Rate: 5000, Clients: clients, Nodes: 8, Duration: 12 * time.Second, Seed: planSeed})
		if err != nil {
			t.Fatal(err)
		}
		if p.ClientsAt != clients || math.Abs(p.Load.Past-past) > 1e-12 {
			t.Errorf("sticky %v: %d clients at a replica, %.4f past, want %d and %.4f", sticky, p.ClientsAt, p.Load.Past, clients, past)
		}
		// 7 shards: 7 × 0.05 fixed + 40,000 × (100 us + 20 us for each core a replica and
		// Redis's share keep busy at a replica's load) = 4.54 or 4.76 busy cores, under 70 % of 7.
		each := truth.rep0 + truth.rep1*5000 + truth.rep2*5000*past
		beside := each + truth.red0 + truth.red2*5000*past
		if math.Abs(p.Load.Beside-beside) > 1e-9 || !strings.Contains(p.Parts[0].Note, fmt.Sprintf("read beside %.2f busy cores", beside)) {
			t.Errorf("sticky %v: the generator read beside %.4f busy cores (%s), want %.4f", sticky, p.Load.Beside, p.Parts[0].Note, beside)
		}
		want := []struct {
			name  string
			count int
			busy  float64
		}{
			{"generator shards", 7, 7*truth.gen0 + 40_000*(truth.gen1+truth.gen2*beside)},
			{"replicas", 8, 8 * each},
			{"Redis", 1, 8*truth.red0 + truth.red2*40_000*past},
		}
		if len(p.Parts) != len(want) {
			t.Fatalf("%d parts: %+v", len(p.Parts), p.Parts)
		}
		for i, w := range want {
			g := p.Parts[i]
			if g.Name != w.name || g.Count != w.count || math.Abs(g.Busy-w.busy) > 1e-9 {
				t.Errorf("sticky %v, part %d: %s ×%d busy %.4f; want %s ×%d busy %.4f", sticky, i, g.Name, g.Count, g.Busy, w.name, w.count, w.busy)
			}
		}
		if rep := p.Parts[1]; rep.Cores != 8 || rep.Memory != 8*(20<<20+500*float64(clients)) {
			t.Errorf("sticky %v: replicas on %.0f cores with %.0f B", sticky, rep.Cores, rep.Memory)
		}
		redis[sticky] = p.Parts[2].Busy
		if p.Cores != 7+8+1+1 || p.Machine != 32 {
			t.Errorf("sticky %v: %.0f cores on a %d-core machine, want 17 on 32", sticky, p.Cores, p.Machine)
		}
		var w bytes.Buffer
		if err := Write(&w, p); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(w.String(), "\n")
		for _, s := range []string{"Plan: 40,000 req/s over 8 replicas, 200,000 clients", "fitted to the runs of --from", "1,000..5,000 req/s from 25,000 (a sticky balancer's share of 200,000) and 200,000 (a spreading balancer's) clients at one replica of 8", "commit abc123, 2-core machine"} {
			if !strings.Contains(first, s) {
				t.Errorf("the plan's first line lacks %q:\n%s", s, first)
			}
		}
		if !strings.Contains(w.String(), "runs/c25000-r5000/bench.json") || !strings.Contains(w.String(), "a request past a budget") {
			t.Errorf("the plan does not show its fit and runs:\n%s", w.String())
		}
	}
	if !(redis[true] > 2*redis[false]) {
		t.Errorf("Redis busy %.3f behind a sticky balancer, %.3f behind a spreading one: want the sticky one's far more", redis[true], redis[false])
	}
}

// Redis runs on one thread: a plan that keeps more than one core of it busy asks for
// Cluster masters and says why; and a plan past what the runs measured says so.
func TestMakeSaysWhenOneRedisCoreIsNotEnough(t *testing.T) {
	ins := runs(t, 1000, 2000, 3000)
	for _, in := range ins {
		in.Bench.Slice.Systems[0].StoreCPU.Percent *= 20
	}
	c, err := FitCosts(ins, "bounded", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(c, Ask{Rate: 40_000, Replicas: 8, Clients: 200_000, Sticky: true, System: "bounded", Utilisation: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Parts[2]
	want := int(math.Ceil(r.Busy / 0.7))
	if r.Name != "Redis Cluster masters" || r.Count != want || r.Count < 2 || !strings.Contains(r.Note, "one Redis core is not enough") {
		t.Errorf("%s ×%d (%.2f busy): %s; want %d masters", r.Name, r.Count, r.Busy, r.Note, want)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "each replica would carry 5,000 req/s, past the 3,000 req/s the runs with 25,000 clients at a node reached") {
		t.Errorf("notes: %s", notes)
	}
}

// A plan rests only on runs that sent their traffic in full with the store: the others are
// left out and named, a set with none left is refused.
func TestFitCostsLeavesOutFailedRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(b *result.Bench)
		skipped string // "" when the run is kept
	}{
		{"answers without the store", func(b *result.Bench) {
			st := b.Slice.Systems[0].Steady
			st.Sustained, st.Degraded, st.Why = false, 527, "527 decisions without the store (failed open)"
		}, "failed (527 decisions without the store (failed open))"},
		{"short of its rate", func(b *result.Bench) { b.Slice.Systems[0].Steady.Achieved = 1800 }, "failed"},
		{"replica CPU not read", func(b *result.Bench) {
			b.Slice.Systems[0].Replica, b.Slice.Systems[0].ReplicaWhy = nil, "no /proc"
		}, "replica CPU was not measured (no /proc)"},
		{"no such system", func(b *result.Bench) { b.Slice.Systems[0].Name = "document" }, `no system "bounded": it measured document`},
		{"sent late, in full", func(b *result.Bench) {
			st := b.Slice.Systems[0].Steady
			st.Sustained, st.Lateness.P99, st.Why = false, 60*time.Millisecond, "generator p99 lateness 60ms > 10ms"
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins := runs(t, 1000, 2000, 3000)
			tc.edit(&ins[1].Bench)
			c, err := FitCosts(ins, "bounded", false)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Make(c, Ask{Rate: 40_000, Replicas: 8, Clients: 200_000, System: "bounded", Utilisation: 0.7})
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(p.Notes, "\n")
			if tc.skipped == "" {
				if len(c.Points) != 6 || !strings.Contains(notes, "1 of the 6 runs were sent late") || !strings.Contains(notes, "runs/c25000-r2000/bench.json (60ms)") {
					t.Errorf("%d points; notes: %s", len(c.Points), notes)
				}
				return
			}
			if len(c.Points) != 5 || !strings.Contains(notes, "left out: runs/c25000-r2000/bench.json") || !strings.Contains(notes, tc.skipped) {
				t.Errorf("%d points; notes: %s", len(c.Points), notes)
			}
		})
	}
	ins := runs(t, 1000)
	for _, in := range ins {
		in.Bench.Slice.Systems[0].Steady.Errors = 3
	}
	if _, err := FitCosts(ins, "bounded", false); err == nil || !strings.Contains(err.Error(), "no run of 2 runs in runs (commit abc123, 2-core machine) can be planned from") {
		t.Errorf("a set of failed runs: %v", err)
	}
	ins = runs(t, 1000, 2000)
	ins[1].Bench.Slice.Traffic.TimeScale = 1
	if _, err := FitCosts(ins, "bounded", false); err == nil || !strings.Contains(err.Error(), "plan from runs made alike") {
		t.Errorf("runs at two time scales: %v", err)
	}
	if _, err := Make(Costs{}, Ask{Rate: 40_000, Replicas: 8, Clients: 4, Sticky: true, Utilisation: 0.7}); err == nil || !strings.Contains(err.Error(), "4 clients leave some of 8 replicas none") {
		t.Errorf("a sticky plan with fewer clients than replicas: %v", err)
	}
}

// The check plans another run's rate from the costs and says, part by part, whether the
// prediction is within 15 % of what the run measured: a run the costs hold for is, one
// whose replica cost a quarter more is not, and a run the costs were fitted to checks
// nothing.
func TestCheckAgainstARunSaysWithinOrOutside(t *testing.T) {
	ins := runs(t, 1000, 2000, 3000)
	c, err := FitCosts(ins, "bounded", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		edit    func(b *result.Bench)
		outside []string
	}{
		{"as fitted", func(*result.Bench) {}, nil},
		{"the replica costs a quarter more", func(b *result.Bench) { b.Slice.Systems[0].Replica.Cores *= 1.25 }, []string{"replica"}},
		{"Redis is twice as busy", func(b *result.Bench) { b.Slice.Systems[0].StoreCPU.Percent *= 2 }, []string{"Redis"}},
		{"the generator costs 14 % less", func(b *result.Bench) { b.Slice.Systems[0].Generator.Cores /= 1.14 }, nil},
		{"the generator costs a quarter more", func(b *result.Bench) { b.Slice.Systems[0].Generator.Cores *= 1.25 }, []string{"generator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := run(t, 4000, 25_000)
			tc.edit(&other.Bench)
			ch, err := CheckAgainst(c, other)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ch.Outside) != fmt.Sprint(tc.outside) || len(ch.Parts) != 3 {
				t.Errorf("outside %v (%s) over %d parts, want %v", ch.Outside, ch.Off(), len(ch.Parts), tc.outside)
			}
			var w bytes.Buffer
			if err := WriteCheck(&w, ch); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(w.String(), "OUTSIDE 15 %"); n != len(tc.outside) || !strings.Contains(w.String(), "planned at 4,000 req/s from 25,000 clients for one replica of 8") {
				t.Errorf("%d parts outside in the table, want %d:\n%s", n, len(tc.outside), w.String())
			}
		})
	}
	if _, err := CheckAgainst(c, ins[2]); err == nil || !strings.Contains(err.Error(), "one of the runs the costs were fitted to") {
		t.Errorf("a check against a fitted run: %v", err)
	}
}
