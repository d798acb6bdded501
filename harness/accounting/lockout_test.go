package accounting

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// A client with a limit of 60 a second sends for four seconds, either evenly or in a burst at
// each window's start; the limiter admits the first admit(k) of window k. A window counts when
// the client sent steadily over its limit in it and in the one before, outside the faults.
func TestLockout(t *testing.T) {
	const limit = 60
	w := time.Second
	even := func(perWindow int) []time.Duration {
		var at []time.Duration
		for i := range 4 * perWindow {
			at = append(at, time.Duration(i)*w/time.Duration(perWindow))
		}
		return at
	}
	burst := func(perWindow int) []time.Duration {
		var at []time.Duration
		for k := range 4 {
			for i := range perWindow {
				at = append(at, time.Duration(k)*w+time.Duration(i)*50*time.Millisecond/time.Duration(perWindow))
			}
		}
		return at
	}
	all := func(n int) func(int) int { return func(int) int { return n } }
	noneIn2 := func(k int) int { // its limit, but nothing in the window from 2 s
		if k == 2 {
			return 0
		}
		return limit
	}
	for _, tc := range []struct {
		name     string
		at       []time.Duration
		admit    func(k int) int
		faults   []result.Interval
		dead     *result.Interval
		steady   int // windows steady over the limit, outside faults
		admitted int // the fewest admitted in one
		figure   float64
		pass     bool
		measured bool
	}{
		{"a steady 2x sender admitted its limit", even(2 * limit), all(limit), nil, nil, 3, limit, 0, true, true},
		{"a steady 2x sender admitted a sixth of its limit", even(2 * limit), all(limit / 6), nil, nil, 3, limit / 6, 1, false, true},
		{"admitted 0.9x its limit", even(2 * limit), all(54), nil, nil, 3, 54, 0, true, true},
		{"admitted one short of 0.9x", even(2 * limit), all(53), nil, nil, 3, 53, 1, false, true},
		{"a burst once a window is not steady", burst(2 * limit), all(limit / 6), nil, nil, 0, 0, 0, true, false},
		{"within its limit is not over it", even(limit), all(limit / 6), nil, nil, 0, 0, 0, true, false},
		{"a window in a fault is left out", even(2 * limit), noneIn2,
			[]result.Interval{{From: 2200 * time.Millisecond, To: 2500 * time.Millisecond}}, nil, 2, limit, 0, true, true},
		{"a window while a replica is down is left out", even(2 * limit), noneIn2,
			nil, &result.Interval{From: 1900 * time.Millisecond, To: 2100 * time.Millisecond}, 1, limit, 0, true, true},
		{"the same window outside a fault locks it out", even(2 * limit), noneIn2,
			nil, nil, 3, 0, 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schedule.Schedule{Clients: []schedule.Client{{ID: "steady", Limit: limit, Window: w}}, Duration: 4 * w}
			for _, at := range tc.at {
				s.Requests = append(s.Requests, schedule.Request{At: at, Replica: 1})
			}
			a, err := New(&s, tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			if tc.dead != nil {
				a.SetDeadReplica(0, *tc.dead)
			}
			admitted := map[int]int{}
			for i, at := range tc.at {
				k := int(at / w)
				o := traffic.Outcome{Index: i, Code: 429, Sent: at, Latency: time.Millisecond}
				if admitted[k] < tc.admit(k) {
					admitted[k]++
					o.Code = 200
				}
				if err := a.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			r := a.Report()
			c := r.Clients[0]
			if c.SteadyWindows != tc.steady || c.SteadyAdmitted != tc.admitted {
				t.Errorf("%d steady windows, fewest admitted %d; want %d, %d", c.SteadyWindows, c.SteadyAdmitted, tc.steady, tc.admitted)
			}
			// Answered within a millisecond, a window's acceptances may have arrived in it
			// alone: both clocks count the same.
			if c.SteadyAdmittedArrival != tc.admitted {
				t.Errorf("fewest admitted on arrival bounds %d, want %d", c.SteadyAdmittedArrival, tc.admitted)
			}
			for _, clock := range []string{result.ClockArrival, result.ClockClient} {
				ck := CheckLockout(&r, DefaultMinShare, clock)
				if ck.Name != "locked-out clients" || ck.Figure != tc.figure || ck.Pass != tc.pass || ck.NotMeasured == tc.measured {
					t.Errorf("%s: check %v (not measured %v), want figure %g pass %v measured %v", clock, ck, ck.NotMeasured, tc.figure, tc.pass, tc.measured)
				}
				if !tc.pass && !strings.Contains(ck.Detail, fmt.Sprintf("worst: client steady, %d admitted in the 1s window from", tc.admitted)) {
					t.Errorf("%s: a lock-out says %q", clock, ck.Detail)
				}
				if !tc.measured && !strings.HasPrefix(ck.Detail, "not measured: no client sent steadily over its limit") {
					t.Errorf("%s: void data says %q", clock, ck.Detail)
				}
			}
		})
	}
}

// A steady sender answered 200 ms after each send, admitted the last of each window's sends:
// by send time the window from 2 s admits 50 of its limit of 60 (under 0.9x), but 24 of the
// window before's acceptances were answered after 2 s and may have arrived in it, so on
// arrival bounds it may have admitted 74. Each clock gates its own count and names the other.
func TestLockoutOnBothClocks(t *testing.T) {
	const limit, perWindow = 60, 120
	w := time.Second
	s := schedule.Schedule{Clients: []schedule.Client{{ID: "steady", Limit: limit, Window: w}}, Duration: 4 * w}
	for i := range 4 * perWindow {
		s.Requests = append(s.Requests, schedule.Request{At: time.Duration(i) * w / perWindow, Replica: 1})
	}
	a, err := New(&s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range s.Requests {
		admit := limit
		if i/perWindow == 2 {
			admit = 50
		}
		o := traffic.Outcome{Index: i, Code: 429, Sent: req.At, Latency: 200 * time.Millisecond}
		if i%perWindow >= perWindow-admit {
			o.Code = 200
		}
		if err := a.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Report()
	c := r.Clients[0]
	if c.SteadyWindows != 3 || c.SteadyAdmitted != 50 || c.SteadyAt != 2*w || c.SteadyAdmittedArrival != 74 {
		t.Errorf("steady %d, fewest by send time %d from %v, on arrival bounds %d; want 3, 50 from 2s, 74",
			c.SteadyWindows, c.SteadyAdmitted, c.SteadyAt, c.SteadyAdmittedArrival)
	}
	for _, tc := range []struct {
		clock  string
		figure float64
		says   string
	}{
		{result.ClockClient, 1, "worst: client steady, 50 admitted in the 1s window from 2s, limit 60 (x0.833; by send time); on arrival bounds: 0 locked out"},
		{result.ClockArrival, 0, "; by send time: 1 locked out, worst client steady, 50 admitted"},
	} {
		ck := CheckLockout(&r, DefaultMinShare, tc.clock)
		if ck.Figure != tc.figure || ck.Pass != (tc.figure == 0) || !strings.Contains(ck.Detail, tc.says) {
			t.Errorf("%s: %v, want figure %g saying %q", tc.clock, ck, tc.figure, tc.says)
		}
	}
}
