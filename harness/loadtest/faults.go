package loadtest

import (
	"fmt"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fault"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/limiters"
)

// FailOpenFaults are the fault scenarios of the design under test on one Redis, in the order
// they run: the store stopped, paused, slowed, and killed and started again empty, then one
// replica killed.
var FailOpenFaults = []string{result.FaultStop, result.FaultPause, result.FaultSlow, result.FaultRestart, result.FaultKill}

// ZoneFaults are the link faults of a run on a topology (--zones), in the order they run
// after FailOpenFaults: the farthest zone's link to the store refused, blackholed, slowed
// and flapping while the other zones keep theirs (docs/zones.md).
var ZoneFaults = []string{result.FaultPartition, result.FaultPartitionBlackhole, result.FaultLinkSlow, result.FaultFlap}

// LinkSlowDelay is what link-slow adds to every store reply on the zone's link: a link
// that got three times worse than a coast-to-coast one, as a congested or rerouted path does.
// Not scaled: it is about the network.
const LinkSlowDelay = 150 * time.Millisecond

// ParseFaults reads --faults: a comma-separated list of FailOpenFaults and ZoneFaults, or
// "all" (the zone faults run only on a topology).
func ParseFaults(list []string) ([]string, error) {
	var out []string
	for _, f := range list {
		switch {
		case f == "all":
			out = append(out, FailOpenFaults...)
			out = append(out, ZoneFaults...)
		case slices.Contains(FailOpenFaults, f) || slices.Contains(ZoneFaults, f):
			out = append(out, f)
		default:
			return nil, fmt.Errorf("--faults %q: use all, or some of %v, or on a topology (--zones) %v", f, FailOpenFaults, ZoneFaults)
		}
	}
	return out, nil
}

// zoneFaultsAlone is the error of a run that asks for link faults alone without a
// topology: there is no zone whose link to cut.
func (c Config) zoneFaultsAlone() error {
	if !c.Zones.IsZero() || !c.FailOpen || len(c.Faults) == 0 || slices.ContainsFunc(c.Faults, func(f string) bool { return !result.LinkFault(f) }) {
		return nil
	}
	return fmt.Errorf("--faults %v cut a zone's link to the store: declare the zones with --zones or --topology", c.Faults)
}

// farZone is the zone a link fault hits: the one farthest from the store.
func (c Config) farZone() string {
	if k := c.Zones.Farthest(); k >= 0 {
		return c.Zones.Zones[k].Name
	}
	return ""
}

// accumulator accounts for a scenario of sched with the fault windows faults, and per zone
// on a topology.
func (c Config) accumulator(sched *schedule.Schedule, faults []result.Interval) (*accounting.Accumulator, error) {
	acc, err := accounting.New(sched, faults)
	if err != nil || c.Zones.IsZero() {
		return acc, err
	}
	zones := make([]accounting.Zone, len(c.Zones.Zones))
	for k, z := range c.Zones.Zones {
		zones[k] = accounting.Zone{Name: z.Name, Replicas: c.Zones.Members(k), Link: result.LinkFigures{Latency: z.Latency, Jitter: z.Jitter}}
	}
	return acc, acc.SetZones(zones)
}

// farRTT is the far zone's store round trip at its slowest: latency and jitter, both ways.
func (c Config) farRTT() time.Duration {
	if k := c.Zones.Farthest(); k >= 0 {
		z := c.Zones.Zones[k]
		return 2 * (z.Latency + z.Jitter)
	}
	return 0
}

// cutNodes is how many replicas a link fault cuts from the store: the far zone's.
func (c Config) cutNodes(f string) int {
	if !result.LinkFault(f) {
		return 0
	}
	if k := c.Zones.Farthest(); k >= 0 {
		return c.Zones.Zones[k].Replicas
	}
	return 0
}

// wantsFault says whether the run asks for a scenario with fault f: every fault the scenario
// list holds when --faults names none, else the faults it names (a cluster store's master
// faults are its store-stop and store-pause).
func (c Config) wantsFault(f string) bool {
	if f == result.FaultNone || len(c.Faults) == 0 {
		return true
	}
	switch f {
	case result.FaultMasterKill:
		f = result.FaultStop
	case result.FaultMasterPause:
		f = result.FaultPause
	}
	return slices.Contains(c.Faults, f)
}

// targetFaults are the fault scenarios of a target file's limiter: the store faults where
// the harness runs its store, replica-kill where it starts more than one node, and on a
// topology the link faults where a zone has links to cut.
func targetFaults(t *target.Target, zoned bool) []string {
	var out []string
	if t.Store.Managed {
		out = append(out, result.FaultStop, result.FaultPause, result.FaultSlow, result.FaultRestart)
	}
	if t.Start.Kind != target.StartURL && t.Start.Replicas > 1 {
		out = append(out, result.FaultKill)
	}
	// A zone's links: to the store the harness runs, or between the nodes of a limiter
	// without one that is told where its peers are or announces its name (a node cut from its
	// peers).
	if (t.Store.Managed || t.Start.Peered()) && t.Start.Kind != target.StartURL && (zoned || !t.Topology.IsZero()) {
		out = append(out, ZoneFaults...)
	}
	return out
}

// storeDelay is what store-slow adds to every store reply: the target file's store_delay, or
// twice the replicas' store timeout, which a replica that waits for its store cannot hide.
func (c Config) storeDelay(t *target.Target) time.Duration {
	if t != nil && t.Faults.StoreDelay > 0 {
		return t.Faults.StoreDelay
	}
	return (2 * c.StoreTimeout).Round(time.Millisecond)
}

// planFault is the scenario's fault on the traffic's clock: taken down inside the second
// window, clear of the boundary burst, for the outage; a store-restart is started again at
// once. Nil without a fault.
func (c Config) planFault(sc result.Scenario, t *target.Target) *fault.Plan {
	if sc.Fault == result.FaultNone {
		return nil
	}
	window := c.scaled(limiters.DefaultWindow)
	from := window + window/5
	p := &fault.Plan{Fault: sc.Fault, Member: fault.Member(sc.Fault, c.Spec.Replicas), At: from, Until: from + c.scaled(c.Outage)}
	if result.LinkFault(sc.Fault) {
		p.Zone = c.farZone()
		p.Member = fault.ZoneMember(p.Zone)
	}
	if o, ok := c.replayOutage(); ok { // a replayed schedule's fault, at its offsets
		p.At, p.Until = o.From, o.To
	}
	switch sc.Fault {
	case result.FaultSlow:
		p.Delay = c.storeDelay(t)
	case result.FaultLinkSlow:
		p.Delay = LinkSlowDelay
	case result.FaultRestart:
		p.Until = from
	}
	return p
}

// routedAway is the replica a replica-kill scenario's schedule sends around, and when: from
// fault.Drain before the kill until the recovery grace after the replica is started again.
// Nil for every other scenario.
func (c Config) routedAway(sc result.Scenario, t *target.Target) *schedule.Away {
	p := c.planFault(sc, t)
	if p == nil || p.Fault != result.FaultKill {
		return nil
	}
	w := p.RouteWindow(c.RecoveryGrace)
	return &schedule.Away{Replica: c.Spec.Replicas - 1, From: w.From, To: w.To}
}

// blamesHarness says whether a refused connection to a killed node is the harness's routing
// error (the default) rather than the limiter's (a target file's faults.killed_node).
func blamesHarness(t *target.Target) bool {
	return t == nil || t.Faults.KilledNode != target.BlameLimiter
}

// killedNodeRefusals is who answers for a refused connection to a killed node in this
// config's scenarios: target.BlameHarness unless forTarget was given a target that says
// otherwise.
func (c Config) killedNodeRefusals() string {
	if c.killedNode == "" {
		return target.BlameHarness
	}
	return c.killedNode
}

// recoveredAt is when the 1.1x bound applies again after a store fault (verdict.Judging's
// Recovered).
func (c Config) recoveredAt(f string, outage result.Interval) time.Duration {
	return c.judging(result.Scenario{Fault: f}, outage).Recovered()
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// faultLine is a scenario's fault on one line, as planned and as it happened, with the
// routing errors kept apart; "" without a fault.
func faultLine(r result.ScenarioResult) string {
	f := r.FaultTiming
	if f == nil {
		return ""
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	planned := "at " + ms(f.Planned.From) + ", started again at once"
	if f.Planned.To != f.Planned.From {
		planned = ms(f.Planned.From) + ".." + ms(f.Planned.To)
	}
	s := fmt.Sprintf("%s on %s: planned %s; down %s..%s", f.Fault, f.Member, planned, ms(f.Began), ms(f.Back))
	if f.Back == 0 {
		s = fmt.Sprintf("%s on %s: planned %s; down from %s, never back", f.Fault, f.Member, planned, ms(f.Began))
	}
	if f.Delay > 0 {
		s += fmt.Sprintf("; every store reply +%v", f.Delay)
	}
	if f.Fault == result.FaultFlap {
		s += fmt.Sprintf("; refused and back every %v", fault.FlapPeriod/2)
	}
	if f.Routed != nil {
		s += fmt.Sprintf("; its requests sent to the others %s..%s, %d routing errors (the harness's, in no other count)",
			ms(f.Routed.From), ms(f.Routed.To), r.Errors.Routing)
	}
	if f.Error != "" {
		s += "; " + f.Error
	}
	return s
}

// measuredFault records a scenario's fault once the traffic is over: its timing in res, the
// windows it is judged with, measured (from its beginning to the member's return plus the
// grace; to the end of the run when it never returned), in res and the accounting, and a
// killed replica's refusals as routing errors where the harness answers for them. It returns
// the outage as measured, and the error that kept the fault from being made or mended.
func measuredFault(res *result.ScenarioResult, acc *accounting.Accumulator, a *fault.Armed, cfg Config, sc result.Scenario) (result.Interval, error) {
	timing, err := a.Wait()
	if cfg.Spec.Away != nil {
		routed := result.Interval{From: cfg.Spec.Away.From, To: cfg.Spec.Away.To}
		timing.Routed = &routed
	}
	res.FaultTiming = &timing
	outage := timing.Outage()
	if outage.To == 0 { // never back: away to the end
		outage.To = max(res.Duration, outage.From+1)
	}
	if w := fault.Windows(timing, cfg.recoveredAt(sc.Fault, outage)-outage.To, res.Duration); w != nil {
		res.Faults = w
	}
	if serr := acc.SetFaults(res.Faults); serr != nil && err == nil {
		err = serr
	}
	if sc.Fault == result.FaultKill && timing.Began > 0 && cfg.killedNodeRefusals() == target.BlameHarness {
		// From the first request the schedule moved (or the kill, if earlier) to the
		// replica's return: a refusal then is the dead replica's.
		from := outage.From
		if cfg.Spec.Away != nil {
			from = min(from, cfg.Spec.Away.From)
		}
		acc.SetDeadReplica(cfg.Spec.Replicas-1, result.Interval{From: from, To: outage.To})
	}
	return outage, err
}
