package schedule_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

func TestRequestIsCompact(t *testing.T) {
	if got := unsafe.Sizeof(schedule.Request{}); got != 16 {
		t.Fatalf("Request is %d bytes, want 16 (ten million must fit in 160 MB)", got)
	}
}

// pencereMS is pencere.mjs's pattern generator, transcribed in milliseconds.
func pencereMS(pattern string) []int64 {
	const sinir, pencere, dilim, sure = 600, 60_000, 5_000, 180_000
	var t []int64
	switch pattern {
	case schedule.PatternUniform2x:
		for i := range int64(sure / 1000 * 20) {
			t = append(t, i*50)
		}
	case schedule.PatternBoundary:
		for _, edge := range []int64{pencere, 2 * pencere} {
			for _, bas := range []int64{edge - dilim, edge} {
				for i := range int64(sinir) {
					t = append(t, bas+i*dilim/sinir)
				}
			}
		}
	case schedule.PatternIntermittent:
		for k := range int64(sure / pencere) {
			for i := range int64(sinir) {
				t = append(t, k*pencere+i*dilim/sinir)
			}
		}
	}
	return t
}

func offsets(s schedule.Schedule) []time.Duration {
	at := make([]time.Duration, len(s.Requests))
	for i, r := range s.Requests {
		at[i] = r.At
	}
	return at
}

// fixedWindow and slidingSlices are pencere.mjs's "sabit pencere" and
// "kaydirmali dilim", on nanoseconds; they return the accepted offsets.
func fixedWindow(at []time.Duration, limit int, w time.Duration) []time.Duration {
	var ok []time.Duration
	p, n := time.Duration(-1), 0
	for _, t := range at {
		if k := t / w; k != p {
			p, n = k, 0
		}
		if n < limit {
			n++
			ok = append(ok, t)
		}
	}
	return ok
}

func slidingSlices(at []time.Duration, limit int, w time.Duration) []time.Duration {
	var ok []time.Duration
	slice := w / limiters.DefaultSlices
	count := map[time.Duration]int{}
	for _, t := range at {
		d := t / slice
		total := 0
		for k, v := range count {
			if k < d-limiters.DefaultSlices+1 {
				delete(count, k)
				continue
			}
			total += v
		}
		if total < limit {
			count[d]++
			ok = append(ok, t)
		}
	}
	return ok
}

func TestProbePatternsMatchPencere(t *testing.T) {
	type row struct{ accepted, busiest int }
	tests := []struct {
		name     string
		build    func(schedule.Params) (schedule.Schedule, error)
		pattern  string
		requests int
		windows  int // schedule duration in windows
		offered  int // busiest window-long interval of the offered traffic
		fixed    row
		sliding  row
	}{
		{"uniform 2x", schedule.Uniform2x, schedule.PatternUniform2x, 3600, 3, 1200, row{1800, 600}, row{1800, 600}},
		{"boundary burst", schedule.BoundaryBurst, schedule.PatternBoundary, 2400, 3, 1200, row{1800, 1200}, row{1200, 600}},
		{"intermittent", schedule.IntermittentAtLimit, schedule.PatternIntermittent, 1800, 3, 600, row{1800, 600}, row{1800, 600}},
		{"sync 90/s", schedule.Sync90, schedule.PatternSync90, 5400, 1, 5400, row{600, 600}, row{600, 600}},
	}
	for _, tc := range tests {
		for _, scale := range []float64{1, 0.1} {
			t.Run(tc.name+"/scale="+time.Duration(scale*float64(time.Second)).String(), func(t *testing.T) {
				p := schedule.Params{Limit: 600, Window: time.Minute, Scale: scale}
				s, err := tc.build(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				w := time.Duration(float64(time.Minute) * scale)
				if len(s.Requests) != tc.requests || s.Duration != time.Duration(tc.windows)*w {
					t.Fatalf("got %d requests over %v, want %d over %v", len(s.Requests), s.Duration, tc.requests, time.Duration(tc.windows)*w)
				}
				want := schedule.Client{ID: "probe-" + tc.pattern, Limit: 600, Window: w, Pattern: tc.pattern, Probe: true}
				if len(s.Clients) != 1 || s.Clients[0] != want {
					t.Fatalf("clients = %+v, want [%+v]", s.Clients, want)
				}
				at := offsets(s)
				if got := accounting.Busiest(at, w); got != tc.offered {
					t.Errorf("busiest offered = %d, want %d", got, tc.offered)
				}
				fx := fixedWindow(at, 600, w)
				if got := (row{len(fx), accounting.Busiest(fx, w)}); got != tc.fixed {
					t.Errorf("fixed window: accepted, busiest = %v, want %v", got, tc.fixed)
				}
				sl := slidingSlices(at, 600, w)
				if got := (row{len(sl), accounting.Busiest(sl, w)}); got != tc.sliding {
					t.Errorf("sliding slices: accepted, busiest = %v, want %v", got, tc.sliding)
				}
				if ms := pencereMS(tc.pattern); scale == 1 && ms != nil {
					for i, r := range s.Requests {
						if got := int64(r.At / time.Millisecond); got != ms[i] {
							t.Fatalf("request %d at %v, pencere.mjs has %d ms", i, r.At, ms[i])
						}
					}
				}
			})
		}
	}
}

func TestSync90Offsets(t *testing.T) {
	s, err := schedule.Sync90(schedule.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	// dagitik.mjs: t = i / 90 s.
	for _, i := range []int{0, 1, 89, 90, 2699, 5399} {
		want := time.Duration(int64(i) * int64(time.Second) / 90)
		if got := s.Requests[i].At; got != want {
			t.Errorf("request %d at %v, want %v", i, got, want)
		}
	}
}

func TestParamsErrors(t *testing.T) {
	tests := []struct {
		name string
		p    schedule.Params
		want string
	}{
		{"zero limit", schedule.Params{Limit: 0, Window: time.Minute, Scale: 1}, "limit must be > 0"},
		{"negative window", schedule.Params{Limit: 1, Window: -time.Second, Scale: 1}, "window must be > 0"},
		{"zero scale", schedule.Params{Limit: 1, Window: time.Minute}, "time scale must be"},
		{"NaN scale", schedule.Params{Limit: 1, Window: time.Minute, Scale: math.NaN()}, "time scale must be"},
		{"tiny window", schedule.Params{Limit: 1, Window: 10, Scale: 1}, "shorter than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schedule.Uniform2x(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a := schedule.Schedule{
		Clients:  []schedule.Client{{ID: "a0"}, {ID: "a1"}},
		Requests: []schedule.Request{{At: 0, Client: 1}, {At: 5, Client: 0}, {At: 9, Client: 1}},
		Duration: 10,
	}
	b := schedule.Schedule{
		Clients:  []schedule.Client{{ID: "b0"}},
		Requests: []schedule.Request{{At: 5, Client: 0, Replica: 3}, {At: 20, Client: 0}},
		Duration: 30,
	}
	got := schedule.Merge(a, schedule.Schedule{}, b)
	want := []schedule.Request{{At: 0, Client: 1}, {At: 5, Client: 0}, {At: 5, Client: 2, Replica: 3}, {At: 9, Client: 1}, {At: 20, Client: 2}}
	if !slices.Equal(got.Requests, want) {
		t.Errorf("requests = %v, want %v", got.Requests, want)
	}
	if ids := []string{got.Clients[0].ID, got.Clients[1].ID, got.Clients[2].ID}; len(got.Clients) != 3 || !slices.Equal(ids, []string{"a0", "a1", "b0"}) {
		t.Errorf("clients = %v", got.Clients)
	}
	if got.Duration != 30 {
		t.Errorf("duration = %v, want 30ns", got.Duration)
	}
}

func TestProbes(t *testing.T) {
	s, err := schedule.Probes(schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range s.Requests {
		per[s.Clients[r.Client].ID]++
	}
	want := map[string]int{"probe-uniform2x": 3600, "probe-boundary-burst": 2400, "probe-intermittent": 1800, "probe-sync90": 5400}
	for id, n := range want {
		if per[id] != n {
			t.Errorf("%s: %d requests, want %d", id, per[id], n)
		}
	}
	if len(s.Requests) != 13200 || s.Duration != 18*time.Second {
		t.Errorf("%d requests over %v, want 13200 over 18s", len(s.Requests), s.Duration)
	}
}

func TestAssignReplicas(t *testing.T) {
	build := func(seed uint64) schedule.Schedule {
		s := schedule.Schedule{Clients: []schedule.Client{{ID: "c"}}, Requests: make([]schedule.Request, 80_000), Duration: 1}
		if err := s.AssignReplicas(8, rand.New(rand.NewPCG(seed, 1))); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := build(7)
	count := make([]int, 8)
	for _, r := range s.Requests {
		count[r.Replica]++
	}
	for k, n := range count {
		if n < 9_500 || n > 10_500 { // 10,000 ± 5σ
			t.Errorf("replica %d got %d of 80,000 requests, want about 10,000", k, n)
		}
	}
	if s.Replicas() != 8 {
		t.Errorf("Replicas() = %d, want 8", s.Replicas())
	}
	if !slices.Equal(s.Requests, build(7).Requests) {
		t.Error("same seed gave different replicas")
	}
	if slices.Equal(s.Requests, build(8).Requests) {
		t.Error("different seeds gave the same replicas")
	}
	for _, k := range []int{0, -1, 40_000} {
		if err := s.AssignReplicas(k, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("AssignReplicas(%d) accepted", k)
		}
	}
}

// perClient groups a schedule's offsets by client, each sorted.
func perClient(s schedule.Schedule) [][]time.Duration {
	out := make([][]time.Duration, len(s.Clients))
	for _, r := range s.Requests {
		out[r.Client] = append(out[r.Client], r.At)
	}
	return out
}

func TestBackground(t *testing.T) {
	tests := []struct {
		name       string
		b          schedule.Background
		requests   int     // exact, or the mean for Poisson
		perWindow  int     // no client may exceed this in any window-long interval
		minClients int     // at least this many distinct clients are used
		spread     float64 // allowed relative deviation of the count (Poisson)
	}{
		{"HS1 population at HS2 rate, scale 0.1",
			schedule.Background{Params: schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1}, Clients: 200_000, Rate: 40_000, Duration: 2 * time.Second, Jitter: 0.5},
			80_000, 300, 60_000, 0},
		{"Poisson arrivals",
			schedule.Background{Params: schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1}, Clients: 20_000, Rate: 20_000, Duration: time.Second, Poisson: true},
			20_000, 300, 10_000, 0.04},
		{"at capacity: 10 clients × 10 per second, no jitter",
			schedule.Background{Params: schedule.Params{Limit: 10, Window: time.Second, Scale: 1}, Clients: 10, Rate: 100, Duration: 3 * time.Second, Fill: 1},
			300, 10, 10, 0},
		{"fill 0.2 of a limit of 50",
			schedule.Background{Params: schedule.Params{Limit: 50, Window: time.Second, Scale: 1}, Clients: 100, Rate: 900, Duration: 2 * time.Second, Fill: 0.2, Jitter: 0.9},
			1800, 10, 100, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := schedule.NewBackground(tc.b, rand.New(rand.NewPCG(20260730, 0)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if n := len(s.Requests); math.Abs(float64(n-tc.requests)) > tc.spread*float64(tc.requests) {
				t.Errorf("%d requests, want %d (±%.0f%%)", n, tc.requests, 100*tc.spread)
			}
			if len(s.Clients) != tc.b.Clients {
				t.Errorf("%d clients, want %d", len(s.Clients), tc.b.Clients)
			}
			used, worst := 0, 0
			for _, at := range perClient(s) {
				if len(at) > 0 {
					used++
				}
				worst = max(worst, accounting.Busiest(at, tc.b.ScaledWindow()))
			}
			if worst > tc.perWindow || worst > tc.b.Limit {
				t.Errorf("a client sent %d in one window, want ≤ %d (limit %d)", worst, tc.perWindow, tc.b.Limit)
			}
			if used < tc.minClients {
				t.Errorf("%d clients used, want ≥ %d", used, tc.minClients)
			}
			for _, c := range s.Clients {
				if c.Probe || c.Pattern != schedule.PatternBackground || c.Limit != tc.b.Limit || c.Window != tc.b.ScaledWindow() {
					t.Fatalf("client %+v", c)
				}
			}
		})
	}
}

func TestBackgroundIsSeeded(t *testing.T) {
	b := schedule.Background{Params: schedule.DefaultParams(), Clients: 1000, Rate: 500, Duration: time.Second, Jitter: 0.5}
	gen := func(seed uint64) schedule.Schedule {
		s, err := schedule.NewBackground(b, rand.New(rand.NewPCG(seed, 0)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := gen(1)
	if !slices.Equal(a.Requests, gen(1).Requests) {
		t.Error("same seed gave different schedules")
	}
	if slices.Equal(a.Requests, gen(2).Requests) {
		t.Error("different seeds gave the same schedule")
	}
	if a.Clients[0].ID != "bg-000" || a.Clients[999].ID != "bg-999" {
		t.Errorf("IDs %q … %q, want bg-000 … bg-999", a.Clients[0].ID, a.Clients[999].ID)
	}
}

func TestBackgroundErrors(t *testing.T) {
	ok := schedule.Background{Params: schedule.DefaultParams(), Clients: 10, Rate: 10, Duration: time.Second}
	tests := []struct {
		name   string
		change func(*schedule.Background)
		want   string
	}{
		{"no clients", func(b *schedule.Background) { b.Clients = 0 }, "clients must be"},
		{"zero rate", func(b *schedule.Background) { b.Rate = 0 }, "rate must be"},
		{"no duration", func(b *schedule.Background) { b.Duration = 0 }, "duration must be"},
		{"fill over 1", func(b *schedule.Background) { b.Fill = 1.5 }, "fill must be"},
		{"jitter 1", func(b *schedule.Background) { b.Jitter = 1 }, "jitter must be"},
		// 10 clients × 300 per 60 s = 50 req/s.
		{"over capacity", func(b *schedule.Background) { b.Rate = 51 }, "more than 10 clients can send"},
		{"bad params", func(b *schedule.Background) { b.Limit = -1 }, "limit must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := ok
			tc.change(&b)
			_, err := schedule.NewBackground(b, rand.New(rand.NewPCG(1, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	good := func() schedule.Schedule {
		return schedule.Schedule{
			Clients:  []schedule.Client{{ID: "c", Limit: 1, Window: time.Second}},
			Requests: []schedule.Request{{At: 0}, {At: 5}},
			Duration: 10,
		}
	}
	tests := []struct {
		name   string
		change func(*schedule.Schedule)
		want   string // "" means valid
	}{
		{"valid", func(*schedule.Schedule) {}, ""},
		{"unsorted", func(s *schedule.Schedule) { s.Requests[0].At = 7 }, "must be sorted"},
		{"past the end", func(s *schedule.Schedule) { s.Requests[1].At = 10 }, "outside the schedule's duration"},
		{"unknown client", func(s *schedule.Schedule) { s.Requests[1].Client = 1 }, "has 1 clients"},
		{"empty ID", func(s *schedule.Schedule) { s.Clients[0].ID = "" }, "empty ID"},
		{"no limit", func(s *schedule.Schedule) { s.Clients[0].Limit = 0 }, "limit and window"},
		{"no duration", func(s *schedule.Schedule) { s.Duration = 0 }, "duration must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.change(&s)
			err := s.Validate()
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func BenchmarkBackground1M(b *testing.B) {
	b.ReportAllocs()
	bg := schedule.DefaultBackground(schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1}, 40_000, 25*time.Second)
	for b.Loop() {
		s, err := schedule.NewBackground(bg, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(s.Requests)), "requests")
	}
}

func BenchmarkMerge1M(b *testing.B) {
	b.ReportAllocs()
	p := schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1}
	bg, err := schedule.NewBackground(schedule.DefaultBackground(p, 40_000, 25*time.Second), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		b.Fatal(err)
	}
	probes, err := schedule.Probes(p)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		schedule.Merge(bg, probes)
	}
}

func TestShardPartitionsByClient(t *testing.T) {
	p := schedule.Params{Limit: 600, Window: time.Minute, Scale: 0.1}
	probes, err := schedule.Probes(p)
	if err != nil {
		t.Fatal(err)
	}
	bg, err := schedule.NewBackground(schedule.Background{Params: p, Clients: 101, Rate: 200, Duration: probes.Duration, Jitter: 0.5}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	s := schedule.Merge(probes, bg)
	for _, n := range []int{1, 2, 3, 7} {
		seen := make([]int, len(s.Requests))
		perShard := make([]int, n)
		for i := range n {
			part, index, err := s.Shard(i, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := part.Validate(); err != nil {
				t.Fatalf("shard %d/%d: %v", i, n, err)
			}
			if len(part.Clients) != len(s.Clients) || part.Duration != s.Duration || len(index) != len(part.Requests) {
				t.Fatalf("shard %d/%d: %d clients, %v, %d indexes for %d requests", i, n, len(part.Clients), part.Duration, len(index), len(part.Requests))
			}
			for k, r := range part.Requests {
				if s.Requests[index[k]] != r {
					t.Fatalf("shard %d/%d request %d is %+v, the schedule's %d is %+v", i, n, k, r, index[k], s.Requests[index[k]])
				}
				if schedule.ShardOf(r.Client, n) != i {
					t.Fatalf("shard %d/%d holds client %d of shard %d", i, n, r.Client, schedule.ShardOf(r.Client, n))
				}
				seen[index[k]]++
			}
			perShard[i] = len(part.Requests)
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("%d shards: request %d sent by %d shards, want exactly 1", n, k, c)
			}
		}
		for i, c := range perShard {
			if c == 0 {
				t.Errorf("%d shards: shard %d sends nothing", n, i)
			}
		}
	}
	for _, tc := range [][2]int{{0, 0}, {2, 2}, {-1, 3}} {
		if _, _, err := s.Shard(tc[0], tc[1]); err == nil {
			t.Errorf("Shard(%d, %d) took a shard outside 0..n-1", tc[0], tc[1])
		}
	}
}
