package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// probeTimes keeps the acceptance times of the probe clients, for the after-recovery gate
// and the report's charts. Probes are a handful of clients; the background is not kept.
type probeTimes struct {
	s        *schedule.Schedule
	accepted map[int32][]time.Duration
}

func newProbeTimes(s *schedule.Schedule) *probeTimes {
	p := &probeTimes{s: s, accepted: make(map[int32][]time.Duration)}
	for i, c := range s.Clients {
		if c.Probe {
			p.accepted[int32(i)] = nil
		}
	}
	return p
}

func (p *probeTimes) add(o traffic.Outcome) {
	c := p.s.Requests[o.Index].Client
	if _, ok := p.accepted[c]; ok && o.Code >= 200 && o.Code < 300 {
		p.accepted[c] = append(p.accepted[c], o.Sent)
	}
}

// fillResult judges a measured scenario: its gates and the document's claims about it.
func fillResult(res *result.ScenarioResult, rep *accounting.Report, cfg Config, sc result.Scenario, probes *probeTimes,
	outage result.Interval, faultLat *accounting.Latency) {
	res.Requests, res.Accepted, res.Rejected, res.Errors = rep.Scheduled, rep.Accepted, rep.Rejected, rep.Errors
	res.AskedRate, res.AchievedRate = rep.AskedRate, rep.AchievedRate
	res.Lateness, res.Latency, res.ReplicaLatency = rep.Lateness, rep.Latency, rep.ReplicaLatency
	res.MaxOvershoot, res.FalseRejects, res.OverLimit = rep.MaxOvershoot, rep.FalseRejects, rep.OverLimitClients
	window := cfg.Spec.Window()
	recovered := cfg.recoveredAt(sc.Fault, outage)
	res.PeakRatios = make([]int, result.PeakRatioBins)
	for _, c := range rep.Clients {
		if !c.Probe {
			if c.Accepted > 0 {
				res.PeakRatios[min(int(c.Overshoot/result.PeakRatioBin), result.PeakRatioBins-1)]++
			}
			continue
		}
		times := probes.accepted[int32(c.Client)]
		slices.Sort(times)
		pr := result.ProbeResult{ClientReport: c, AcceptedAt: times}
		if sc.Fault != result.FaultNone {
			i, _ := slices.BinarySearch(times, recovered)
			pr.AfterRecovery = accounting.Busiest(times[i:], window)
		}
		res.Probes = append(res.Probes, pr)
	}

	v := accounting.Evaluate(rep, cfg.Gates)
	res.GeneratorBound = v.GeneratorBound
	checks := v.Checks
	if sc.Fault != result.FaultNone {
		fl := faultLat.Percentiles()
		res.FaultLatency = &fl
		checks = faultChecks(checks, rep, res, cfg, outage)
	}
	res.Checks = checks
	res.Pass = true
	for _, c := range checks {
		res.Pass = res.Pass && c.Pass
	}
	if cfg.Schedule == nil { // the documents' claims are about the documents' traffic
		res.Claims = claims(res, cfg, sc)
	}
	for i := range res.Claims {
		res.Claims[i].Inconclusive = res.GeneratorBound
	}
	if why := withoutStore(res, sc); why != "" {
		for i, c := range res.Checks {
			if c.Name == "max overshoot" {
				res.Checks[i].Detail += "; " + why
			}
		}
	}
}

// withoutStore says why a scenario without a fault is not the algorithm's over its store
// when its replicas decided without the store: their store calls timed out on a loaded
// machine, the circuit breaker opened, and the fail-open fallback let through what it
// allows, one limit per node. The overshoot check says so, and the claims that rest on
// every decision having been made with the store (the algorithm's, central's store cost)
// are not measured. (The fresh-clone load test's sliding_window/central let 745 of 600
// through at the boundary burst, "claim not confirmed": its excess acceptances were the
// fallback's, answered after the 50 ms store timeout or while the breaker was open.) Empty
// when every decision was made with the store, or when that is not known.
func withoutStore(res *result.ScenarioResult, sc result.Scenario) string {
	if res.Sync == nil || res.Sync.Degraded == nil || res.Sync.Degraded.Decisions == 0 || sc.Fault != result.FaultNone {
		return ""
	}
	return res.Sync.Degraded.String() + ": the fail-open fallback, not the algorithm over the store, decided those, one limit per node"
}

// faultChecks judges a fault scenario. A store fault replaces the 1.1× gate: during the
// outage a replica decides alone, so the bound is one limit per node (the document); 1.1×
// applies again once the store is back (store-restart: one sync interval later). No 5xx,
// ever, and no request left unanswered while the store is away; a slow store is not waited
// for (slowChecks), and one that came back empty is told again what it forgot
// (restartChecks). A killed replica changes no requirement (killChecks).
func faultChecks(checks []result.Check, rep *accounting.Report, res *result.ScenarioResult, cfg Config, outage result.Interval) []result.Check {
	if res.Fault == result.FaultKill {
		return killChecks(checks, rep, res, cfg)
	}
	out := make([]result.Check, 0, len(checks)+4)
	for _, c := range checks {
		if c.Name == "max overshoot" {
			out = append(out, accounting.NewCheck("overshoot during the outage", rep.MaxOvershoot, accounting.OpAtMost,
				float64(cfg.Spec.Replicas), fmt.Sprintf("at most one limit per node (%d nodes) while the store is away; %s", cfg.Spec.Replicas, c.Detail)))
			worst, who := 0.0, ""
			for _, p := range res.Probes {
				if r := float64(p.AfterRecovery) / float64(p.Limit); r >= worst {
					worst, who = r, fmt.Sprintf("%s: %d accepted in one window from %v after the store returned", p.ID, p.AfterRecovery,
						(cfg.recoveredAt(res.Fault, outage)-outage.To).Round(time.Millisecond))
				}
			}
			out = append(out, accounting.NewCheck("overshoot after recovery", worst, accounting.OpAtMost, cfg.Gates.MaxOvershoot, who))
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
	switch res.Fault {
	case result.FaultSlow:
		out = append(out, slowChecks(res)...)
	case result.FaultRestart:
		out = append(out, restartChecks(res, cfg, outage)...)
	}
	return out
}

// claims states what the document says of the scenario's design and whether the run
// confirmed it.
func claims(res *result.ScenarioResult, cfg Config, sc result.Scenario) []result.Claim {
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
		if !boundedDesign(sc) && limiters.Algorithm(sc.Algorithm) == limiters.SlidingWindow && sc.Fault == result.FaultNone {
			out = append(out, result.Claim{Text: "delayed sync keeps every client within 1.1x of its limit: a node blind for one sync interval lets through at most (limit/s) x sync x nodes = 16 more (document: 616 <= 660)",
				Figure: fmt.Sprintf("max overshoot x%.3f (%s)", res.MaxOvershoot, worstProbe(res).ID), Confirmed: res.MaxOvershoot <= accounting.OvershootLimit})
		}
	}
	if why := withoutStore(res, sc); why != "" {
		for i := range out {
			out[i].NotMeasured, out[i].Why = true, why
		}
	}
	switch { // judged on its exchanges
	case boundedDesign(sc):
		out = append(out, boundedCostClaim(res, cfg))
	case limiters.Mode(sc.Mode) == limiters.ModeDelayed:
		out = append(out, delayedCostClaim(res, cfg))
	}
	return out
}

// boundedDesign reports whether a scenario ran the bounded design: delayed mode's design
// on a sliding window (the other algorithms are delayed sync as the document has it, in
// either design's replica).
func boundedDesign(sc result.Scenario) bool {
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
func boundedCostClaim(res *result.ScenarioResult, cfg Config) result.Claim {
	iv := cfg.scaled(cfg.SyncInterval)
	perIv := float64(cfg.Spec.Replicas) / iv.Seconds()
	c := result.Claim{Figure: fmt.Sprintf("%.0f store commands/s at %.0f req/s, %.3f round trips per request", res.StoreCmdPerSec, res.AchievedRate, res.RoundTripsPerRequest())}
	b := res.Budget
	if b == nil || b.Duration <= 0 {
		c.Text = "the bounded design costs the store its nodes' epoch reads and pushes plus at most one call per request past a node's unsynced budget"
		c.NotMeasured, c.Why = true, "the schedule's load past the budgets is not known (a rule file of its own)"
		return c
	}
	dur := b.Duration // the schedule's, over which the store's commands/s are taken
	past := float64(b.PastBudget) / dur.Seconds()
	high := perIv*float64(1+cfg.shards()) + past
	if cfg.shards() > 1 {
		high += float64(b.HotRequests) / dur.Seconds()
	}
	c.Text = fmt.Sprintf("the bounded design costs the store its nodes' epoch reads and pushes (%.0f/s) plus at most one call per request past a node's unsynced budget of %d (%d of %d requests here, %.0f/s, from %d clients), nothing for a client within its budgets; confirmed within %.1fx of nodes / interval .. %.0f/s with >= %.0f %% of exchanges succeeded",
		perIv*float64(1+cfg.shards()), b.Budget, b.PastBudget, b.Requests, past, b.HotClients, syncCostLow, high, syncOKPercent)
	if !syncWorked(&c, res) {
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
func syncWorked(c *result.Claim, res *result.ScenarioResult) bool {
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
	return false
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
func delayedCostClaim(res *result.ScenarioResult, cfg Config) result.Claim {
	iv := cfg.scaled(cfg.SyncInterval)
	bound := float64(cfg.Spec.Replicas*cfg.shards()) / iv.Seconds()
	text := fmt.Sprintf("delayed sync costs the store about nodes / interval commands, %.0f/s here (document: 40/s at 0.2 s)", bound)
	if cfg.shards() > 1 {
		text = fmt.Sprintf("delayed sync on a cluster costs about nodes × shards / interval commands, %.0f/s here (%d shards)", bound, cfg.shards())
	}
	text += fmt.Sprintf("; confirmed within %.1fx..%.1fx of it with >= %.0f %% of exchanges succeeded", syncCostLow, syncCostHigh, syncOKPercent)
	ratio := res.StoreCmdPerSec / bound
	c := result.Claim{Text: text, Figure: fmt.Sprintf("%s store commands/s at %s req/s, x%.2f", result.Rate(res.StoreCmdPerSec), result.Rate(res.AchievedRate), ratio)}
	if !syncWorked(&c, res) {
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

// printScenario writes the scenario's verdict rows to the terminal.
func printScenario(w io.Writer, r result.ScenarioResult) {
	kind := "comparison"
	if r.Gated {
		kind = "GATED"
	}
	verdict := "PASS"
	switch {
	case r.Error != "":
		verdict = "ERROR: " + r.Error
	case r.GeneratorBound:
		verdict = "GENERATOR-BOUND (the figures are not evidence either way)"
	case !r.Pass:
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "   %s %s: %s; %d requests, %s of %s req/s, store %s cmd/s, p99 %v\n", kind, r.Name, verdict,
		r.Requests, result.Rate(r.AchievedRate), result.Rate(r.AskedRate), result.Rate(r.StoreCmdPerSec), r.Latency.P99)
	if l := faultLine(r); l != "" {
		fmt.Fprintf(w, "     fault: %s\n", l)
	}
	if r.Error == "" {
		fmt.Fprintf(w, "     %s\n", storeCost(r))
		fmt.Fprintf(w, "     %s\n", syncLine(r.Sync))
	}
	if r.Incomplete != "" {
		fmt.Fprintf(w, "     INCOMPLETE: %s\n", r.Incomplete)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "     %s\n", c)
	}
	for _, c := range r.Claims {
		fmt.Fprintf(w, "     claim %s: %s [%s]\n", c.Verdict(), c.Text, c.Figure)
	}
}

// storeCost is what the store's work cost in a scenario: round trips and the commands
// scripts ran inside it, per request, and its CPU.
func storeCost(r result.ScenarioResult) string {
	s := fmt.Sprintf("store: %s commands/s; per request %.3f round trips, %.3f commands inside scripts; ",
		result.Rate(r.StoreCmdPerSec), r.RoundTripsPerRequest(), r.ScriptCmdPerRequest())
	if c := r.StoreCPU; c != nil {
		return s + fmt.Sprintf("Redis CPU %.1f %% of a core (%.2f ms per 1,000 requests)", c.Percent, c.MsPerKiloRequest)
	}
	if r.StoreCPUWhy == "" {
		return s + "Redis CPU not measured"
	}
	return s + "Redis CPU not measured: " + r.StoreCPUWhy
}

// syncLine is the sync health figures on one line.
func syncLine(h *result.SyncHealth) string {
	var parts []string
	for _, row := range h.Rows() {
		parts = append(parts, row.Name+" "+row.Value)
	}
	return "sync: " + strings.Join(parts, "; ")
}

// WriteVerdict prints the run's verdict table.
func WriteVerdict(w io.Writer, s result.Summary) {
	design := ""
	if s.Config.Design != "" {
		design = ", the " + s.Config.Design + " design"
	}
	network := s.Config.Network + " network"
	if s.Config.NetworkNote != "" {
		network += " (" + s.Config.NetworkNote + ")"
	}
	fmt.Fprintf(w, "\nVerdict (%s provider, %s, %d replicas%s, time scale %g, %d cores)\n",
		s.Config.Provider, network, s.Config.Replicas, design, s.Config.TimeScale, s.Cores)
	fmt.Fprintf(w, "%-44s %-34s %12s %4s %10s  %s\n", "scenario", "check", "figure", "op", "threshold", "result")
	for _, c := range s.Checks {
		if !c.Gated {
			continue
		}
		res := "pass"
		if !c.Pass {
			res = "FAIL"
		}
		fmt.Fprintf(w, "%-44s %-34s %12.4g %4s %10.4g  %s\n", c.Scenario, c.Name, c.Figure, c.Op, c.Threshold, res)
	}
	for _, r := range s.Scenarios {
		if l := faultLine(r); l != "" && r.Gated {
			fmt.Fprintf(w, "%-44s fault %s\n", r.Name, l)
		}
	}
	for _, r := range s.Scenarios {
		for _, c := range r.Claims {
			fmt.Fprintf(w, "%-44s claim %s: %s [%s]\n", r.Name, c.Verdict(), c.Text, c.Figure)
		}
	}
	WritePeers(w, s)
	switch {
	case s.Incomplete:
		fmt.Fprintf(w, "RESULT: INCOMPLETE: %s; %s\n", s.IncompleteWhy, strings.Join(s.Failed, "; "))
	case s.IsNotMade():
		fmt.Fprintf(w, "RESULT: NOT MADE: %s\n", strings.Join(s.NotMade, "; "))
	case s.GeneratorBound:
		fmt.Fprintf(w, "RESULT: GENERATOR-BOUND: the generator fell behind its schedule; lower --rate or use more cores\n")
	case s.Pass:
		fmt.Fprintf(w, "RESULT: PASS\n")
	default:
		fmt.Fprintf(w, "RESULT: FAIL: %s\n", strings.Join(s.Failed, "; "))
	}
}
