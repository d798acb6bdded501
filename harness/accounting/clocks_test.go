package accounting

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// The two clocks on hand-made runs whose clocks disagree: a client with limit 3 a second,
// each request sent at its offset and answered after its latency.
func TestClocks(t *testing.T) {
	type req struct {
		at, latency time.Duration
		code        uint16
	}
	accepted := func(lat time.Duration, at ...time.Duration) []req {
		var out []req
		for _, a := range at {
			out = append(out, req{a, lat, 200})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		reqs []req
		want result.Clocks
		// failed are the requirement checks that fail gated on arrival and on the client's clock.
		failedArrival, failedClient []string
	}{
		{
			name: "a rejection excused only by skew: three sends answered 160 ms late may have arrived inside the fourth's window",
			reqs: append(accepted(160*ms, 0, 10*ms, 20*ms), req{1015 * ms, ms, 429}),
			// (15 ms, 1015 ms] holds two sends; two earlier ones must have arrived 5 and 15 ms after
			// the window opened: the second of them, 15 ms, is the skew it needed.
			want:         result.Clocks{OvershootClient: 1, OvershootArrival: 1, FalseRejectsClient: 1, ExcusedSkew: result.Percentiles{Count: 1, Max: 15 * ms}},
			failedClient: []string{"false rejects"},
		},
		{
			name:         "a rejection excused by a send that overtook it: sent 2 ms after, while it was in flight",
			reqs:         append(accepted(ms, 0, 10*ms), req{20 * ms, 5 * ms, 429}, req{22 * ms, ms, 200}),
			want:         result.Clocks{OvershootClient: 1, OvershootArrival: 1, FalseRejectsClient: 1, ExcusedSkew: result.Percentiles{Count: 1, Max: 2 * ms}},
			failedClient: []string{"false rejects"},
		},
		{
			name: "an overshoot only visible on send times: three of four answered after the window that holds their sends",
			reqs: accepted(200*ms, 0, 900*ms, 950*ms, 990*ms),
			// By send: four in [0, 1 s); must-count arrivals: [900 ms, 1.9 s) holds three sent and answered.
			want:         result.Clocks{OvershootClient: 4.0 / 3, OvershootArrival: 1},
			failedClient: []string{"max overshoot"},
		},
		{
			name:          "both clocks agree: four accepted within 100 ms, answered at once",
			reqs:          accepted(ms, 0, 30*ms, 60*ms, 90*ms),
			want:          result.Clocks{OvershootClient: 4.0 / 3, OvershootArrival: 4.0 / 3},
			failedArrival: []string{"max overshoot"},
			failedClient:  []string{"max overshoot"},
		},
		{
			name:          "a lone rejection is false on both clocks and needs no skew",
			reqs:          []req{{0, ms, 429}},
			want:          result.Clocks{FalseRejectsClient: 1, FalseRejectsArrival: 1},
			failedArrival: []string{"false rejects"},
			failedClient:  []string{"false rejects"},
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
				if err := a.Add(traffic.Outcome{Index: i, Code: r.code, Sent: r.at, Latency: r.latency}); err != nil {
					t.Fatal(err)
				}
			}
			rep := a.Report()
			got := rep.Clocks(result.ClockArrival)
			if got.ArrivalWidth != rep.Latency.P99 {
				t.Errorf("arrival width %v, want the p99 of answer minus send, %v", got.ArrivalWidth, rep.Latency.P99)
			}
			got.ArrivalWidth = 0
			want := tc.want
			want.Gate = result.ClockArrival
			if got.ExcusedSkew.Count == 0 {
				got.ExcusedSkew = result.Percentiles{}
			} else {
				got.ExcusedSkew = result.Percentiles{Count: got.ExcusedSkew.Count, Max: got.ExcusedSkew.Max}
			}
			if got != want {
				t.Errorf("clocks\n got %+v\nwant %+v", got, want)
			}
			for clock, wantFailed := range map[string][]string{result.ClockArrival: tc.failedArrival, result.ClockClient: tc.failedClient} {
				g := DefaultGates()
				g.Clock = clock
				g.LatenessP99, g.MinRateRatio = time.Hour, 0
				var failed []string
				for _, c := range Evaluate(&rep, g).Checks {
					if !c.Pass {
						failed = append(failed, c.Name)
					}
				}
				if len(failed) != len(wantFailed) || (len(failed) > 0 && failed[0] != wantFailed[0]) {
					t.Errorf("gated on %s: failed %q, want %q", clock, failed, wantFailed)
				}
			}
		})
	}
}

// The clocks line says which clock gates and shows the others beside it, the arrival bounds'
// width beside each promise on them; without an exact clock it says there is none.
func TestClocksLine(t *testing.T) {
	c := result.Clocks{Gate: result.ClockArrival, OvershootClient: 1.2, OvershootArrival: 1.05, FalseRejectsClient: 2,
		ExcusedSkew: result.Percentiles{Count: 2, P99: 3 * ms, Max: 4 * ms}, ArrivalWidth: 12 * ms}
	exact := c
	exact.Exact, exact.OvershootExact, exact.FalseRejectsExact, exact.ExactTimes = result.ClockDecision, 1.1, 1, 900
	missing := exact
	missing.ExactMissing, missing.ExactOutside, missing.ExactOutsideMax = 3, 2, 250*time.Microsecond
	for _, tc := range []struct {
		c    result.Clocks
		gate string
		want string
	}{
		{c, result.ClockArrival, "clocks: gated on arrival bounds; overshoot x1.050 (arrival ±12ms p99) x1.200 (client); false rejects 0 (arrival ±12ms p99) 2 (client); " +
			"no exact clock: the target gives no decision time and runs behind no recording backend; 2 rejections excused only by arrival skew: p99 3ms, max 4ms"},
		{c, result.ClockClient, "clocks: gated on the client's send times; overshoot x1.200 (client) x1.050 (arrival ±12ms p99); false rejects 2 (client) 0 (arrival ±12ms p99); " +
			"no exact clock: the target gives no decision time and runs behind no recording backend; 2 rejections excused only by arrival skew: p99 3ms, max 4ms"},
		{exact, result.ClockDecision, "clocks: gated on the limiter's decision clock; overshoot x1.100 (decision) x1.050 (arrival ±12ms p99) x1.200 (client); false rejects 1 (decision) 0 (arrival ±12ms p99) 2 (client); " +
			"decision clock: 900 times; 2 rejections excused only by arrival skew: p99 3ms, max 4ms"},
		{missing, result.ClockArrival, "clocks: gated on arrival bounds; overshoot x1.050 (arrival ±12ms p99) x1.100 (decision) x1.200 (client); false rejects 0 (arrival ±12ms p99) 1 (decision) 2 (client); " +
			"decision clock: 900 times, 3 answers without one (on their arrival bounds), 2 outside their send and answer (by up to 250µs); 2 rejections excused only by arrival skew: p99 3ms, max 4ms"},
	} {
		tc.c.Gate = tc.gate
		if got := tc.c.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// busiestArrived against the count by definition on random spans.
func TestBusiestArrivedByDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sc := &arrivalScratch{} // kept between calls, as between clients
	for range 200 {
		n := rng.IntN(40)
		var sp []span
		for range n {
			s := time.Duration(rng.IntN(3000)) * ms
			sp = append(sp, span{s, s + time.Duration(rng.IntN(400))*ms})
		}
		want := 0
		for _, a := range sp {
			c := 0
			for _, b := range sp {
				if b.sent >= a.sent && b.answered < a.sent+time.Second {
					c++
				}
			}
			want = max(want, c)
		}
		if got := busiestArrived(sp, time.Second, sc); got != want {
			t.Fatalf("busiestArrived = %d, want %d on %v", got, want, sp)
		}
	}
}
