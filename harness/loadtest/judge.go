package loadtest

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/harness/verdict"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
	"github.com/edgeproof/rlharness/limiters"
)

// probeTimes keeps the acceptance times of the probe clients, sent and answered, for the
// fault gates and the report's charts. Probes are a handful of clients; the background is not
// kept.
type probeTimes struct {
	s        *schedule.Schedule
	accepted map[int32][]sentAnswered
}

// sentAnswered is an acceptance: when it was sent and when its answer came back.
type sentAnswered struct{ sent, answered time.Duration }

func newProbeTimes(s *schedule.Schedule) *probeTimes {
	p := &probeTimes{s: s, accepted: make(map[int32][]sentAnswered)}
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
		p.accepted[c] = append(p.accepted[c], sentAnswered{o.Sent, o.Sent + o.Latency})
	}
}

// times are client c's acceptances in send order: their send and answer times.
func (p *probeTimes) times(c int32) (sent, answered []time.Duration) {
	acc := p.accepted[c]
	slices.SortStableFunc(acc, func(a, b sentAnswered) int { return cmp.Compare(a.sent, b.sent) })
	for _, a := range acc {
		sent, answered = append(sent, a.sent), append(answered, a.answered)
	}
	return sent, answered
}

// judging is what the config judges a scenario with: its gates, the window and sync interval
// at the run's scale, the fault, its recovery grace and the outage (as measured once known).
func (c Config) judging(sc result.Scenario, outage result.Interval) verdict.Judging {
	return verdict.Judging{
		Gates: c.Gates, Window: c.Spec.Window(), Sync: c.scaled(c.SyncInterval), Replicas: c.Spec.Replicas, Shards: c.shards(),
		Fault: sc.Fault, Outage: outage, Grace: c.RecoveryGrace, StoreTimeout: c.StoreTimeout,
		LimiterOwnsKilledNode: c.killedNodeRefusals() == target.BlameLimiter,
		StoreWait:             c.storeWait(sc),
		StoreFollow:           c.storeFollow(sc),
		Exact:                 c.exactClock,
		CutNodes:              c.cutNodes(sc.Fault),
		LinkRTT:               c.farRTT(),
	}
}

// storeWait is how long the limiter under test waits for a slow store before it decides
// alone: the built-in replica's bounded design waits limiters.DefaultStoreWait; every other
// design and a target file keep their store timeout (0: not known to wait).
func (c Config) storeWait(sc result.Scenario) time.Duration {
	if sc.Target == "" && boundedDesign(sc) {
		return limiters.DefaultStoreWait
	}
	return 0
}

// storeFollow is how long the built-in bounded design's store timeout and wait may grow as
// they follow its round trip to the store (limiters.StoreFollowCeiling); 0 for every other.
func (c Config) storeFollow(sc result.Scenario) time.Duration {
	if w := c.storeWait(sc); w > 0 {
		return limiters.StoreFollowCeiling * max(w, c.StoreTimeout)
	}
	return 0
}

// fillResult judges a measured scenario: its gates and the document's claims about it. A nil
// faultLat keeps the answer times res holds for the fault (a run judged again).
func fillResult(res *result.ScenarioResult, rep *accounting.Report, cfg Config, sc result.Scenario, probes *probeTimes,
	outage result.Interval, faultLat *accounting.Latency) {
	j := cfg.judging(sc, outage)
	res.Requests, res.Accepted, res.Rejected, res.Errors = rep.Scheduled, rep.Accepted, rep.Rejected, rep.Errors
	res.AskedRate, res.AchievedRate = rep.AskedRate, rep.AchievedRate
	res.Lateness, res.Latency, res.ReplicaLatency, res.Zones = rep.Lateness, rep.Latency, rep.ReplicaLatency, rep.Zones
	res.Conditions.ZonePeers(res.Zones)
	res.OverLimit = rep.OverLimitClients
	recovered := j.Recovered()
	res.PeakRatios = make([]int, result.PeakRatioBins)
	for _, c := range rep.Clients {
		if !c.Probe {
			if c.Accepted > 0 {
				res.PeakRatios[min(int(c.Overshoot/result.PeakRatioBin), result.PeakRatioBins-1)]++
			}
			continue
		}
		sent, answered := probes.times(int32(c.Client))
		pr := result.ProbeResult{ClientReport: c, AcceptedAt: sent, AnsweredAt: answered}
		if sc.Fault != result.FaultNone {
			pr.AfterRecovery = verdict.AfterRecovery(pr, recovered, j.Window, j.Clock())
		}
		res.Probes = append(res.Probes, pr)
	}
	if sc.Fault != result.FaultNone && faultLat != nil {
		fl := faultLat.Percentiles()
		res.FaultLatency = &fl
	}
	v := verdict.Judge(rep, j, verdict.Evidence{Probes: res.Probes, FaultTiming: res.FaultTiming, FaultLatency: res.FaultLatency})
	res.GeneratorBound, res.Checks, res.Pass = v.GeneratorBound, v.Checks, v.Pass
	clocks := v.Clocks
	res.Clocks = &clocks
	res.MaxOvershoot, _ = rep.Overshoot(clocks.Gate)
	res.FalseRejects, _ = rep.FalseRejectsOn(clocks.Gate)
	if cfg.Schedule == nil { // the documents' claims are about the documents' traffic
		res.Claims = verdict.Claims(res, j, sc)
	}
	for i := range res.Claims {
		res.Claims[i].Inconclusive = res.GeneratorBound
	}
	if why := verdict.WithoutStore(res, sc); why != "" {
		for i, c := range res.Checks {
			if c.Name == "max overshoot" {
				res.Checks[i].Detail += "; " + why
			}
		}
	}
}

// boundedDesign reports whether a scenario ran the bounded design (verdict.BoundedDesign).
func boundedDesign(sc result.Scenario) bool { return verdict.BoundedDesign(sc) }

// printScenario writes the scenario's verdict rows to the terminal.
func printScenario(w io.Writer, r result.ScenarioResult) {
	kind := "comparison"
	if r.Gated {
		kind = "GATED"
	}
	verdict := r.Outcome.Word()
	switch r.Outcome {
	case outcome.NotMade:
		verdict += ": " + r.Error
	case outcome.GeneratorBound:
		verdict += " (the figures are not evidence either way)"
	}
	fmt.Fprintf(w, "   %s %s: %s; %d requests, %s of %s req/s, store %s cmd/s, p99 %v\n", kind, r.Name, verdict,
		r.Requests, result.Rate(r.AchievedRate), result.Rate(r.AskedRate), result.Rate(r.StoreCmdPerSec), r.Latency.P99)
	if l := faultLine(r); l != "" {
		fmt.Fprintf(w, "     fault: %s\n", l)
	}
	if r.Clocks != nil {
		fmt.Fprintf(w, "     %s\n", r.Clocks)
	}
	for _, z := range r.Zones {
		fmt.Fprintf(w, "     %s\n", z.Line())
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
	zones := ""
	if len(s.Config.Zones) > 0 {
		zones = ", zones " + topology.Topology{Zones: s.Config.Zones}.String()
	}
	fmt.Fprintf(w, "\nVerdict (%s provider, %s, %d replicas%s%s, time scale %g, %d cores)\n",
		s.Config.Provider, network, s.Config.Replicas, design, zones, s.Config.TimeScale, s.Cores)
	// The columns are as wide as the longest scenario and check name they hold (at least 44 and
	// 34), so that a long name (answer time while the store is slow (ms)) does not push its
	// row's figures out of their column.
	scW, checkW := 44, 34
	for _, c := range s.Checks {
		if c.Gated {
			scW, checkW = max(scW, len(c.Scenario)), max(checkW, len(c.Name))
		}
	}
	fmt.Fprintf(w, "%-*s %-*s %12s %4s %10s  %s\n", scW, "scenario", checkW, "check", "figure", "op", "threshold", "result")
	for _, c := range s.Checks {
		if !c.Gated {
			continue
		}
		res := "pass"
		switch {
		case c.NotMeasured:
			res = "not measured"
		case !c.Pass:
			res = "FAIL"
		}
		fmt.Fprintf(w, "%-*s %-*s %12.4g %4s %10.4g  %s\n", scW, c.Scenario, checkW, c.Name, c.Figure, c.Op, c.Threshold, res)
	}
	for _, r := range s.Scenarios {
		if l := faultLine(r); l != "" && r.Gated {
			fmt.Fprintf(w, "%-*s fault %s\n", scW, r.Name, l)
		}
	}
	for _, r := range s.Scenarios {
		if r.Clocks != nil && r.Gated {
			fmt.Fprintf(w, "%-*s %s\n", scW, r.Name, r.Clocks)
		}
	}
	for _, r := range s.Scenarios {
		for _, z := range r.Zones {
			if r.Gated {
				fmt.Fprintf(w, "%-*s %s\n", scW, r.Name, z.Line())
			}
		}
	}
	for _, r := range s.Scenarios {
		for _, c := range r.Claims {
			fmt.Fprintf(w, "%-*s claim %s: %s [%s]\n", scW, r.Name, c.Verdict(), c.Text, c.Figure)
		}
	}
	WritePeers(w, s)
	fmt.Fprintln(w, s.Outcome.Line(resultWhy(s)))
}

// resultWhy is what the RESULT line says beside the run's outcome.
func resultWhy(s result.Summary) string {
	switch s.Outcome {
	case outcome.Pass:
		return ""
	case outcome.Incomplete:
		return s.IncompleteWhy + "; " + strings.Join(s.Failed, "; ")
	case outcome.NotMade:
		return strings.Join(s.NotMade, "; ")
	case outcome.GeneratorBound:
		return "the generator fell behind its schedule; lower --rate or use more cores"
	}
	return strings.Join(s.Failed, "; ")
}
