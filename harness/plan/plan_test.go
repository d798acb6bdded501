package plan

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// slice is a slice run of the bounded design at rate: 100 us of generator CPU a request, 40
// us of replica CPU a decision, 10 us of Redis CPU a request, 0.05 round trips a request;
// the cores each kept busy are what those costs make of the rate, as a run measures them.
func slice(rate float64) result.Bench {
	n := int(12 * rate)
	busy := func(us float64) *result.ProcessCost {
		return &result.ProcessCost{CPUPerRequestUs: us, Cores: rate * us / 1e6, RSSBefore: 20 << 20, RSSPerClient: 500}
	}
	return result.Bench{Commit: "abc123", Slice: &result.SliceBench{
		Traffic: schedule.Slice{Rate: 5000, Clients: 25_000, Nodes: 8, TimeScale: 0.2}, Rate: rate, StoreCPU: 0.125,
		Systems: []result.FleetBench{{Name: "bounded", Ceiling: 6000,
			Steady:    &result.Step{Rate: rate, Achieved: rate, Duration: 12 * time.Second, Requests: n, Answered: n, Sustained: true},
			Replica:   busy(40),
			Generator: busy(100),
			StoreCPU:  &result.StoreCPU{Percent: 100 * rate * 10 / 1e6, MsPerKiloRequest: 10}, StoreCmdPerRequest: 0.05,
			StoreMemory: &result.StoreMemory{PerClient: 30},
		}},
	}}
}

// HS2 from a slice: 40,000 req/s × 100 us = 4 busy cores of sending, 6 shards at 70 %;
// 5,000 req/s a replica × 40 us = 0.2 of a core, one core each; Redis 0.4 of a core, one.
func TestMakeSizesEveryPartFromItsCost(t *testing.T) {
	p, err := Make(slice(5000), "low/bench.json", Ask{Rate: 40_000, Replicas: 8, Clients: 200_000, System: "bounded", Utilisation: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name        string
		count       int
		busy, cores float64
		memory      float64
	}{
		{"generator shards", 6, 4, 6, 0},
		{"replicas", 8, 1.6, 8, 8 * (20<<20 + 500*200_000)},
		{"Redis", 1, 0.4, 1, 30 * 200_000},
	}
	if len(p.Parts) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(p.Parts), len(want), p.Parts)
	}
	for i, w := range want {
		g := p.Parts[i]
		if g.Name != w.name || g.Count != w.count || math.Abs(g.Busy-w.busy) > 1e-9 || g.Cores != w.cores || g.Memory != w.memory {
			t.Errorf("part %d: %s ×%d busy %.3f cores %.0f memory %.0f; want %s ×%d busy %.3f cores %.0f memory %.0f",
				i, g.Name, g.Count, g.Busy, g.Cores, g.Memory, w.name, w.count, w.busy, w.cores, w.memory)
		}
		for _, c := range g.Costs {
			if !strings.HasPrefix(c.From, "low/bench.json, bounded, ") || !strings.Contains(c.From, "steady run at 5,000 req/s") {
				t.Errorf("%s: cost %+v does not say where it came from", g.Name, c)
			}
		}
	}
	if p.Cores != 16 || p.Machine != 16 {
		t.Errorf("%.0f cores on a %d-core machine, want 16 on 16", p.Cores, p.Machine)
	}
	var w bytes.Buffer
	if err := Write(&w, p); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Plan: 40,000 req/s over 8 replicas", "at 5,000 req/s from 25,000 clients)", "machine: 16 cores", "a 16-core machine", "40 us CPU a decision", "commit abc123"} {
		if !strings.Contains(w.String(), s) {
			t.Errorf("the plan lacks %q:\n%s", s, w.String())
		}
	}
}

// Redis runs on one thread: a plan that keeps more than one core of it busy asks for masters.
func TestMakeSplitsABusyRedis(t *testing.T) {
	b := slice(5000)
	b.Slice.Systems[0].StoreCPU.MsPerKiloRequest = 50 // 2 cores at 40,000 req/s
	p, err := Make(b, "f", Ask{Rate: 40_000, Replicas: 8, Clients: 1, System: "bounded", Utilisation: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Parts[2]
	if r.Name != "Redis Cluster masters" || r.Count != 3 || r.Cores != 3 {
		t.Errorf("%s ×%d on %.0f cores, want 3 Redis Cluster masters", r.Name, r.Count, r.Cores)
	}
}

// A plan rests only on measured costs of sustained runs, and says what a fleet would do past
// what one replica was seen to carry.
func TestMakeRefusesVoidCosts(t *testing.T) {
	ask := Ask{Rate: 40_000, Replicas: 8, Clients: 1, System: "bounded", Utilisation: 0.7}
	for _, tt := range []struct {
		name string
		edit func(b *result.Bench, a *Ask)
		want string
	}{
		{"not a slice", func(b *result.Bench, _ *Ask) { b.Slice = nil }, "holds no slice"},
		{"no such system", func(_ *result.Bench, a *Ask) { a.System = "gubernator" }, `no system "gubernator": it measured bounded`},
		{"late steady run", func(b *result.Bench, _ *Ask) {
			st := b.Slice.Systems[0].Steady
			st.Sustained, st.Why = false, "generator p99 lateness 31ms > 10ms"
		}, "was not sustained (generator p99 lateness 31ms > 10ms)"},
		{"replica CPU not read", func(b *result.Bench, _ *Ask) {
			b.Slice.Systems[0].Replica, b.Slice.Systems[0].ReplicaWhy = nil, "no /proc"
		}, "replica CPU was not measured (no /proc)"},
		{"no utilisation", func(_ *result.Bench, a *Ask) { a.Utilisation = 0 }, "--utilisation must be in (0, 1]"},
	} {
		b, a := slice(5000), ask
		tt.edit(&b, &a)
		if _, err := Make(b, "f", a); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	p, err := Make(slice(5000), "f", Ask{Rate: 40_000, Replicas: 4, Clients: 1, System: "bounded", Utilisation: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "10,000 req/s, above the 6,000 req/s one was seen to sustain") || !strings.Contains(notes, "one of 8 nodes; a fleet of 4") {
		t.Errorf("notes: %s", notes)
	}
	b := slice(5000)
	b.Slice.Systems[0].Steps = []result.Step{{Rate: 6000, Sustained: true}}
	if p, err = Make(b, "f", Ask{Rate: 40_000, Replicas: 4, Clients: 1, System: "bounded", Utilisation: 0.7}); err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "stopped while still climbing at 6,000 req/s") || strings.Contains(notes, "add replicas") {
		t.Errorf("a search still climbing is no ceiling: notes %s", notes)
	}
}

// The check plans the other run's rate from the first run's costs: where the costs hold,
// each part's busy cores come out as measured; where one changed with the rate, the error
// says by how much.
func TestCheckPutsThePlanBesideAnotherRun(t *testing.T) {
	low, high := slice(1000), slice(4000)
	high.Slice.Systems[0].Replica.Cores *= 0.8 // the replica batches better at the higher rate
	p, checks, err := Check(low, "low", high, "high", "bounded")
	if err != nil {
		t.Fatal(err)
	}
	if p.Ask.Rate != 4000 || p.Ask.Replicas != 1 {
		t.Errorf("planned %v req/s over %d replicas, want the other run's 4,000 over 1", p.Ask.Rate, p.Ask.Replicas)
	}
	want := map[string][3]float64{"generator shards": {0.4, 0.4, 0}, "replicas": {0.16, 0.128, 0.25}, "Redis": {0.04, 0.04, 0}}
	if len(checks) != len(want) {
		t.Fatalf("%d checks, want %d", len(checks), len(want))
	}
	for _, c := range checks {
		w := want[c.Part]
		if math.Abs(c.Predicted-w[0]) > 1e-9 || math.Abs(c.Measure-w[1]) > 1e-9 || math.Abs(c.Error-w[2]) > 1e-9 {
			t.Errorf("%s: predicted %.3f measured %.3f error %.3f; want %v", c.Part, c.Predicted, c.Measure, c.Error, w)
		}
	}
	var w bytes.Buffer
	if err := WriteCheck(&w, p, checks, "high"); err != nil || !strings.Contains(w.String(), "replicas          0.160                 0.128     +25 %") {
		t.Errorf("check table (%v):\n%s", err, w.String())
	}
}

// The plan says which balancer its slice's population stands for, as the store's calls a
// request depend on how many of a client's requests reach one node: HS1 / 8 clients are a
// balancer that keeps a client on one node, HS1 clients one that spreads them; another
// population, or a plan for one replica, gets no such note.
func TestPlanSaysWhichBalancerItsCostsAssume(t *testing.T) {
	for _, tc := range []struct {
		name     string
		clients  int
		replicas int
		want     []string // in the notes; none: no routing note
	}{
		{"client kept on one node", 25_000, 8, []string{"25,000 clients at one node (HS1/8: each sends this node all its requests", "--clients 200000"}},
		{"client spread over the nodes", 200_000, 8, []string{"200,000 clients at one node (HS1: each sends this node 1/8 of its requests", "--clients 25000"}},
		{"another population", 10_000, 8, nil},
		{"one replica", 25_000, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := slice(5000)
			b.Slice.Traffic.Clients = tc.clients
			p, err := Make(b, "low/bench.json", Ask{Rate: 40_000, Replicas: tc.replicas, Clients: 200_000, System: "bounded", Utilisation: 0.7})
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(p.Notes, "\n")
			if tc.want == nil && strings.Contains(notes, "at one node") {
				t.Errorf("a routing note for %d clients on %d replicas: %s", tc.clients, tc.replicas, notes)
			}
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("the notes lack %q:\n%s", w, notes)
				}
			}
		})
	}
}
