package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// Judge gates on the exact clock the system declares where the outcomes carry it (gate auto):
// a client whose two bursts the limiter decided 700 ms apart, though they were sent a window
// apart, fails there and passes on arrival bounds; with no decision time in the outcomes it
// is gated on arrival bounds, and the clocks say why.
func TestJudgeGatesOnTheExactClock(t *testing.T) {
	ms := time.Millisecond
	report := func(decided bool) accounting.Report {
		s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 3, Window: time.Second}}, Duration: 2 * time.Second}
		var outs []traffic.Outcome
		for i, at := range []time.Duration{0, ms, 2 * ms, 1000 * ms, 1001 * ms, 1002 * ms} {
			s.Requests = append(s.Requests, schedule.Request{At: at})
			lat, dec := 2*ms, at+ms
			if i < 3 { // the first burst waited 290 ms on its way to the limiter
				lat, dec = 300*ms, at+290*ms
			}
			outs = append(outs, traffic.Outcome{Index: i, Code: 200, Sent: at, Latency: lat, DecidedAt: dec, Decided: decided})
		}
		a, err := accounting.New(&s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if err := a.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		return a.Report()
	}
	gates := accounting.DefaultGates()
	gates.LatenessP99, gates.MinRateRatio = time.Hour, 0
	for _, tc := range []struct {
		name    string
		decided bool
		gate    string
		over    float64
		pass    bool
		why     string
	}{
		{"the limiter said when it decided", true, result.ClockDecision, 2, false, ""},
		{"it said nothing", false, result.ClockArrival, 1, true, "no answer carried one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := report(tc.decided)
			v := Judge(&rep, Judging{Gates: gates, Window: time.Second, Exact: result.ClockDecision}, Evidence{})
			if v.Clocks.Gate != tc.gate || v.Pass != tc.pass || !strings.Contains(v.Clocks.Why, tc.why) {
				t.Errorf("gated on %q (why %q), pass %v; want %q (%q), pass %v", v.Clocks.Gate, v.Clocks.Why, v.Pass, tc.gate, tc.why, tc.pass)
			}
			if c := v.Checks[0]; c.Name != "max overshoot" || c.Figure != tc.over {
				t.Errorf("first check %s, want max overshoot at x%g", c, tc.over)
			}
		})
	}
}
