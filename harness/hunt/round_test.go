package hunt

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/harness/verdict"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// A store-fault variant is judged as loadtest judges a fail-open scenario: a limiter that
// answers 500 while its store is away (Traefik's rateLimit with Redis, whose hunt called its
// store-fault family "holds" on a variant with 600 500s) admits no more than its limit, yet
// it breaks the promise, and the family's verdict says so with the count. The client sends
// twice its limit; its limit is admitted before the outage and it is refused after it.
func TestFaultVariantErrorsWhileTheStoreIsAway(t *testing.T) {
	const (
		limit = 600
		n     = 1800 // one every 10 ms over 18 s: twice the limit
	)
	window := 12 * time.Second
	outage := &schedule.Fault{Kind: "stop", From: 6 * time.Second, To: 12 * time.Second}
	env := modelEnv(8, 0)
	env.Grace = time.Second
	var fam Family
	for _, f := range Families() {
		if f.Name == FamilyFault {
			fam = f
		}
	}
	if fam.Kind != Fault {
		t.Fatalf("no %s family of kind fault", FamilyFault)
	}
	for _, tc := range []struct {
		name     string
		inOutage uint16 // the status of every request sent while the store is away or in the grace
		errors   int
		breaks   bool
	}{
		{"fails open: admits within one limit per node", 200, 0, false},
		{"fails closed: 500 while the store is away", 500, 700, true}, // 6 s .. 13 s at 100 a second
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := schedule.Schedule{
				Clients:  []schedule.Client{{ID: "v", Limit: limit, Window: window, Probe: true}},
				Duration: 18 * time.Second,
			}
			for i := range n {
				sched.Requests = append(sched.Requests, schedule.Request{At: time.Duration(i) * 10 * time.Millisecond, Replica: int16(i % 8)})
			}
			acc, err := accounting.New(&sched, faultWindows(outage, env.Grace))
			if err != nil {
				t.Fatal(err)
			}
			sv := &sentVariant{v: Variant{}, fam: fam, sched: sched, acc: acc}
			for i, q := range sched.Requests {
				code := uint16(429)
				switch {
				case q.At >= outage.From && q.At < outage.To+env.Grace:
					code = tc.inOutage
				case q.At < outage.From: // its limit admitted before the outage, refused after it: earned
					code = 200
				}
				if code == 200 {
					sv.accepted = append(sv.accepted, acceptance{q.At, q.At + time.Millisecond})
				}
				if err := acc.Add(traffic.Outcome{Index: i, Code: code, Sent: q.At, Latency: time.Millisecond}); err != nil {
					t.Fatal(err)
				}
			}
			gates := accounting.DefaultGates()
			gates.LatenessP99 = 20 * time.Millisecond
			gates.MaxOvershoot = 1.25 // the run's gate, not the document's constant
			h, m := judgeVariant(sv, 1, env, result.FaultStop, outage.To+env.Grace, verdict.Judging{Gates: gates})
			// loadtest's fault gates, from the one judge: 5xx counted apart, the run's 1.1x gate.
			for _, c := range h.Checks {
				switch c.Name {
				case "5xx responses":
					if c.Figure != float64(tc.errors) || c.Pass == tc.breaks {
						t.Errorf("5xx responses: %v, pass %v; want %d", c.Figure, c.Pass, tc.errors)
					}
				case "overshoot after recovery":
					if c.Threshold != gates.MaxOvershoot {
						t.Errorf("overshoot after recovery judged against %v, want the gates' %v", c.Threshold, gates.MaxOvershoot)
					}
				}
			}
			if h.Clocks == nil || h.Clocks.Gate != result.ClockArrival {
				t.Errorf("clocks %+v: want both clocks, gated on arrival", h.Clocks)
			}
			if h.ErrorsInFault != tc.errors {
				t.Errorf("errors while the store is away: %d, want %d", h.ErrorsInFault, tc.errors)
			}
			var found bool
			for _, c := range h.Checks {
				if c.Name == "errors while the store is away" {
					found = true
					if c.Pass == tc.breaks || c.Figure != float64(tc.errors) {
						t.Errorf("check %q: figure %v pass %v, want %d and pass %v", c.Name, c.Figure, c.Pass, tc.errors, !tc.breaks)
					}
				}
			}
			if !found {
				t.Errorf("no check \"errors while the store is away\" among %d", len(h.Checks))
			}
			if got := h.Outcome == outcome.Fail; got != tc.breaks {
				t.Errorf("outcome %s, breaks %v, want %v (x%.3f while away, x%.3f after, %d errors)", h.Outcome, got, tc.breaks, h.Overshoot, h.AfterRecovery, h.ErrorsInFault)
			}
			if tc.breaks && m.Score < float64(tc.errors) {
				t.Errorf("score %.3f: a variant with %d errors while the store is away must rank above any without", m.Score, tc.errors)
			}
			f := result.HuntFamily{Kind: "fault", Worst: &h, Breaks: tc.breaks}
			t.Logf("%s", f.Verdict())
		})
	}
}

// An attack variant is judged by every check a load test's scenario is: one that stays
// within 1.1x and rejects no client within its limit, but answers 500 to some of its
// requests, breaks the promise (round.go's old breaks() called it "holds"), and the family's
// verdict names the check its figures do not show.
func TestAttackVariantJudgedByEveryCheck(t *testing.T) {
	const limit = 600
	window := 12 * time.Second
	env := modelEnv(8, 0)
	var fam Family
	for _, f := range Families() {
		if f.Name == FamilyEdge {
			fam = f
		}
	}
	for _, tc := range []struct {
		name   string
		errors int // the first requests answered 500
		want   outcome.Outcome
	}{
		{"every request answered", 0, outcome.Pass},
		{"five 500s", 5, outcome.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := schedule.Schedule{Clients: []schedule.Client{{ID: "v", Limit: limit, Window: window, Probe: true}}, Duration: 12 * time.Second}
			for i := range 600 { // its limit, one every 20 ms: within it
				sched.Requests = append(sched.Requests, schedule.Request{At: time.Duration(i) * 20 * time.Millisecond, Replica: int16(i % 8)})
			}
			acc, err := accounting.New(&sched, nil)
			if err != nil {
				t.Fatal(err)
			}
			sv := &sentVariant{fam: fam, sched: sched, acc: acc}
			for i, q := range sched.Requests {
				code := uint16(200)
				if i < tc.errors {
					code = 500
				} else {
					sv.accepted = append(sv.accepted, acceptance{q.At, q.At + time.Millisecond})
				}
				if err := acc.Add(traffic.Outcome{Index: i, Code: code, Sent: q.At, Latency: time.Millisecond}); err != nil {
					t.Fatal(err)
				}
			}
			gates := accounting.DefaultGates()
			gates.LatenessP99 = 20 * time.Millisecond
			h, _ := judgeVariant(sv, 1, env, "", 0, verdict.Judging{Gates: gates})
			if h.Outcome != tc.want || h.Overshoot > 1.1 || h.FalseRejects != 0 {
				t.Fatalf("outcome %s (x%.3f, %d false rejects), want %s", h.Outcome, h.Overshoot, h.FalseRejects, tc.want)
			}
			f := result.HuntFamily{Name: fam.Name, Kind: string(fam.Kind), Worst: &h, Breaks: h.Outcome == outcome.Fail}
			if got := f.Verdict(); tc.errors > 0 && !strings.Contains(got, "also failed: errors outside fault windows (5)") {
				t.Errorf("verdict %q: want it to name the errors check", got)
			}
		})
	}
}

// A fault round on a partition of the far zone is judged with the partition's bound: one limit
// for each cut node (the far zone's) plus the gate for the others, as loadtest judges it.
func TestFaultVariantOnAPartitionCountsTheCutNodes(t *testing.T) {
	const limit = 600
	window := 12 * time.Second
	outage := &schedule.Fault{Kind: result.FaultPartition, From: 6 * time.Second, To: 12 * time.Second}
	env := modelEnv(8, 0)
	env.Grace, env.Far = time.Second, []int{4, 5, 6, 7}
	var fam Family
	for _, f := range Families() {
		if f.Name == FamilyPartitionEdge {
			fam = f
		}
	}
	sched := schedule.Schedule{Clients: []schedule.Client{{ID: "v", Limit: limit, Window: window, Probe: true}}, Duration: 18 * time.Second}
	for i := range 1800 {
		sched.Requests = append(sched.Requests, schedule.Request{At: time.Duration(i) * 10 * time.Millisecond, Replica: int16(i % 8)})
	}
	acc, err := accounting.New(&sched, faultWindows(outage, env.Grace))
	if err != nil {
		t.Fatal(err)
	}
	sv := &sentVariant{fam: fam, sched: sched, acc: acc}
	for i, q := range sched.Requests {
		code := uint16(429)
		if q.At < outage.From || q.At < outage.To+env.Grace && i%2 == 0 {
			code = 200
			sv.accepted = append(sv.accepted, acceptance{q.At, q.At + time.Millisecond})
		}
		if err := acc.Add(traffic.Outcome{Index: i, Code: code, Sent: q.At, Latency: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	gates := accounting.DefaultGates()
	gates.LatenessP99 = 20 * time.Millisecond
	h, _ := judgeVariant(sv, 1, env, result.FaultPartition, outage.To+env.Grace, verdict.Judging{Gates: gates, Replicas: 8})
	for _, c := range h.Checks {
		if c.Name == "overshoot during the outage" {
			if want := 4 + gates.MaxOvershoot; c.Threshold != want {
				t.Errorf("overshoot during the outage judged against %v, want %v (4 cut nodes + %v)", c.Threshold, want, gates.MaxOvershoot)
			}
			return
		}
	}
	t.Errorf("no check \"overshoot during the outage\" among %d", len(h.Checks))
}

// An unpaced family is judged without the generator's checks (its lateness is what it
// sends), by every other check.
func TestUnpacedVariantKeepsTheLimitersChecksOnly(t *testing.T) {
	late := result.Check{Name: accounting.CheckLatenessName, Figure: 176.6, Threshold: 25, Pass: false}
	rate := result.Check{Name: accounting.CheckRateName, Figure: 0.5, Threshold: 0.9, Pass: false}
	over := result.Check{Name: "max overshoot", Figure: 1.0, Threshold: 1.1, Pass: true}
	fr := result.Check{Name: accounting.CheckFalseRejectsName, Figure: 1, Threshold: 0, Pass: false}
	for _, tc := range []struct {
		name     string
		checks   []result.Check
		pass     bool
		outcome  outcome.Outcome
		keptName []string
	}{
		{"late only", []result.Check{late, rate, over}, true, outcome.Pass, []string{"max overshoot"}},
		{"late and a false reject", []result.Check{late, over, fr}, false, outcome.Fail, []string{"max overshoot", "false rejects"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := withoutGeneratorChecks(verdict.Verdict{Checks: tc.checks, GeneratorBound: true, Broken: !tc.pass})
			var names []string
			for _, c := range v.Checks {
				names = append(names, c.Name)
			}
			if v.Pass != tc.pass || v.GeneratorBound || v.Outcome() != tc.outcome || !slices.Equal(names, tc.keptName) {
				t.Errorf("pass %v, generator-bound %v, outcome %s, checks %v; want pass %v, %s, %v",
					v.Pass, v.GeneratorBound, v.Outcome(), names, tc.pass, tc.outcome, tc.keptName)
			}
		})
	}
}
