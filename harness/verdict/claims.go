package verdict

import (
	"fmt"
	"strings"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// shards is how many store shards the replicas sync with: 1 for one Redis.
func (j Judging) shards() int { return max(1, j.Shards) }

// WithoutStore says why a scenario without a fault is not the algorithm's over its store
// when its replicas decided without the store: their store calls timed out on a loaded
// machine, the circuit breaker opened, and the fail-open fallback let through what it
// allows, one limit per node. The overshoot check says so, and the claims that rest on
// every decision having been made with the store (the algorithm's, central's store cost)
// are not measured. (The fresh-clone load test's sliding_window/central let 745 of 600
// through at the boundary burst, "claim not confirmed": its excess acceptances were the
// fallback's, answered after the 50 ms store timeout or while the breaker was open.) Empty
// when every decision was made with the store, or when that is not known.
func WithoutStore(res *result.ScenarioResult, sc result.Scenario) string {
	if res.Sync == nil || res.Sync.Degraded == nil || res.Sync.Degraded.Decisions == 0 || sc.Fault != result.FaultNone {
		return ""
	}
	return res.Sync.Degraded.String() + ": the fail-open fallback, not the algorithm over the store, decided those, one limit per node"
}

// Claims states what the document says of the scenario's design and whether the run
// confirmed it.
func Claims(res *result.ScenarioResult, j Judging, sc result.Scenario) []result.Claim {
	probe := func(pattern string) result.ProbeResult {
		for _, p := range res.Probes {
			if strings.HasSuffix(p.ID, pattern) {
				return p
			}
		}
		return result.ProbeResult{}
	}
	var out []result.Claim
	switch limiters.Algorithm(sc.Algorithm) {
	case limiters.FixedWindow:
		p := probe(schedule.PatternBoundary)
		out = append(out, result.Claim{Text: "fixed window lets up to 2x the limit through around a window edge (document: x2.000)",
			Figure: fmt.Sprintf("boundary burst: %d accepted in one window, x%.3f", p.BusiestAccepted, p.Overshoot), Confirmed: p.Overshoot > accounting.OvershootLimit})
	case limiters.TokenBucket:
		p := probe(schedule.PatternIntermittent)
		out = append(out, result.Claim{Text: "token bucket rejects a client that sends exactly its limit in bursts (document: 1473 of 1800 rejected)",
			Figure: fmt.Sprintf("intermittent at limit: %d of %d rejected", p.Rejected, p.Offered), Confirmed: p.Rejected > 0})
	case algorithmGCRA:
		w := worstProbe(res)
		out = append(out, result.Claim{Text: "GCRA with burst = limit (go-redis/redis_rate) lets a client past 1.1x its limit in some window-long interval: a full burst, then a window of refill",
			Figure: fmt.Sprintf("%s: %d accepted in one window, x%.3f", w.ID, w.BusiestAccepted, w.Overshoot), Confirmed: w.Overshoot > accounting.OvershootLimit})
	case limiters.SlidingWindow:
		if sc.Fault == result.FaultNone {
			out = append(out, result.Claim{Text: "sliced sliding window keeps the boundary burst at the limit (document: 600, x1.000)",
				Figure: fmt.Sprintf("boundary burst: x%.3f", probe(schedule.PatternBoundary).Overshoot), Confirmed: probe(schedule.PatternBoundary).Overshoot <= accounting.OvershootLimit})
		}
	}
	switch limiters.Mode(sc.Mode) {
	case limiters.ModeSplit:
		out = append(out, result.Claim{Text: "split quota rejects clients under their limit when their requests spread unevenly over nodes (document: 25 of 600)",
			Figure: fmt.Sprintf("%d false rejects of %d clients", res.FalseRejects, countFalse(res)), Confirmed: res.FalseRejects > 0})
	case limiters.ModeCentral:
		out = append(out, result.Claim{Text: "a central counter costs the store one command per request (document: 40,000/s at 40,000 req/s)",
			Figure: fmt.Sprintf("%s store commands/s at %s req/s", result.Rate(res.StoreCmdPerSec), result.Rate(res.AchievedRate)), Confirmed: res.StoreCmdPerSec >= 0.9*res.AchievedRate})
	case limiters.ModeDelayed:
		if !BoundedDesign(sc) && limiters.Algorithm(sc.Algorithm) == limiters.SlidingWindow && sc.Fault == result.FaultNone {
			out = append(out, result.Claim{Text: "delayed sync keeps every client within 1.1x of its limit: a node blind for one sync interval lets through at most (limit/s) x sync x nodes = 16 more (document: 616 <= 660)",
				Figure: fmt.Sprintf("max overshoot x%.3f (%s)", res.MaxOvershoot, worstProbe(res).ID), Confirmed: res.MaxOvershoot <= accounting.OvershootLimit})
		}
	}
	if why := WithoutStore(res, sc); why != "" {
		for i := range out {
			out[i].NotMeasured, out[i].Why = true, why
		}
	}
	switch { // judged on its exchanges
	case BoundedDesign(sc):
		out = append(out, boundedCostClaim(res, j))
	case limiters.Mode(sc.Mode) == limiters.ModeDelayed:
		out = append(out, delayedCostClaim(res, j))
	}
	return out
}

// BoundedDesign reports whether a scenario ran the bounded design: delayed mode's design
// on a sliding window (the other algorithms are delayed sync as the document has it, in
// either design's replica).
func BoundedDesign(sc result.Scenario) bool {
	return limiters.Mode(sc.Mode) == limiters.ModeDelayed && limiters.Algorithm(sc.Algorithm) == limiters.SlidingWindow &&
		limiters.Design(sc.Design) == limiters.DesignBounded
}

// boundedCostClaim judges the bounded design's store cost on both sides: at least the
// nodes' epoch reads (nodes / interval, unless the sync is failing), and at most those,
// one push command per node and interval per shard (chunks of up to 256 clients; on a
// cluster one per client, at most one per request of a client that passed a budget), and
// one call per request that arrived at a node past its unsynced budget, which the schedule
// gives (res.Budget). A client within its budgets costs the store nothing, so the figure
// sits far below central's one call per request when few clients are near their limits.
func boundedCostClaim(res *result.ScenarioResult, j Judging) result.Claim {
	iv := j.Sync
	perIv := float64(j.Replicas) / iv.Seconds()
	c := result.Claim{Figure: fmt.Sprintf("%.0f store commands/s at %.0f req/s, %.3f round trips per request", res.StoreCmdPerSec, res.AchievedRate, res.RoundTripsPerRequest())}
	b := res.Budget
	if b == nil || b.Duration <= 0 {
		c.Text = "the bounded design costs the store its nodes' epoch reads and pushes plus at most one call per request past a node's unsynced budget"
		c.NotMeasured, c.Why = true, "the schedule's load past the budgets is not known (a rule file of its own)"
		return c
	}
	dur := b.Duration // the schedule's, over which the store's commands/s are taken
	past := float64(b.PastBudget) / dur.Seconds()
	high := perIv*float64(1+j.shards()) + past
	if j.shards() > 1 {
		high += float64(b.HotRequests) / dur.Seconds()
	}
	c.Text = fmt.Sprintf("the bounded design costs the store its nodes' epoch reads and pushes (%.0f/s) plus at most one call per request past a node's unsynced budget of %d (%d of %d requests here, %.0f/s, from %d clients), nothing for a client within its budgets; confirmed within %.1fx of nodes / interval .. %.0f/s with >= %.0f %% of exchanges succeeded",
		perIv*float64(1+j.shards()), b.Budget, b.PastBudget, b.Requests, past, b.HotClients, syncCostLow, high, syncOKPercent)
	if !syncWorked(&c, res, j) {
		return c
	}
	switch {
	case res.StoreCmdPerSec < syncCostLow*perIv:
		c.Why = fmt.Sprintf("the store saw %.0f commands/s, under %.1fx nodes / interval: the epoch reads did not all arrive", res.StoreCmdPerSec, syncCostLow)
	case res.StoreCmdPerSec > high:
		c.Why = fmt.Sprintf("the store saw %.0f commands/s, over the %.0f/s the design allows this schedule", res.StoreCmdPerSec, high)
	default:
		c.Confirmed = true
	}
	return c
}

// syncWorked adds the exchanges that carried a store-cost claim to its figure and reports
// whether they did: a claim without sync metrics is not measured, one whose sync failed
// (no exchange attempted, under syncOKShare of them succeeded) is not confirmed, and says so.
func syncWorked(c *result.Claim, res *result.ScenarioResult, j Judging) bool {
	var ex *result.Exchanges
	if res.Sync != nil {
		ex = res.Sync.Exchanges
	}
	if ex == nil {
		c.NotMeasured, c.Why = true, "no sync metrics"
		if res.Sync != nil && res.Sync.Why != "" {
			c.Why += " (" + res.Sync.Why + ")"
		}
		return false
	}
	c.Figure += fmt.Sprintf("; %d of %d exchanges succeeded", ex.OK, ex.Attempted)
	switch {
	case ex.Attempted == 0:
		c.Why = "sync failing (no exchange attempted)"
	case ex.OKShare() < syncOKShare:
		c.Why = fmt.Sprintf("sync failing (%d of %d exchanges failed)", ex.Unsuccessful(), ex.Attempted)
	default:
		return true
	}
	if j.Fault != result.FaultNone && j.Fault != result.FaultKill {
		// The scenario took the store away or slowed it on purpose: the exchanges it made
		// fail say nothing of what the design costs a store that answers.
		c.NotMeasured, c.Why = true, c.Why+" while the store was "+storeFaultWords(j.Fault)+" on purpose: no evidence of the cost either way"
	}
	return false
}

// storeFaultWords says what a store fault did to the store.
func storeFaultWords(fault string) string {
	switch fault {
	case result.FaultSlow:
		return "slowed"
	case result.FaultRestart:
		return "killed and started empty"
	case result.FaultPause:
		return "paused"
	}
	return "stopped"
}

// The band around nodes / interval within which delayed sync's store commands/s confirm
// the document's cost, and the share of exchanges that must have succeeded: a sync that
// fails sends the store little, and that is no evidence the design is cheap.
const (
	syncCostLow   = 0.5
	syncCostHigh  = 1.1
	syncOKShare   = 0.95
	syncOKPercent = 100 * syncOKShare
)

// delayedCostClaim judges "delayed sync costs the store about nodes / interval commands"
// on both sides of the figure and on the exchanges that carried it.
func delayedCostClaim(res *result.ScenarioResult, j Judging) result.Claim {
	iv := j.Sync
	bound := float64(j.Replicas*j.shards()) / iv.Seconds()
	text := fmt.Sprintf("delayed sync costs the store about nodes / interval commands, %.0f/s here (document: 40/s at 0.2 s)", bound)
	if j.shards() > 1 {
		text = fmt.Sprintf("delayed sync on a cluster costs about nodes × shards / interval commands, %.0f/s here (%d shards)", bound, j.shards())
	}
	text += fmt.Sprintf("; confirmed within %.1fx..%.1fx of it with >= %.0f %% of exchanges succeeded", syncCostLow, syncCostHigh, syncOKPercent)
	ratio := res.StoreCmdPerSec / bound
	c := result.Claim{Text: text, Figure: fmt.Sprintf("%s store commands/s at %s req/s, x%.2f", result.Rate(res.StoreCmdPerSec), result.Rate(res.AchievedRate), ratio)}
	if !syncWorked(&c, res, j) {
		return c
	}
	switch {
	case ratio < syncCostLow:
		c.Why = fmt.Sprintf("the store saw %.2fx nodes / interval, under %.1fx", ratio, syncCostLow)
	case ratio > syncCostHigh:
		c.Why = fmt.Sprintf("the store saw %.2fx nodes / interval, over %.1fx", ratio, syncCostHigh)
	default:
		c.Confirmed = true
	}
	return c
}

// algorithmGCRA is what a target file calls go-redis/redis_rate's algorithm; it is not one
// of our limiters'.
const algorithmGCRA limiters.Algorithm = "gcra"

// worstProbe is the probe with the busiest window over its limit.
func worstProbe(res *result.ScenarioResult) result.ProbeResult {
	var w result.ProbeResult
	for _, p := range res.Probes {
		if p.Overshoot >= w.Overshoot {
			w = p
		}
	}
	return w
}

func countFalse(res *result.ScenarioResult) int {
	n := 0
	for _, p := range res.Probes {
		if p.FalseRejects > 0 {
			n++
		}
	}
	return n
}
