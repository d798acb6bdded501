package verdict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
)

func TestSlowChecks(t *testing.T) {
	j := Judging{Gates: accounting.DefaultGates(), Fault: result.FaultSlow}
	ev := func(r *result.ScenarioResult) Evidence {
		return Evidence{FaultTiming: r.FaultTiming, FaultLatency: r.FaultLatency}
	}
	res := func(p99 time.Duration, n int64) *result.ScenarioResult {
		r := &result.ScenarioResult{FaultTiming: &result.FaultTiming{Delay: 100 * time.Millisecond}}
		if n > 0 {
			r.FaultLatency = &result.Percentiles{Count: n, P50: time.Millisecond, P99: p99, Max: 2 * p99}
		}
		return r
	}
	for _, c := range []struct {
		name   string
		r      *result.ScenarioResult
		pass   bool
		figure float64
	}{
		{"answers within the timeout", res(52*time.Millisecond, 500), true, 52},
		{"waits for the slow store", res(104*time.Millisecond, 500), false, 104},
		{"nothing answered", res(0, 0), false, 0},
	} {
		got := slowChecks(&accounting.Report{}, j, ev(c.r))
		if len(got) != 1 || got[0].Pass != c.pass || got[0].Figure != c.figure {
			t.Errorf("%s: %+v, want pass %v at %v", c.name, got, c.pass, c.figure)
		}
	}
	// A limiter that waits 250 ms for its store, delay 100 ms, timeout 50 ms, lateness
	// tolerance 20 ms: its answers are bounded by a push in flight (50 ms), a call in flight
	// and its own (2 x 100 ms), and the harness's timing tolerance (20 ms).
	g := accounting.DefaultGates()
	g.LatenessP99 = 20 * time.Millisecond
	w := Judging{Gates: g, Fault: result.FaultSlow, StoreWait: 250 * time.Millisecond, StoreTimeout: 50 * time.Millisecond}
	for _, c := range []struct {
		p99  time.Duration
		pass bool
	}{{251 * time.Millisecond, true}, {271 * time.Millisecond, false}} {
		got := slowChecks(&accounting.Report{}, w, ev(res(c.p99, 500)))[0]
		if got.Name != "answer time while the store is slow (ms)" || got.Threshold != 270 || got.Pass != c.pass {
			t.Errorf("waiting limiter, p99 %v: %+v, want pass %v under 270", c.p99, got, c.pass)
		}
	}
	if d := slowChecks(&accounting.Report{}, j, ev(res(0, 0)))[0].Detail; !strings.HasPrefix(d, "not measured") {
		t.Errorf("void data reads %q, want not measured", d)
	}
}

// Across a store-restart a probe may not get more than 1.1x in a window that counts what it
// was given before the store died, once the replicas had a sync interval to push again what
// the store forgot; the outage's own acceptances are left out.
func TestRestartChecks(t *testing.T) {
	outage := result.Interval{From: 14 * time.Second, To: 15 * time.Second}
	// The documents' rule at time scale 0.2: window 12 s, sync interval 40 ms, grace 2 s.
	j := Judging{Gates: accounting.DefaultGates(), Window: 12 * time.Second, Sync: 40 * time.Millisecond, Grace: 2 * time.Second,
		Fault: result.FaultRestart, Outage: outage}
	at := func(from time.Duration, n int, every time.Duration) []time.Duration {
		var out []time.Duration
		for i := range n {
			out = append(out, from+time.Duration(i)*every)
		}
		return out
	}
	probe := func(times ...[]time.Duration) result.ProbeResult {
		var all []time.Duration
		for _, t := range times {
			all = append(all, t...)
		}
		return result.ProbeResult{ClientReport: result.ClientReport{ID: "probe-uniform2x", Limit: 600}, AcceptedAt: all}
	}
	for _, c := range []struct {
		name  string
		p     result.ProbeResult
		pass  bool
		worst float64
	}{
		// 500 before the kill, 100 more after recovery within the window: the store remembered.
		{"remembered", probe(at(9*time.Second, 500, 10*time.Millisecond), at(18*time.Second, 100, 10*time.Millisecond)), true, 1},
		// 500 before, 500 more after: the store forgot, and the replicas did not tell it again.
		{"forgotten", probe(at(9*time.Second, 500, 10*time.Millisecond), at(18*time.Second, 500, 2*time.Millisecond)), false, 1000.0 / 600},
		// 300 during the outage and its grace, decided alone: not counted here.
		{"the outage left out", probe(at(9*time.Second, 500, 10*time.Millisecond), at(14*time.Second, 300, 10*time.Millisecond), at(18*time.Second, 100, 10*time.Millisecond)), true, 1},
	} {
		got := restartChecks(j, Evidence{Probes: []result.ProbeResult{c.p}})
		if len(got) != 1 || got[0].Pass != c.pass || got[0].Figure != c.worst {
			t.Errorf("%s: %+v, want pass %v at %.3f", c.name, got, c.pass, c.worst)
		}
	}
}

func TestKillChecks(t *testing.T) {
	base := []result.Check{accounting.NewCheck("max overshoot", 1.05, accounting.OpAtMost, 1.1, "")}
	ev := Evidence{FaultTiming: &result.FaultTiming{Member: "replica-7"}}
	rep := &accounting.Report{RoutingErrors: 4}
	got := killChecks(base, rep, Judging{}, ev)
	if len(got) != 2 || got[0].Name != "max overshoot" || !got[1].Pass || !strings.Contains(got[1].Detail, "4 refused connections to the killed node counted as the harness's routing errors") ||
		!strings.Contains(got[1].Detail, "replica-7") {
		t.Errorf("a clean kill: %+v", got)
	}
	rep = &accounting.Report{ErrorsInFault: 329, Errors: result.Errors{Status5xx: 329}}
	got = killChecks(base, rep, Judging{LimiterOwnsKilledNode: true}, ev)
	if got[1].Pass || got[1].Figure != 329 || !strings.Contains(got[1].Detail, "counted as the limiter's") {
		t.Errorf("errors while a node is down: %+v", got[1])
	}
}

// A limiter that waits for its store longer than store-slow's delay never decides alone, so
// the 1.1x bound is gated while the store is slow; one that does not say how long it waits,
// or waits less than the delay, is judged by its answer times alone.
func TestStoreSlowOvershootGate(t *testing.T) {
	lat := &result.Percentiles{Count: 100, P50: 150 * time.Millisecond, P99: 160 * time.Millisecond, Max: 170 * time.Millisecond}
	ev := Evidence{FaultTiming: &result.FaultTiming{Delay: 100 * time.Millisecond}, FaultLatency: lat}
	rep := &accounting.Report{MaxOvershoot: 1.3, MaxOvershootClient: "c", OvershootArrival: 1.05, OvershootArrivalClient: "c"}
	for _, tc := range []struct {
		name  string
		wait  time.Duration
		clock string
		want  string // the gate's figure and verdict; "" for no gate
	}{
		{"waits 500 ms, gated on arrivals", 500 * time.Millisecond, result.ClockArrival, "1.05 pass"},
		{"waits 500 ms, gated on the client's clock", 500 * time.Millisecond, result.ClockClient, "1.3 FAIL"},
		{"waits less than the delay", 50 * time.Millisecond, result.ClockArrival, ""},
		{"how long it waits not known", 0, result.ClockArrival, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := accounting.DefaultGates()
			g.Clock = tc.clock
			got := ""
			for _, c := range slowChecks(rep, Judging{Gates: g, Fault: result.FaultSlow, StoreWait: tc.wait}, ev) {
				if c.Name == "overshoot while the store is slow" {
					got = fmt.Sprintf("%g %s", c.Figure, map[bool]string{true: "pass", false: "FAIL"}[c.Pass])
				}
			}
			if got != tc.want {
				t.Errorf("gate %q, want %q", got, tc.want)
			}
		})
	}
}

// Judge puts a fault's gates in place of the 1.1x gate and keeps the rest: the same names a
// load test prints, for loadtest and the hunt alike.
func TestJudgeCheckNames(t *testing.T) {
	rep := &accounting.Report{Scheduled: 10, Outcomes: 10, AskedRate: 10, AchievedRate: 10}
	g := accounting.DefaultGates()
	for _, tc := range []struct {
		fault string
		want  string
	}{
		{result.FaultNone, "max overshoot|false rejects|errors outside fault windows|locked-out clients|generator lateness p99 (ms)|achieved / asked rate"},
		{result.FaultStop, "overshoot during the outage|overshoot after recovery|false rejects|errors outside fault windows|locked-out clients|generator lateness p99 (ms)|achieved / asked rate|5xx responses|errors while the store is away"},
		{result.FaultSlow, "overshoot during the outage|overshoot after recovery|false rejects|errors outside fault windows|locked-out clients|generator lateness p99 (ms)|achieved / asked rate|5xx responses|errors while the store is away|answer time while the store is slow (ms)"},
		{result.FaultRestart, "overshoot during the outage|overshoot after recovery|false rejects|errors outside fault windows|locked-out clients|generator lateness p99 (ms)|achieved / asked rate|5xx responses|errors while the store is away|overshoot across the restart"},
		{result.FaultKill, "max overshoot|false rejects|errors outside fault windows|locked-out clients|generator lateness p99 (ms)|achieved / asked rate|errors while a node is down"},
	} {
		v := Judge(rep, Judging{Gates: g, Replicas: 3, Fault: tc.fault}, Evidence{})
		var names []string
		for _, c := range v.Checks {
			names = append(names, c.Name)
		}
		if got := strings.Join(names, "|"); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.fault, got, tc.want)
		}
		if v.Clocks.Gate != result.ClockArrival {
			t.Errorf("%q: gated on %q, want arrival by default", tc.fault, v.Clocks.Gate)
		}
	}
}

// The fault gates count a probe's acceptances on the gate clock: three sent in one window
// but answered after it are one window's on the client's clock, not on arrival bounds.
func TestFaultGatesOnTheGateClock(t *testing.T) {
	ms := time.Millisecond
	p := result.ProbeResult{ClientReport: result.ClientReport{ID: "probe", Limit: 2},
		AcceptedAt: []time.Duration{3000 * ms, 3900 * ms, 3950 * ms},
		AnsweredAt: []time.Duration{3001 * ms, 4200 * ms, 4250 * ms}}
	for _, tc := range []struct {
		clock          string
		after, restart int
	}{
		{result.ClockArrival, 2, 2},
		{result.ClockClient, 3, 3},
	} {
		if got := AfterRecovery(p, 2*time.Second, time.Second, tc.clock); got != tc.after {
			t.Errorf("%s: after recovery %d, want %d", tc.clock, got, tc.after)
		}
		g := accounting.DefaultGates()
		g.Clock = tc.clock
		j := Judging{Gates: g, Window: time.Second, Fault: result.FaultRestart, Outage: result.Interval{From: time.Second, To: 1500 * ms}, Grace: 100 * ms}
		c := restartChecks(j, Evidence{Probes: []result.ProbeResult{p}})[0]
		if c.Figure != float64(tc.restart)/2 {
			t.Errorf("%s: across the restart x%v, want x%v", tc.clock, c.Figure, float64(tc.restart)/2)
		}
	}
	p.AnsweredAt = nil // a result written before answer times were kept: counted by its sends
	if got := AfterRecovery(p, 2*time.Second, time.Second, result.ClockArrival); got != 3 {
		t.Errorf("without answer times: %d, want the sends' 3", got)
	}
}

// The lock-out gate is judged in every scenario, faults included: a client sending steadily
// over its limit and admitted a sixth of it fails the run, and a run with no such client says
// the gate was not measured and does not fail on it.
func TestJudgeLockout(t *testing.T) {
	starved := &accounting.Report{Scheduled: 10, Outcomes: 10, AskedRate: 10, AchievedRate: 10,
		Clients: []result.ClientReport{{ID: "probe-uniform2x", Limit: 600, Window: 6 * time.Second,
			SteadyWindows: 2, SteadyAt: 12 * time.Second, SteadyAdmitted: 100, SteadyShare: 100.0 / 600,
			SteadyAtArrival: 12 * time.Second, SteadyAdmittedArrival: 110, SteadyShareArrival: 110.0 / 600}}}
	void := &accounting.Report{Scheduled: 10, Outcomes: 10, AskedRate: 10, AchievedRate: 10}
	for _, fault := range []string{result.FaultNone, result.FaultStop, result.FaultKill} {
		v := Judge(starved, Judging{Gates: accounting.DefaultGates(), Replicas: 3, Fault: fault}, Evidence{})
		c := lockoutCheck(t, v)
		if c.Pass || v.Pass || c.Figure != 1 || !strings.Contains(c.Detail, "worst: client probe-uniform2x, 110 admitted in the 6s window from 12s, limit 600 (x0.183; on arrival bounds)") {
			t.Errorf("%q: starved client judged %v, run pass %v", fault, c, v.Pass)
		}
		v = Judge(void, Judging{Gates: accounting.DefaultGates(), Replicas: 3, Fault: fault}, Evidence{})
		if c := lockoutCheck(t, v); !c.NotMeasured || !c.Pass || !strings.HasPrefix(c.String(), "not measured locked-out clients") {
			t.Errorf("%q: no steady client judged %v", fault, c)
		}
	}
}

func lockoutCheck(t *testing.T, v Verdict) result.Check {
	t.Helper()
	for _, c := range v.Checks {
		if c.Name == "locked-out clients" {
			return c
		}
	}
	t.Fatal("no locked-out clients check")
	return result.Check{}
}

// A link fault's outage bound is one limit per cut node plus the 1.1x the store admits for
// the others: 4 of 8 cut allow x5.1, where a store fault allows one limit for each of 8.
func TestLinkFaultOutageBound(t *testing.T) {
	over := []result.Check{{Name: "max overshoot"}}
	for _, tc := range []struct {
		fault string
		cut   int
		want  float64
	}{
		{result.FaultPartition, 4, 5.1},
		{result.FaultPartitionBlackhole, 4, 5.1},
		{result.FaultFlap, 2, 3.1},
		{result.FaultLinkSlow, 4, 5.1},
		{result.FaultStop, 0, 8},
	} {
		j := Judging{Gates: accounting.DefaultGates(), Window: time.Second, Replicas: 8, Fault: tc.fault, CutNodes: tc.cut,
			Outage: result.Interval{From: time.Second, To: 2 * time.Second}}
		var rep accounting.Report
		checks := faultChecks(over, &rep, j, Evidence{})
		found := false
		for _, c := range checks {
			if c.Name == "overshoot during the outage" {
				found = true
				if d := c.Threshold - tc.want; d > 1e-9 || d < -1e-9 {
					t.Errorf("%s with %d cut: threshold %v, want %v", tc.fault, tc.cut, c.Threshold, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no outage bound in %v", tc.fault, checks)
		}
	}
}

// Overshoot after recovery reads the probes' busiest window after the grace: a probe admitted
// twice its limit fails it, one within 1.1x passes, and a run with no limited probe says it
// was not measured instead of passing at x0.
func TestAfterRecoveryCheck(t *testing.T) {
	j := Judging{Gates: accounting.DefaultGates(), Replicas: 3, Fault: result.FaultStop}
	for _, tc := range []struct {
		name              string
		probes            []result.ProbeResult
		figure            float64
		pass, notMeasured bool
	}{
		{"twice the limit", []result.ProbeResult{{ClientReport: result.ClientReport{ID: "probe-uniform2x", Limit: 600}, AfterRecovery: 1200}}, 2, false, false},
		{"within 1.1x", []result.ProbeResult{{ClientReport: result.ClientReport{ID: "probe-uniform2x", Limit: 600}, AfterRecovery: 600}}, 1, true, false},
		{"no limited probe", []result.ProbeResult{{ClientReport: result.ClientReport{ID: "probe-unlimited"}, AfterRecovery: 5000}}, 0, true, true},
		{"no probe", nil, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := afterRecoveryCheck(j, Evidence{Probes: tc.probes})
			if c.Name != "overshoot after recovery" || c.Figure != tc.figure || c.Pass != tc.pass || c.NotMeasured != tc.notMeasured {
				t.Errorf("%v (not measured %v), want figure %g pass %v not measured %v", c, c.NotMeasured, tc.figure, tc.pass, tc.notMeasured)
			}
			if tc.notMeasured && !strings.HasPrefix(c.String(), "not measured overshoot after recovery") {
				t.Errorf("%q: want it said not measured", c.String())
			}
		})
	}
}
