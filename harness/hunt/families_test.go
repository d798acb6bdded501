package hunt

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/topology"
)

// testEnv is modelEnv with what the learning step and a fault round give a family.
func testEnv() Env {
	e := modelEnv(8, 40*time.Millisecond)
	e.FirstEdge = 7 * time.Second
	e.Ticks = []time.Duration{0, 5, 10, 15, 20, 25, 30, 35}
	for i := range e.Ticks {
		e.Ticks[i] *= time.Millisecond
	}
	e.Outage = result.Interval{From: 2 * time.Second, To: 8 * time.Second}
	e.Far = []int{4, 5, 6, 7}
	return e
}

// scheduled is a part's request offsets in order.
func scheduled(p Part) []time.Duration {
	var at []time.Duration
	for _, r := range p.Schedule.Requests {
		at = append(at, r.At)
	}
	return at
}

// Every family's every coarse point builds a valid schedule, the same for the same seed, of one
// client (a herd family's, of its herd); an attack family asks for at least the limit in some
// window-long interval at every point and for more than 1.1× it at its sharpest (or it could
// not show a limiter letting that through), an at-limit family for exactly the limit in the
// busiest one (so that any rejection of it is false).
func TestFamiliesBuildAimedAndAtLimitTraffic(t *testing.T) {
	env := testEnv()
	for _, f := range Families() {
		t.Run(f.Name, func(t *testing.T) {
			space := f.Space(env)
			s := NewSearch([]Family{f}, env, 0, 0, rand.New(rand.NewPCG(1, 1)))
			vs := s.Next(nil)
			want := 1
			for _, p := range space {
				want *= len(p.coarse())
			}
			if len(vs) != want || want < 2 && !f.Herd {
				t.Fatalf("%d coarse variants, want the grid's %d (at least 2)", len(vs), want)
			}
			sharpest := 0
			for _, v := range vs {
				p, err := f.Build(env, v.Values, variantSeed(1, f.Name, v))
				if err != nil {
					t.Fatalf("%s: %v", describe(space, v.Values), err)
				}
				again, _ := f.Build(env, v.Values, variantSeed(1, f.Name, v))
				if !reflect.DeepEqual(p, again) {
					t.Fatalf("%s: two builds with one seed differ", describe(space, v.Values))
				}
				clients := 1
				if f.Herd {
					clients = int(v.Values[0]) // the herd
				}
				if err := p.Schedule.Validate(); err != nil || len(p.Schedule.Clients) != clients || p.Schedule.Replicas() > env.Replicas {
					t.Fatalf("%s: %v, %d clients (want %d), %d replicas", describe(space, v.Values), err, len(p.Schedule.Clients), clients, p.Schedule.Replicas())
				}
				// The busiest client's busiest window; every client's at least the limit.
				busiest, least := 0, math.MaxInt
				for c := range clients {
					var at []time.Duration
					for _, r := range p.Schedule.Requests {
						if int(r.Client) == c {
							at = append(at, r.At)
						}
					}
					n := accounting.Busiest(at, env.Window)
					busiest, least = max(busiest, n), min(least, n)
				}
				if least < env.Limit {
					t.Errorf("%s: a client sends %d in its busiest window, less than the limit %d", describe(space, v.Values), least, env.Limit)
				}
				switch f.Kind {
				case AtLimit:
					if busiest != env.Limit {
						t.Errorf("%s: %d requests in the busiest window, want exactly the limit %d", describe(space, v.Values), busiest, env.Limit)
					}
				default:
					sharpest = max(sharpest, busiest)
					if busiest < env.Limit {
						t.Errorf("%s: %d requests in the busiest window, less than the limit %d", describe(space, v.Values), busiest, env.Limit)
					}
				}
			}
			if f.Kind != AtLimit && float64(sharpest) <= 1.1*float64(env.Limit) {
				t.Errorf("at most %d requests in a window at any coarse point: not more than 1.1× the limit %d", sharpest, env.Limit)
			}
		})
	}
}

// The families aim where they say: the window edge, the slice drop, the ticks, the outage.
func TestFamiliesAim(t *testing.T) {
	env := testEnv()
	build := func(f Family, v ...float64) []time.Duration {
		p, err := f.Build(env, v, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return scheduled(p)
	}
	ms := time.Millisecond
	// Edge: 600 at 2000/s with a 100 ms gap: [6.6 s, 6.9 s) and [7.1 s, 7.4 s) around the edge at 7 s.
	at := build(edge(), 2000, 100)
	if at[0] != 6600*ms || at[599] >= 6900*ms || at[600] != 7100*ms || at[1199] >= 7400*ms {
		t.Errorf("edge bursts at %v..%v and %v..%v", at[0], at[599], at[600], at[1199])
	}
	// Slice drop: the first burst ends 100 ms before the slice boundary at 1 s, the second
	// starts 50 ms after that slice ([0, 1 s)) drops, at 12 s.
	at = build(sliceDrop(), 2000, 100, 50)
	if at[0] != 600*ms || at[599] >= 900*ms || at[600] != 12050*ms {
		t.Errorf("slice-drop bursts from %v to %v, then from %v", at[0], at[599], at[600])
	}
	// Sync ticks: replica 3's first burst 10 ms after its first tick past half a slice
	// (15 ms + 13 intervals = 535 ms).
	p, _ := syncTick().Build(env, []float64{10, 5}, nil)
	var first time.Duration = -1
	for _, r := range p.Schedule.Requests {
		if r.Replica == 3 {
			first = r.At
			break
		}
	}
	if first != 545*ms {
		t.Errorf("replica 3's first request at %v, want 545ms", first)
	}
	// The fault: the limit at a fifth into the outage, twice the limit after the grace.
	at = build(storeFault(), 0.2, 1, 0)
	if at[0] != 3200*ms || at[600] != 9*time.Second {
		t.Errorf("fault bursts at %v and %v, want 3.2s and 9s", at[0], at[600])
	}
}

// place keeps the asked rate within the burst rate: parts that would share their buckets
// move by their period, pinned ones that cannot wait for the next round.
func TestPlaceSpreadsTheLoad(t *testing.T) {
	part := func(period time.Duration, at ...time.Duration) Part {
		s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 1, Window: time.Second}}}
		for _, a := range at {
			s.Requests = append(s.Requests, schedule.Request{At: a})
			s.Duration = a + time.Millisecond
		}
		return Part{Schedule: s, Period: period}
	}
	burst := func(period, from time.Duration, n int) Part {
		var at []time.Duration
		for i := range n {
			at = append(at, from+time.Duration(i)*time.Millisecond/2) // 2000/s
		}
		return part(period, at...)
	}
	parts := []Part{
		burst(time.Second, 0, 100),           // 50 ms at 2000/s
		burst(time.Second, 0, 100),           // the same: moves a period
		burst(0, 10*time.Millisecond, 100),   // pinned, first placed: stays
		burst(0, 20*time.Millisecond, 100),   // pinned over the other pinned one: waits
		burst(time.Second, 3*time.Second, 1), // past the round: waits
		part(500*time.Millisecond, 2*time.Second+100*time.Millisecond),
	}
	shift, placed := place(parts, 3*time.Second, 2000, 0)
	wantShift := []time.Duration{time.Second, 2 * time.Second, 0, 0, 0, 0}
	wantPlaced := []bool{true, true, false, true, false, true}
	if !slices.Equal(shift, wantShift) || !slices.Equal(placed, wantPlaced) {
		t.Errorf("shift %v placed %v, want %v %v", shift, placed, wantShift, wantPlaced)
	}
}

// The zone families keep their aim: every request of a far-zone client goes to a replica of
// the far zone, the limit to each of them; a partition-edge burst starts at its offset from the
// partition's start or heal, on the far zone's replicas when asked, and its recovery burst
// after the grace. Without a far zone or a partition they say so instead of aiming elsewhere.
func TestZoneFamiliesAim(t *testing.T) {
	env := testEnv()
	ms := time.Millisecond
	far := map[int16]bool{4: true, 5: true, 6: true, 7: true}
	for _, order := range []float64{0, 1} {
		p, err := farClient().Build(env, []float64{1, 2000, order}, nil)
		if err != nil {
			t.Fatal(err)
		}
		per := map[int16]int{}
		for _, r := range p.Schedule.Requests {
			if !far[r.Replica] {
				t.Fatalf("order %v: a request to replica %d, outside the far zone %v", order, r.Replica, env.Far)
			}
			per[r.Replica]++
		}
		if len(per) != 4 || per[4] != env.Limit || per[7] != env.Limit {
			t.Errorf("order %v: requests per far replica %v, want the limit %d to each of 4", order, per, env.Limit)
		}
	}
	for _, tc := range []struct {
		edge, offset, zone float64
		first              time.Duration
	}{
		{0, -100, 0, env.Outage.From - 100*ms}, // just before the cut
		{0, 250, 1, env.Outage.From + 250*ms},
		{1, 0, 1, env.Outage.To}, // at the heal
		{1, -250, 0, env.Outage.To - 250*ms},
	} {
		p, err := partitionEdge().Build(env, []float64{tc.edge, tc.offset, 2, tc.zone}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs := p.Schedule.Requests
		n := 2 * env.Limit
		if len(rs) != n+2*env.Limit || rs[0].At != tc.first {
			t.Errorf("edge %v offset %v: %d requests from %v, want %d from %v", tc.edge, tc.offset, len(rs), rs[0].At, n+2*env.Limit, tc.first)
			continue
		}
		for _, r := range rs[:n] {
			if tc.zone == 1 && !far[r.Replica] {
				t.Errorf("edge %v zone 1: a burst request to replica %d, outside the far zone", tc.edge, r.Replica)
				break
			}
		}
		if tc.zone == 0 && p.Schedule.Replicas() != env.Replicas {
			t.Errorf("edge %v zone 0: the burst reaches %d replicas, want all %d", tc.edge, p.Schedule.Replicas(), env.Replicas)
		}
		if after := env.Outage.To + env.Grace; rs[n].At <= after {
			t.Errorf("edge %v: the recovery burst at %v, not after the grace (%v)", tc.edge, rs[n].At, after)
		}
	}
	none := env
	none.Far = nil
	if _, err := farClient().Build(none, []float64{1, 2000, 0}, nil); err == nil {
		t.Error("far-zone-client without a far zone: no error")
	}
	if _, err := partitionEdge().Build(none, []float64{0, 0, 2, 0}, nil); err == nil {
		t.Error("partition-edge without a far zone: no error")
	}
	none = env
	none.Outage = result.Interval{}
	if _, err := partitionEdge().Build(none, []float64{0, 0, 2, 0}, nil); err == nil {
		t.Error("partition-edge without a partition: no error")
	}
}

// --fault partition cuts the farthest zone: a hunt without zones is refused with what to give,
// one with zones (or a target file's topology) is let through.
func TestRunConfigPartitionNeedsZones(t *testing.T) {
	zones, err := topology.Parse("near:4:0.5ms,far:4:40ms±10ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fault string
		zones topology.Topology
		ok    bool
	}{
		{result.FaultPartition, topology.Topology{}, false},
		{result.FaultPartitionBlackhole, topology.Topology{}, false},
		{result.FaultPartition, zones, true},
		{result.FaultLinkSlow, zones, false}, // not a fault round's: the families aim at an outage
		{result.FaultStop, topology.Topology{}, true},
	} {
		rc := RunConfig{Fault: tc.fault, MaxRate: 1500}
		rc.Load.Spec.TimeScale, rc.Load.Zones = 0.2, tc.zones
		_, err := rc.check()
		if (err == nil) != tc.ok {
			t.Errorf("--fault %s, zones %q: err %v, want ok %v", tc.fault, tc.zones, err, tc.ok)
		}
	}
}
