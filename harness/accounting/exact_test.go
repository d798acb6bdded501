package accounting

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// The exact clocks on hand-made runs where they disagree with send times and arrival bounds:
// one client, limit 3 a second. A decision time is when the limiter says it decided; a
// backend time when an admission reached the service behind it.
func TestExactClocks(t *testing.T) {
	type req struct {
		at, latency time.Duration
		code        uint16
		exact       time.Duration // noTime: none
	}
	none := noTime
	for _, tc := range []struct {
		name    string
		backend bool
		reqs    []req
		// overshoot and false rejects on the exact clock, then on arrival bounds and the client's clock
		over, overArrival, overClient float64
		rej, rejArrival, rejClient    int
		missing, outside              int
		failedExact                   []string
	}{
		{
			name: "bursts a window apart by their sends, decided 700 ms apart: the first waited 290 ms on its way",
			reqs: []req{{0, 300 * ms, 200, 290 * ms}, {ms, 300 * ms, 200, 291 * ms}, {2 * ms, 300 * ms, 200, 292 * ms},
				{1000 * ms, 2 * ms, 200, 1001 * ms}, {1001 * ms, 2 * ms, 200, 1002 * ms}, {1002 * ms, 2 * ms, 200, 1003 * ms}},
			over: 2, overArrival: 1, overClient: 1,
			failedExact: []string{"max overshoot"},
		},
		{
			name: "a refusal decided after the admissions had left the limiter's window: false on its clock, earned by the sends",
			reqs: []req{{0, ms, 200, 0}, {ms, ms, 200, ms}, {2 * ms, ms, 200, 2 * ms}, {950 * ms, 200 * ms, 429, 1100 * ms}},
			over: 1, overArrival: 1, overClient: 1,
			rej:         1,
			failedExact: []string{"false rejects"},
		},
		{
			name: "answers without a decision time keep their arrival bounds; one outside its send and answer is counted",
			reqs: []req{{0, ms, 200, none}, {ms, ms, 200, 500 * ms}, {2 * ms, ms, 429, none}},
			over: 2.0 / 3, overArrival: 2.0 / 3, overClient: 2.0 / 3,
			rej: 1, rejArrival: 1, rejClient: 1,
			missing: 2, outside: 1,
			failedExact: []string{"false rejects"},
		},
		{
			name:    "behind a recording backend: a request its client saw time out reached the service all the same",
			backend: true,
			reqs: []req{{0, 2 * ms, 200, ms}, {10 * ms, 2 * ms, 200, 11 * ms}, {20 * ms, 2 * ms, 200, 21 * ms},
				{30 * ms, 5 * time.Second, 0, 40 * ms}, {50 * ms, ms, 429, none}},
			over: 4.0 / 3, overArrival: 1, overClient: 1,
			failedExact: []string{"max overshoot", "errors outside fault windows"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 3, Window: time.Second}}, Duration: 2 * time.Second}
			for _, r := range tc.reqs {
				s.Requests = append(s.Requests, schedule.Request{At: r.at})
			}
			a, err := New(&s, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.reqs {
				o := traffic.Outcome{Index: i, Code: r.code, Sent: r.at, Latency: r.latency}
				if o.Code == 0 {
					o.Err = traffic.ErrTimeout
				}
				if r.exact != noTime && !tc.backend {
					o.DecidedAt, o.Decided = r.exact, true
				}
				if err := a.Add(o); err != nil {
					t.Fatal(err)
				}
				if r.exact != noTime && tc.backend {
					a.AddBackend(i, r.exact)
				}
			}
			rep := a.Report()
			clock := result.ClockDecision
			if tc.backend {
				clock = result.ClockBackend
			}
			if rep.Exact != clock {
				t.Fatalf("exact clock %q, want %q", rep.Exact, clock)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			c := rep.Clocks(clock)
			if !near(c.OvershootExact, tc.over) || !near(c.OvershootArrival, tc.overArrival) || !near(c.OvershootClient, tc.overClient) ||
				c.FalseRejectsExact != tc.rej || c.FalseRejectsArrival != tc.rejArrival || c.FalseRejectsClient != tc.rejClient {
				t.Errorf("overshoot x%.3f (%s) x%.3f (arrival) x%.3f (client), false rejects %d %d %d; want x%.3f x%.3f x%.3f, %d %d %d",
					c.OvershootExact, clock, c.OvershootArrival, c.OvershootClient, c.FalseRejectsExact, c.FalseRejectsArrival, c.FalseRejectsClient,
					tc.over, tc.overArrival, tc.overClient, tc.rej, tc.rejArrival, tc.rejClient)
			}
			if c.ExactMissing != tc.missing || c.ExactOutside != tc.outside {
				t.Errorf("%d without an exact time, %d outside their bounds; want %d, %d", c.ExactMissing, c.ExactOutside, tc.missing, tc.outside)
			}
			g := DefaultGates()
			g.Clock, g.LatenessP99, g.MinRateRatio = clock, time.Hour, 0
			var failed []string
			for _, ch := range Evaluate(&rep, g).Checks {
				if !ch.Pass {
					failed = append(failed, ch.Name)
				}
			}
			if !slices.Equal(failed, tc.failedExact) {
				t.Errorf("gated on %s: failed %q, want %q", clock, failed, tc.failedExact)
			}
		})
	}
}

// auto gates on the exact clock the target declares where the outcomes carry it, and on
// arrival bounds otherwise, saying why; an exact clock asked for by name and missing leaves
// both promises not measured, neither met nor broken.
func TestGateClock(t *testing.T) {
	s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 3, Window: time.Second}}, Duration: time.Second,
		Requests: []schedule.Request{{At: 0}, {At: ms}}}
	report := func(decided bool) Report {
		a, err := New(&s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.Requests {
			if err := a.Add(traffic.Outcome{Index: i, Code: 200, Sent: s.Requests[i].At, Latency: ms, DecidedAt: s.Requests[i].At, Decided: decided}); err != nil {
				t.Fatal(err)
			}
		}
		return a.Report()
	}
	with, without := report(true), report(false)
	for _, tc := range []struct {
		name            string
		rep             Report
		asked, declared string
		want            string
		why             bool
	}{
		{"auto, decided", with, result.ClockAuto, result.ClockDecision, result.ClockDecision, false},
		{"auto, the target said nothing", without, result.ClockAuto, result.ClockDecision, result.ClockArrival, true},
		{"auto, no exact clock declared", with, result.ClockAuto, "", result.ClockArrival, false},
		{"asked for arrival", with, result.ClockArrival, result.ClockDecision, result.ClockArrival, false},
		{"asked for the client's", with, result.ClockClient, result.ClockDecision, result.ClockClient, false},
		{"asked for the decision clock", without, result.ClockDecision, "", result.ClockDecision, false},
		{"none asked", with, "", result.ClockDecision, result.ClockArrival, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := tc.rep.GateClock(tc.asked, tc.declared)
			if got != tc.want || (why != "") != tc.why {
				t.Errorf("gate %q (why %q), want %q (a reason: %v)", got, why, tc.want, tc.why)
			}
		})
	}
	for _, check := range []result.Check{CheckOvershoot(&without, OvershootLimit, result.ClockDecision), CheckFalseRejects(&without, result.ClockDecision)} {
		if !check.NotMeasured || !check.Pass {
			t.Errorf("%s on a decision clock the run lacks: %s, want not measured", check.Name, check)
		}
	}
	if c := CheckOvershoot(&with, OvershootLimit, result.ClockDecision); c.NotMeasured || !c.Pass || c.Figure != 2.0/3 {
		t.Errorf("max overshoot on the decision clock: %s, want x0.667 measured", c)
	}
}
