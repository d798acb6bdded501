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
			ck := CheckLockout(&r, DefaultMinShare)
			if ck.Name != "locked-out clients" || ck.Figure != tc.figure || ck.Pass != tc.pass || ck.NotMeasured == tc.measured {
				t.Errorf("check %v (not measured %v), want figure %g pass %v measured %v", ck, ck.NotMeasured, tc.figure, tc.pass, tc.measured)
			}
			if !tc.pass && !strings.Contains(ck.Detail, fmt.Sprintf("worst: client steady, %d admitted in the 1s window from", tc.admitted)) {
				t.Errorf("a lock-out says %q", ck.Detail)
			}
			if !tc.measured && !strings.HasPrefix(ck.Detail, "not measured: no client sent steadily over its limit") {
				t.Errorf("void data says %q", ck.Detail)
			}
		})
	}
}
