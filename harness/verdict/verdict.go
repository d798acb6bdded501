// Package verdict is the one place a run is judged: the requirements' gates on the clock the
// run chose, a fault's own gates, and the document's claims. harness loadtest, harness judge
// (re-judging a run directory or merging shards) and harness hunt all judge through Judge, so
// a check has one name, one figure and one threshold wherever it is printed.
package verdict

import (
	"fmt"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// Judging is what a scenario is judged with, fixed when it starts (the window and sync
// interval at the run's time scale, the fault and its recovery grace) and completed with the
// outage as measured once its traffic is over.
type Judging struct {
	Gates    accounting.Gates
	Window   time.Duration // the schedule's window, scaled
	Sync     time.Duration // the replicas' sync interval, scaled; 0 when not known
	Replicas int
	// Shards is how many shards the store has (a Redis Cluster's masters); 0 or 1: one Redis.
	Shards int
	// Fault is the scenario's fault (result.Fault*); result.FaultNone for none.
	Fault string
	// Outage is when the faulted member was away, as measured (as planned until then).
	Outage result.Interval
	// Grace is how long after the store returned the 1.1x gate applies again.
	Grace time.Duration
	// StoreTimeout is how long a replica waits for its store before it decides alone;
	// StoreWait, when set, is how long the limiter under test waits for a slow store (0: not
	// known, and the store-slow overshoot gate is not applied).
	StoreTimeout, StoreWait time.Duration
	// StoreFollow, when set, is how long the limiter's store timeout and wait may grow as
	// they follow its measured round trip to the store (the bounded design's: 4 × its wait);
	// a slow store's answers may then take that long in place of each (0: they are fixed).
	StoreFollow time.Duration
	// LimiterOwnsKilledNode says a refused connection to a killed node counts as the
	// limiter's error (a target file's faults.killed_node: limiter), not the harness's.
	LimiterOwnsKilledNode bool
	// Exact is the exact clock the system under test declares (result.ClockDecision: its
	// answers say when it decided; ClockBackend: it proxies to a recording backend), empty
	// for none: the clock Gates.Clock auto gates on where the outcomes carry it.
	Exact string
	// CutNodes is how many replicas a link fault (result.LinkFault) cuts from the store while
	// the others keep it (the far zone's); LinkRTT is the round trip of their link before it
	// was slowed, latency and jitter both ways.
	CutNodes int
	LinkRTT  time.Duration
}

// Recovered is when the 1.1x bound applies again after a store fault: the recovery grace
// after the store returned, and for a store that came back empty (store-restart) one sync
// interval more, in which the replicas push again what the store forgot.
func (j Judging) Recovered() time.Duration {
	at := j.Outage.To + j.Grace
	if j.Fault == result.FaultRestart {
		at += j.Sync
	}
	return at
}

// Clock is the clock the promises are gated on as far as the judging alone says: the
// client's, an exact clock named, or arrival bounds (auto before Judge has read the outcomes:
// Judge makes it concrete, and its Verdict.Clocks.Gate is the clock it gated on).
func (j Judging) Clock() string {
	switch c := j.Gates.Clock; c {
	case result.ClockClient, result.ClockDecision, result.ClockBackend:
		return c
	}
	return result.ClockArrival
}

// Evidence is what a fault's gates read beside the account: the probes' acceptance times, the
// fault as it happened, and the answer times while the store was away.
type Evidence struct {
	Probes       []result.ProbeResult
	FaultTiming  *result.FaultTiming
	FaultLatency *result.Percentiles
}

// Verdict is a scenario judged.
type Verdict struct {
	Checks []result.Check
	Pass   bool // every check passed
	// GeneratorBound: the generator did not send the schedule faithfully; the limiter's
	// figures are not evidence either way.
	GeneratorBound bool
	// Broken: a check other than the generator's failed, a promise broken on the traffic
	// that was sent, on schedule or not (harness hunt's pressure ladder pushes the generator
	// past its schedule on purpose and reads this).
	Broken bool
	// Clocks are both promises on both clocks, with the one that gated them.
	Clocks result.Clocks
}

// Outcome is the scenario's outcome: generator-bound when the generator's checks failed,
// fail when another did, pass otherwise.
func (v Verdict) Outcome() outcome.Outcome { return outcome.Of(v.Pass, v.GeneratorBound) }

// Judge judges a scenario's account: the requirements on the judging's clock and the
// generator's checks, and with a fault the fault's gates in place of the 1.1x gate.
func Judge(rep *accounting.Report, j Judging, ev Evidence) Verdict {
	clock, why := rep.GateClock(j.Gates.Clock, j.Exact)
	j.Gates.Clock = clock
	g := j.Gates
	v := accounting.Evaluate(rep, g)
	out := Verdict{Checks: v.Checks, GeneratorBound: v.GeneratorBound, Clocks: rep.Clocks(g.Clock)}
	out.Clocks.Why = why
	switch j.Fault {
	case result.FaultNone:
	case result.FaultKill:
		out.Checks = killChecks(out.Checks, rep, j, ev)
	default:
		out.Checks = faultChecks(out.Checks, rep, j, ev)
	}
	out.Pass = true
	for _, c := range out.Checks {
		out.Pass = out.Pass && c.Pass
		out.Broken = out.Broken || !c.Pass && !accounting.IsGeneratorCheck(c.Name)
	}
	return out
}

// AfterRecovery is the most of a probe's acceptances in one window-long interval among those
// sent at or after recovered, on the clock named (arrival: those that must have arrived in it;
// a probe recorded without answer times is counted by its sends).
func AfterRecovery(p result.ProbeResult, recovered, window time.Duration, clock string) int {
	return busiestOf(p, func(t time.Duration) bool { return t >= recovered }, window, clock)
}

// busiestOf is the most of a probe's acceptances sent at a time keep takes in one window-long
// interval, on the clock named.
func busiestOf(p result.ProbeResult, keep func(time.Duration) bool, window time.Duration, clock string) int {
	arrival := clock != result.ClockClient && len(p.AnsweredAt) == len(p.AcceptedAt)
	var sent, answered []time.Duration
	for i, t := range p.AcceptedAt {
		if keep(t) {
			sent = append(sent, t)
			if arrival {
				answered = append(answered, p.AnsweredAt[i])
			}
		}
	}
	if arrival {
		return accounting.BusiestArrived(sent, answered, window)
	}
	slices.Sort(sent)
	return accounting.Busiest(sent, window)
}

// faultChecks judge a store fault. The store's absence replaces the 1.1x gate: during the
// outage a replica decides alone, so the bound is one limit per node (the document); 1.1x
// applies again once the store is back (store-restart: one sync interval later). No 5xx,
// ever, and no request left unanswered while the store is away; a slow store is not waited
// for (slowChecks) unless the limiter says it waits for it (StoreWait), and one that came
// back empty is told again what it forgot (restartChecks).
func faultChecks(checks []result.Check, rep *accounting.Report, j Judging, ev Evidence) []result.Check {
	over, _ := rep.Overshoot(j.Clock())
	out := make([]result.Check, 0, len(checks)+5)
	for _, c := range checks {
		if c.Name == "max overshoot" && result.LinkFault(j.Fault) {
			// The cut nodes decide alone, each at most one limit; the others still reach the
			// store (or each other, without one), which admits at most the 1.1x bound for them
			// together.
			out = append(out, accounting.NewCheck("overshoot during the outage", over, accounting.OpAtMost,
				float64(j.CutNodes)+j.Gates.MaxOvershoot, fmt.Sprintf("at most one limit per node cut from the store or its peers (%d of %d) plus the %gx the others admit together; %s",
					j.CutNodes, j.Replicas, j.Gates.MaxOvershoot, c.Detail)))
			out = append(out, afterRecoveryCheck(j, ev))
			continue
		}
		if c.Name == "max overshoot" {
			out = append(out, accounting.NewCheck("overshoot during the outage", over, accounting.OpAtMost,
				float64(j.Replicas), fmt.Sprintf("at most one limit per node (%d nodes) while the store is away; %s", j.Replicas, c.Detail)))
			out = append(out, afterRecoveryCheck(j, ev))
			continue
		}
		out = append(out, c)
	}
	out = append(out, accounting.NewCheck("5xx responses", float64(rep.Errors.Status5xx), accounting.OpEqual, 0,
		"the store's failure must never become the client's error"))
	// A limiter that hangs on its store until the client gives up has become the outage as
	// surely as one that answers 500: every request while the store is away is answered.
	out = append(out, accounting.NewCheck("errors while the store is away", float64(rep.ErrorsInFault), accounting.OpEqual, 0,
		fmt.Sprintf("every request in the outage and its recovery grace answered accepted or rejected; %d timeouts, %d connection errors in the whole run",
			rep.Errors.Timeout, rep.Errors.Connection)))
	switch j.Fault {
	case result.FaultSlow, result.FaultLinkSlow:
		out = append(out, slowChecks(rep, j, ev)...)
	case result.FaultRestart:
		out = append(out, restartChecks(j, ev)...)
	}
	return out
}

// afterRecoveryCheck is 1.1x once the store is back and the grace has passed: the worst
// probe's busiest window of acceptances after it (Probes' AfterRecovery, on the gate clock).
// With no limited probe in the run there is nothing to read after the recovery: the check is
// not measured, not a pass at x0.
func afterRecoveryCheck(j Judging, ev Evidence) result.Check {
	worst, who, probes := 0.0, "", 0
	for _, p := range ev.Probes {
		if p.Limit <= 0 {
			continue
		}
		probes++
		if r := float64(p.AfterRecovery) / float64(p.Limit); r >= worst {
			worst, who = r, fmt.Sprintf("%s: %d accepted in one window from %v after the store returned", p.ID, p.AfterRecovery,
				(j.Recovered()-j.Outage.To).Round(time.Millisecond))
		}
	}
	if probes == 0 {
		return accounting.NotMeasuredCheck("overshoot after recovery", accounting.OpAtMost, j.Gates.MaxOvershoot,
			"no probe with a limit sent in this run, so no client's acceptances after the recovery grace can be read")
	}
	return accounting.NewCheck("overshoot after recovery", worst, accounting.OpAtMost, j.Gates.MaxOvershoot, who)
}

// slowChecks are store-slow's own: a replica answers within its store timeout, not after the
// store's delay, while the store is slow. A limiter that says it waits for its store longer
// than the delay (StoreWait) never decides alone, so 1.1x holds throughout as well.
func slowChecks(rep *accounting.Report, j Judging, ev Evidence) []result.Check {
	delay := time.Duration(0)
	if ev.FaultTiming != nil {
		delay = ev.FaultTiming.Delay
	}
	if j.Fault == result.FaultLinkSlow && delay > 0 {
		// The slowed zone's store round trip is its link's and the delay together.
		delay += j.LinkRTT
	}
	var out []result.Check
	if l := ev.FaultLatency; l == nil || l.Count == 0 || delay <= 0 {
		out = append(out, accounting.NewCheck("answer time while the store is slow (ms)", 0, accounting.OpAtLeast, 1,
			"not measured: no request was answered while the store was slow"))
	} else {
		bound, why := delay, "a replica that waits for its store answers after that, one that keeps its timeout before it"
		if j.StoreWait > 0 {
			// A decision that waits for its store waits at most for its client's push in flight
			// (a sync's call, under the timeout), then a call in flight and its own, each
			// min(wait, delay); an answer time measured at the client carries the harness's own
			// timing error too, up to its lateness tolerance.
			wait, timeout := max(j.StoreWait, j.StoreFollow), max(j.StoreTimeout, j.StoreFollow)
			bound = 2*min(wait, delay) + min(timeout, delay) + j.Gates.LatenessP99
			why = fmt.Sprintf("the limiter waits up to %v for its store: at most its client's push in flight under its %v timeout, then a call in flight and its own, each min(wait, delay), and the harness's %v timing tolerance",
				j.StoreWait, j.StoreTimeout, j.Gates.LatenessP99)
			if j.StoreFollow > 0 {
				why = fmt.Sprintf("the limiter waits up to %v for its store, its timeout %v, each following the store's round trip up to %v: at most its client's push in flight, then a call in flight and its own, each min(that, delay), and the harness's %v timing tolerance",
					j.StoreWait, j.StoreTimeout, j.StoreFollow, j.Gates.LatenessP99)
			}
		}
		out = append(out, accounting.NewCheck("answer time while the store is slow (ms)", millis(l.P99), accounting.OpAtMost, millis(bound),
			fmt.Sprintf("p99 of %d answers while every store reply took %v more (and the recovery grace): %s; p50 %v, max %v",
				l.Count, delay, why, l.P50.Round(time.Millisecond/10), l.Max.Round(time.Millisecond))))
	}
	if j.StoreWait > 0 && delay > 0 && j.StoreWait > delay {
		over, who := rep.Overshoot(j.Clock())
		out = append(out, accounting.NewCheck("overshoot while the store is slow", over, accounting.OpAtMost, j.Gates.MaxOvershoot,
			fmt.Sprintf("the limiter waits up to %v for its store, longer than the %v delay: it never decides alone, so the 1.1x bound holds throughout; worst client %s (%s)",
				j.StoreWait, delay, who, j.Clock())))
	}
	return out
}

// restartChecks are store-restart's own: once the replicas have pushed again what the empty
// store forgot, no probe gets more than 1.1x its limit in a window counting what it was given
// before the store died: the acceptances of the outage itself, decided without the store,
// are left out (the per-node bound judges them). Counted on the gate clock.
func restartChecks(j Judging, ev Evidence) []result.Check {
	outage, recovered := j.Outage, j.Recovered()
	worst, who := 0.0, "no probe accepted a request"
	for _, p := range ev.Probes {
		if p.Limit <= 0 {
			continue
		}
		n := busiestOf(p, func(t time.Duration) bool { return t < outage.From || t >= recovered }, j.Window, j.Clock())
		if r := float64(n) / float64(p.Limit); r >= worst {
			worst, who = r, fmt.Sprintf("%s: %d accepted in one window across the restart (those of the %v outage and the %v after it left out)",
				p.ID, n, (outage.To-outage.From).Round(time.Millisecond), (recovered-outage.To).Round(time.Millisecond))
		}
	}
	return []result.Check{accounting.NewCheck("overshoot across the restart", worst, accounting.OpAtMost, j.Gates.MaxOvershoot, who)}
}

// killChecks judge replica-kill: the 1.1x bound and zero false rejects hold throughout (the
// requirement checks, unchanged), and every request the live replicas got while the node was
// down is answered; refused connections to the dead node are the harness's routing errors,
// counted apart, unless the target says they are its own.
func killChecks(checks []result.Check, rep *accounting.Report, j Judging, ev Evidence) []result.Check {
	routing := fmt.Sprintf("%d refused connections to the killed node counted as the harness's routing errors, not the limiter's", rep.RoutingErrors)
	if j.LimiterOwnsKilledNode {
		routing = "refused connections to the killed node counted as the limiter's (the target file's faults.killed_node: limiter)"
	}
	member := "the node"
	if ev.FaultTiming != nil {
		member = ev.FaultTiming.Member
	}
	return append(checks, accounting.NewCheck("errors while a node is down", float64(rep.ErrorsInFault), accounting.OpEqual, 0,
		fmt.Sprintf("every request sent while %s was down and for the recovery grace after it answered accepted or rejected; %d timeouts, %d connection errors, %d 5xx in the whole run; %s",
			member, rep.Errors.Timeout, rep.Errors.Connection, rep.Errors.Status5xx, routing)))
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
