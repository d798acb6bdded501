package hunt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// A hunt with a pressure ladder calibrates the generator's ceiling and sends each family's
// top level first, its herd sized from that ceiling: a fixed window broken by its edge breaks
// there at once; an at-limit client on a central sliding window is never refused, however large
// its herd, and its ladder then sends the levels below.
func TestHuntClimbsThePressureLadder(t *testing.T) {
	nodes, rule := central(2, limiters.FixedWindow)
	rule.Algorithm = limiters.FixedWindow
	h, _ := huntModelWith(t, nodes, 0, rule, func(c *Config) { c.Pressure = 3; c.Levels = 0 }, FamilyEdge, FamilyAtLimitBursts)
	edge, atLimit := family(t, h, FamilyEdge), family(t, h, FamilyAtLimitBursts)
	if h.Ceiling <= 0 || h.Rounds[1].Kind != kindCalibrate {
		t.Fatalf("ceiling %v, round 1 a %q round: want the calibration after the learning round", h.Ceiling, h.Rounds[1].Kind)
	}
	for _, f := range []struct {
		name    string
		levels  []int
		broke   bool
		verdict string
	}{{FamilyEdge, []int{3}, true, "broke at level 3"}, {FamilyAtLimitBursts, []int{3, 1, 2}, false, "held at a peak of"}} {
		got := edge
		if f.name == FamilyAtLimitBursts {
			got = atLimit
		}
		var levels []int
		for _, r := range got.PressureRounds {
			levels = append(levels, r.Level)
		}
		t.Logf("%s: %s; levels %v", f.name, got.PressureVerdict, levels)
		if !slices.Equal(levels, f.levels) || got.Pressure != 3 || got.BrokeUnderPressure != f.broke || !strings.HasPrefix(got.PressureVerdict, f.verdict) {
			t.Errorf("%s: levels %v, level %d, broke %v, %q; want levels %v, broke %v, %q", f.name, levels, got.Pressure, got.BrokeUnderPressure,
				got.PressureVerdict, f.levels, f.broke, f.verdict)
		}
		if got.PressureSchedule == "" {
			t.Errorf("%s: no pressure schedule written", f.name)
		}
	}
	// The top level's herd is what the ceiling lets one pass send (three bursts of the limit
	// each): far more than the levels below, and every member within its limit.
	if r := atLimit.PressureRounds; len(r) == 3 && (r[0].Herd < 50 || r[0].Herd <= r[2].Herd || r[0].Variant.FalseRejects != 0) {
		t.Errorf("at-limit herd %d at the top (level 2: %d), %d false rejects", r[0].Herd, r[2].Herd, r[0].Variant.FalseRejects)
	}
}

// The ladder sends its top level first and then the levels below from the lowest, until the
// bound breaks or every level was sent; its end says the pressure reached (the peak sent and
// the store's timeouts) and how far that is from the generator's ceiling, never only the level
// asked.
func TestPressureSearch(t *testing.T) {
	type m struct {
		broke            bool
		achieved         float64
		timeouts, degr   float64
		unread, unanswer bool
	}
	for _, tc := range []struct {
		name    string
		ceiling float64
		steps   []m
		order   []int // the levels sent, in order
		broke   bool
		done    bool
		verdict string
	}{
		{"the top breaks", 1e5, []m{{broke: true, achieved: 9.5e4, timeouts: 12, degr: 300}}, []int{3}, true, true,
			"broke at level 3 (herd 2000, 256 per replica per ms, share x4, 36 passes), at a peak of 95000 req/s sent, 12 store timeouts and 300 decisions without the store over the round"},
		{"a lower level breaks", 1e5, []m{{achieved: 9.5e4}, {achieved: 2e4}, {broke: true, achieved: 6e4}}, []int{3, 1, 2}, true, true,
			"broke at level 2 (herd 8, 128 per replica per ms, share x2, 12 passes), at a peak of 60000 req/s sent, 0 store timeouts"},
		{"held at the ceiling", 1e5, []m{{achieved: 9.5e4, timeouts: 7}, {achieved: 2e4}, {achieved: 6e4}}, []int{3, 1, 2}, false, true,
			"held at a peak of 95000 req/s, 7 store timeouts and 0 decisions without the store over the round, the generator's ceiling (100000 req/s measured); level 3, 1, 2 sent (herd 2000 at level 3)"},
		// The peak is the step that sent fastest, whichever level it was.
		{"held short of the ceiling", 2e5, []m{{achieved: 5e4}, {achieved: 2e4}, {achieved: 6e4}}, []int{3, 1, 2}, false, true,
			"held at a peak of 60000 req/s, 0 store timeouts and 0 decisions without the store over the round, short of the generator's ceiling (200000 req/s measured): pushed that far"},
		{"ceiling not measured", 0, []m{{achieved: 5e4, unread: true}, {achieved: 2e4, unread: true}, {achieved: 6e4, unread: true}}, []int{3, 1, 2}, false, true,
			"held at a peak of 60000 req/s (the generator's ceiling not measured)"},
		{"cut short", 1e5, []m{{achieved: 9.5e4}}, []int{3}, false, false,
			"held at a peak of 95000 req/s, 0 store timeouts and 0 decisions without the store over the round, the generator's ceiling (100000 req/s measured); level 3 sent (herd 2000 at level 3); the budget ran out before level 1"},
		{"nothing answered", 1e5, []m{{unanswer: true}}, []int{3}, false, true, "not measured at level 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLadder(Ladder(3, 2))
			l.ceiling = tc.ceiling
			var order []int
			for _, s := range tc.steps {
				lvl, ok := l.next()
				if !ok {
					t.Fatalf("the ladder stopped after %v: %s", order, l.final())
				}
				order = append(order, lvl.Level)
				l.record(pressureStep{level: lvl, measured: !s.unanswer, broke: s.broke, asked: 1e6, achieved: s.achieved,
					store: StoreLoad{Timeouts: s.timeouts, Degraded: s.degr}, storeRead: !s.unread})
			}
			_, more := l.next()
			if !slices.Equal(order, tc.order) || l.broke != tc.broke || more == tc.done || l.level() != slices.Max(tc.order) {
				t.Errorf("sent %v, broke %v, more %v, level %d; want %v, %v, %v", order, l.broke, more, l.level(), tc.order, tc.broke, !tc.done)
			}
			if v := l.final(); !strings.HasPrefix(v, tc.verdict) {
				t.Errorf("verdict %q, want it to start %q", v, tc.verdict)
			}
		})
	}
	if v := newLadder(Ladder(3, 2)).final(); !strings.HasPrefix(v, "not searched under pressure") {
		t.Errorf("an unsent ladder says %q", v)
	}
}

// The ladder's levels, and press: an attack's requests times the share (at most 8 limits in a
// window), an at-limit client's never, then the herd, lowered to stay within the cap.
func TestPressLevels(t *testing.T) {
	got := Ladder(4, 2)
	want := []PressureLevel{{Level: 1, Herd: 1, Conns: 64, Share: 1, Repeat: 1}, {Level: 2, Herd: 8, Conns: 128, Share: 2, Repeat: 12},
		{Level: 3, Herd: 32, Conns: 256, Share: 4, Repeat: 36}, {Level: 4, Herd: topHerd, Conns: 512, Share: 8, Repeat: 108}}
	if !slices.Equal(got, want) {
		t.Errorf("Ladder(4, 2) = %v, want %v", got, want)
	}
	env := testEnv()
	one := func(f Family, v ...float64) Part {
		p, err := f.Build(env, v, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name               string
		part               Part
		kind               Kind
		lvl                PressureLevel
		herd, perClient    int
		share              float64
		busiestOfOneClient int
		repeat             int
	}{
		// slice-drop: 1200 requests, 600 in its busiest window... both bursts fall in one
		// window (1200); ×2 is 2400 a client, herd 8 within 24,000.
		{"attack x2", one(sliceDrop(), 2000, 0, 0), Attack, PressureLevel{Level: 2, Herd: 8, Share: 2, Most: 24_000}, 8, 2400, 2, 2400, 1},
		// ×1.5: every other request twice.
		{"attack x1.5", one(sliceDrop(), 2000, 0, 0), Attack, PressureLevel{Level: 2, Herd: 1, Share: 1.5}, 1, 1800, 1.5, 1800, 1},
		// fresh-client at a full limit per replica: 4,800 in a window, already 8 limits.
		{"capped at 8 limits", one(fresh(), 1, 2000, 0), Attack, PressureLevel{Level: 3, Herd: 32, Share: 4, Most: 12_000}, 2, 4800, 1, 4800, 1},
		// A herd of two within 12,000 a pass; the pass sent again 3 s later (2.4 s of burst,
		// whole slices of 1 s past it): twice within the 19,200 of all passes, not the 4 asked.
		{"repeated within the cap", one(fresh(), 1, 2000, 0), Attack, PressureLevel{Level: 2, Herd: 8, Share: 1, Repeat: 4, Most: 12_000, Total: 19_200}, 2, 9600, 1, 9600, 2},
		// Four times within the round's length: 3 + 3 + 3 + the part's 3.9 s fit in 13 s.
		{"repeated within the round", one(fresh(), 1, 2000, 0), Attack, PressureLevel{Level: 2, Herd: 1, Share: 1, Repeat: 12, Fit: 13 * time.Second}, 1, 19200, 1, 19200, 4},
		{"at-limit is not repeated", one(atLimitBursts(), 0, 2000), AtLimit, PressureLevel{Level: 2, Herd: 1, Share: 2, Repeat: 4}, 1, 1800, 1, 600, 1},
		{"at-limit is only herded", one(atLimitBursts(), 0, 2000), AtLimit, PressureLevel{Level: 3, Herd: 32, Share: 4, Most: 12_000}, 6, 1800, 1, 600, 1},
		{"herd of one over the cap", one(fresh(), 1, 2000, 0), Attack, PressureLevel{Level: 1, Herd: 1, Share: 1, Most: 1000}, 1, 4800, 1, 4800, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, applied := press(tc.part, tc.kind, tc.lvl, env.Limit, env.Window)
			if err := p.Schedule.Validate(); err != nil {
				t.Fatal(err)
			}
			if applied.Herd != tc.herd || len(p.Schedule.Clients) != tc.herd || len(p.Schedule.Requests) != tc.herd*tc.perClient ||
				math.Abs(applied.Share-tc.share) > 1e-9 || applied.Repeat != tc.repeat {
				t.Fatalf("herd %d (%d clients), %d requests, share %v, %d times; want herd %d, %d requests, share %v, %d times",
					applied.Herd, len(p.Schedule.Clients), len(p.Schedule.Requests), applied.Share, applied.Repeat, tc.herd, tc.herd*tc.perClient, tc.share, tc.repeat)
			}
			per := make([][]time.Duration, tc.herd)
			for _, r := range p.Schedule.Requests {
				per[r.Client] = append(per[r.Client], r.At)
			}
			for c, at := range per {
				if b := accounting.Busiest(at, env.Window); b != tc.busiestOfOneClient {
					t.Errorf("client %d: %d in its busiest window, want %d", c, b, tc.busiestOfOneClient)
				}
				if !slices.Equal(at, per[0]) {
					t.Errorf("client %d's sends differ from client 0's: a herd sends at the same instants", c)
				}
			}
		})
	}
}

// peakRate is the busiest 10 ms; placePressure keeps two parts' bursts apart for as long as
// the generator takes to send them and lets light traffic share.
func TestPeakAndPlacePressure(t *testing.T) {
	ms := time.Millisecond
	if got := peakRate([]time.Duration{0, 1 * ms, 9 * ms, 10 * ms, 25 * ms}); got != 300 {
		t.Errorf("peak %v req/s, want 300 (3 in the first 10 ms)", got)
	}
	burst := func(period time.Duration, n int) Part {
		s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 1, Window: time.Second}}}
		for range n {
			s.Requests = append(s.Requests, schedule.Request{})
		}
		s.Duration = time.Millisecond
		return Part{Schedule: s, Period: period}
	}
	light := burst(time.Second, 10)
	// 6,000 at 1,500/s × 4: the generator is busy for a second, so the second burst waits two
	// periods of 600 ms; the light part shares the first burst's bucket.
	shift, placed := placePressure([]Part{burst(600*ms, 6000), burst(600*ms, 6000), light, burst(0, 6000)}, 3*time.Second, 1500)
	wantShift := []time.Duration{0, 1200 * ms, 0, 0}
	wantPlaced := []bool{true, true, true, false}
	if !slices.Equal(shift, wantShift) || !slices.Equal(placed, wantPlaced) {
		t.Errorf("shift %v placed %v, want %v %v", shift, placed, wantShift, wantPlaced)
	}
}

// The store's load is read from every replica's metrics and summed: an exchange's timeout once
// (it is in two counters), a decision's, and the decisions made without the store; a replica
// whose metrics cannot be read makes the reading fail, not zero.
func TestReadStoreLoad(t *testing.T) {
	metrics := []string{`# TYPE rlreplica_sync_exchanges_total counter
rlreplica_sync_exchanges_total{result="ok"} 100
rlreplica_sync_exchanges_total{result="timeout"} 3
# TYPE rlreplica_store_errors_total counter
rlreplica_store_errors_total{op="exchange",reason="timeout"} 3
rlreplica_store_errors_total{op="take",reason="timeout"} 5
rlreplica_store_errors_total{op="take",reason="breaker_open"} 7
# TYPE rlreplica_degraded_decisions_total counter
rlreplica_degraded_decisions_total 40
`, `# TYPE rlreplica_store_errors_total counter
rlreplica_store_errors_total{op="take",reason="timeout"} 1
# TYPE rlreplica_degraded_decisions_total counter
rlreplica_degraded_decisions_total 2
`}
	var urls []string
	for _, m := range metrics {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, m)
		}))
		defer srv.Close()
		urls = append(urls, srv.URL)
	}
	got, err := readStoreLoad(http.DefaultClient, urls)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StoreLoad{Timeouts: 3 + 5 + 1, Degraded: 42}); got != want {
		t.Errorf("store load %+v, want %+v", got, want)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if _, err := readStoreLoad(http.DefaultClient, append(urls, gone.URL)); err == nil {
		t.Error("a replica whose metrics could not be read: no error")
	}
}
