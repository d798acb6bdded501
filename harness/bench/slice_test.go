package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/internal/procstat"
)

// sliceMeasured is a slice whose every figure rests on sustained runs: the no-op replica
// at 40 us a decision, the bounded design at 44, its Redis 10 % of a core held to 1/8,
// ceilings 6,000 (no-op), 3,000 (bounded, below the generator's), 1,500 (redis_rate).
func sliceMeasured() result.Bench {
	step := func(rate float64, p99 time.Duration) *result.Step {
		return &result.Step{Rate: rate, Achieved: rate, Duration: 12 * time.Second, Requests: int(12 * rate), Answered: int(12 * rate), Clients: 20_000,
			Latency: result.Percentiles{P99: p99, P999: 2 * p99}, Sustained: true}
	}
	search := func(ceiling float64) []result.Step {
		return []result.Step{{Rate: ceiling, Sustained: true}, {Rate: 1.5 * ceiling, Why: "errors"}, {Rate: 1.5 * ceiling, Why: "errors"}}
	}
	rounds := func(p99s ...time.Duration) []result.Step {
		var out []result.Step
		for _, p := range p99s {
			out = append(out, *step(2000, p))
		}
		return out
	}
	cost := func(us float64) *result.ProcessCost {
		return &result.ProcessCost{CPUSeconds: us * 24000 / 1e6, WallSeconds: 12, Cores: us * 2000 / 1e6, CPUPerRequestUs: us, RSSPerClient: 300}
	}
	held := result.Conditions{Provider: "docker", Replicas: 1, NodeCount: 8, StoreCPU: 0.125}
	noopCond := held
	noopCond.Target = "noop"
	return result.Bench{Cores: 2, Slice: &result.SliceBench{
		Traffic: schedule.Slice{TimeScale: 0.2, Rate: 5000, Clients: 25_000, Nodes: 8, Duration: 12 * time.Second},
		Rate:    2000, StoreCPU: 0.125,
		Systems: []result.FleetBench{
			{Name: SliceNoop, Network: "host", Conditions: noopCond, Steady: step(2000, 2*time.Millisecond), Ceiling: 6000, Steps: search(6000),
				Rounds: rounds(2*time.Millisecond, 2200*time.Microsecond, 2100*time.Microsecond), Replica: cost(40), Generator: cost(110)},
			{Name: SliceBounded, Network: "host", Conditions: held, Steady: step(2000, 2300*time.Microsecond), Ceiling: 3000, Steps: search(3000),
				Rounds: rounds(2300*time.Microsecond, 2400*time.Microsecond, 2350*time.Microsecond), Replica: cost(44), Generator: cost(112),
				StoreCPU: &result.StoreCPU{Seconds: 0.12, Percent: 1.25, MsPerKiloRequest: 5}, StoreCmdPerRequest: 0.01, StoreMemory: &result.StoreMemory{PerClient: 2}},
			{Name: SlicePeer, Network: "host", Conditions: held, Steady: step(2000, 4*time.Millisecond), Ceiling: 1500, Steps: search(1500), Replica: cost(60), Generator: cost(111),
				StoreCPU: &result.StoreCPU{Seconds: 1.2, Percent: 10, MsPerKiloRequest: 50}, StoreCmdPerRequest: 1, StoreMemory: &result.StoreMemory{PerClient: 90}},
		},
	}}
}

// Each of the slice's four targets reads met or not met from its figure, and not measured
// (with why) where the data it rests on is void: never met on nothing.
func TestSliceFiguresJudgeEveryTarget(t *testing.T) {
	const (
		cpu     = "slice: CPU per decision, bounded / no-op"
		p99     = "slice: p99 added by the bounded design (bounded - no-op)"
		busy    = "slice: Redis busy at its share of a core (bounded)"
		ceiling = "slice: ceiling, bounded / redis_rate"
	)
	systems := func(b *result.Bench) map[string]*result.FleetBench {
		m := map[string]*result.FleetBench{}
		for i := range b.Slice.Systems {
			m[b.Slice.Systems[i].Name] = &b.Slice.Systems[i]
		}
		return m
	}
	tests := []struct {
		name   string
		edit   func(b *result.Bench, s map[string]*result.FleetBench)
		figure string
		status string
		why    string
		value  float64
	}{
		{"CPU within 1.2x", nil, cpu, result.StatusMet, "", 1.1},
		{"CPU past 1.2x", func(_ *result.Bench, s map[string]*result.FleetBench) { s[SliceBounded].Replica.CPUPerRequestUs = 60 }, cpu, result.StatusNotMet, "", 1.5},
		{"replica CPU not read", func(_ *result.Bench, s map[string]*result.FleetBench) {
			s[SliceNoop].Replica, s[SliceNoop].ReplicaWhy = nil, "read the threads of process 7: no such file"
		}, cpu, result.StatusNotMeasured, "noop's replica CPU: read the threads of process 7: no such file", 0},
		{"CPU from a late steady run", func(_ *result.Bench, s map[string]*result.FleetBench) {
			s[SliceBounded].Steady.Sustained, s[SliceBounded].Steady.GeneratorBound = false, true
		}, cpu, result.StatusNotMeasured, WhyGeneratorBound, 1.1},
		{"p99 added within 0.5 ms", nil, p99, result.StatusMet, "", 0.25},
		{"p99 added past 0.5 ms", func(_ *result.Bench, s map[string]*result.FleetBench) {
			for i := range s[SliceBounded].Rounds {
				s[SliceBounded].Rounds[i].Latency.P99 += time.Millisecond
			}
		}, p99, result.StatusNotMet, "", 1.25},
		{"Redis under half busy", nil, busy, result.StatusMet, "", 0.1},
		{"Redis past half busy", func(_ *result.Bench, s map[string]*result.FleetBench) { s[SliceBounded].StoreCPU.Percent = 7.5 }, busy, result.StatusNotMet, "", 0.6},
		{"Redis not held", func(b *result.Bench, _ map[string]*result.FleetBench) { b.Slice.StoreCPU = 0 }, busy, result.StatusNotMeasured,
			"Redis was not held to a share of a core (--store-cpu 0)", 0},
		{"Redis CPU not read", func(_ *result.Bench, s map[string]*result.FleetBench) {
			s[SliceBounded].StoreCPU, s[SliceBounded].StoreCPUWhy = nil, "the store started again between its CPU readings"
		}, busy, result.StatusNotMeasured, "Redis CPU: the store started again between its CPU readings", 0},
		{"ceiling 2x redis_rate's", nil, ceiling, result.StatusMet, "", 2},
		{"ceiling 1.2x redis_rate's", func(_ *result.Bench, s map[string]*result.FleetBench) { s[SlicePeer].Ceiling = 2500 }, ceiling, result.StatusNotMet, "", 1.2},
		// The bounded design reached the generator's ceiling: its own is higher, so a ratio
		// over the target is proven, one under it is not.
		{"generator-bound and over", func(_ *result.Bench, s map[string]*result.FleetBench) { s[SliceBounded].Ceiling = 5800 }, ceiling, result.StatusMet, "", 5800.0 / 1500},
		{"generator-bound and under", func(_ *result.Bench, s map[string]*result.FleetBench) {
			s[SliceBounded].Ceiling, s[SlicePeer].Ceiling = 5800, 5000
		}, ceiling, result.StatusNotMeasured, WhyGeneratorBound, 5800.0 / 5000},
		{"redis_rate's search still climbing when it stopped", func(_ *result.Bench, s map[string]*result.FleetBench) {
			s[SlicePeer].Steps = s[SlicePeer].Steps[:1]
		}, ceiling, result.StatusNotMeasured, "", 2},
		{"redis_rate not run", func(b *result.Bench, _ map[string]*result.FleetBench) { b.Slice.Systems = b.Slice.Systems[:2] }, ceiling, result.StatusNotMeasured, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := sliceMeasured()
			if tt.edit != nil {
				tt.edit(&b, systems(&b))
			}
			f := figure(t, Figures(b), tt.figure)
			if f.Status != tt.status || f.Why != tt.why || math.Abs(f.Value-tt.value) > 1e-9 {
				t.Errorf("%s: %q (why %q) value %v; want %q (why %q) value %v\n%s\n%s", tt.figure, f.Status, f.Why, f.Value, tt.status, tt.why, tt.value, f.Display, f.Note)
			}
			if f.Item != 8 || f.Conditions == "" || f.Target == "" {
				t.Errorf("%s: item %d, conditions %q, target %q", tt.figure, f.Item, f.Conditions, f.Target)
			}
		})
	}
}

// A slice's table is the systems side by side and its four figures; none of the other
// figures' rows, which its run did not measure.
func TestSliceTable(t *testing.T) {
	b := sliceMeasured()
	b.Figures = Figures(b)
	if len(b.Figures) != 4 {
		t.Errorf("%d figures, want the slice's 4", len(b.Figures))
	}
	var w bytes.Buffer
	if err := WriteTable(&w, b); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(w.String()), " ")
	for _, want := range []string{
		"node 0 of 8, 5,000 req/s asked from 25,000 clients",
		"docker/host networking, 1 replica told it is one of 8 nodes + Redis held to 1/8 of a core",
		// achieved, ceiling, p99, p99.9, added, CPU, x no-op, Redis us, busy, round trips,
		// RSS and Redis per client, generator
		"bounded 2,000 3,000 2.30 4.60 +0.30 44.0 1.10 5.00 10 % 0.0100 +300 +2.0 112.0",
		"redis_rate 2,000 1,500 4.00 8.00 +2.00 60.0 1.50 50.00 80 % 1.0000 +300 +90.0 111.0",
		"noop 2,000 6,000 2.00 4.00 +0.00 40.0 1.00 - - - +300 - 110.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestProcessCost(t *testing.T) {
	at := time.Unix(100, 0)
	u := [2]procstat.Usage{{At: at, CPU: time.Second, RSS: 10 << 20}, {At: at.Add(10 * time.Second), CPU: 3 * time.Second, RSS: 30 << 20}}
	c, why := processCost(7, u, nil, 40_000, 20_000, "answered")
	if c == nil || c.CPUPerRequestUs != 50 || c.Cores != 0.2 || c.RSSPerClient != float64(20<<20)/20_000 || c.PID != 7 {
		t.Errorf("cost %+v (%s)", c, why)
	}
	for _, tt := range []struct {
		u    [2]procstat.Usage
		n    int
		want string
	}{
		{u, 0, "no request was answered"},
		{[2]procstat.Usage{u[0], {At: u[1].At, CPU: u[0].CPU}}, 10, "spent no CPU"},
		{[2]procstat.Usage{u[1], u[0]}, 10, "go backwards"},
	} {
		if c, why := processCost(7, tt.u, nil, tt.n, 1, "answered"); c != nil || !strings.Contains(why, tt.want) {
			t.Errorf("%+v over %d: %+v %q, want %q", tt.u, tt.n, c, why, tt.want)
		}
	}
}
