package hunt

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fault"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	judging "github.com/edgeproof/rlharness/harness/verdict"
)

// Round is one run of many variants at once against the fleet: every variant its own
// client, placed so that the generator can keep up, its outcomes accounted apart.
type Round struct {
	N    int
	Kind string // learn | search | fault
	Env  Env
	// Schedule is the whole round's traffic, offsets from its origin.
	Schedule schedule.Schedule
	// Fault is the round's store fault, nil for none.
	Fault *schedule.Fault

	m    merged
	sent []*sentVariant
	// faults are the accounting's fault windows, recovered when the 1.1× gate applies
	// again: as planned until the fault's timing is measured (measured).
	faults    []result.Interval
	recovered time.Duration
	// The probes' schedules follow the variants' in m; every outcome of theirs is kept.
	probes []probeOutcome
}

// sentVariant is one variant as placed in a round, with its own account.
type sentVariant struct {
	v        Variant
	fam      Family
	space    []ParamSpec
	sched    schedule.Schedule // offsets from the round's origin
	acc      *accounting.Accumulator
	accepted []acceptance    // its accepted requests
	sent     []time.Duration // send times of every request answered or failed
	// pressure is a pressure variant's level as applied (herd, share and passes after their caps).
	pressure *PressureLevel
}

// acceptance is an accepted request: when it was sent and when its answer came back.
type acceptance struct{ sent, answered time.Duration }

// probeOutcome is a learning probe's answer.
type probeOutcome struct {
	probe   int // index into the round's probes
	replica int16
	sent    time.Duration
	late    time.Duration // how far behind its offset it was sent
	code    uint16
}

// variantSeed is a variant's generator seed: the hunt's seed, the family and the values, so
// that the same variant is the same traffic in any round.
func variantSeed(seed uint64, family string, v Variant) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(family))
	h.Write([]byte(v.key()))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// faultWindows are the accounting's fault windows for a round's fault: the outage and its
// recovery grace, as loadtest gives them.
func faultWindows(f *schedule.Fault, grace time.Duration) []result.Interval {
	if f == nil {
		return nil
	}
	return []result.Interval{{From: f.From, To: f.To + grace}}
}

// newRound builds variants in env, places them in at most maxLen with the round asking for at
// most pace requests per second where they overlap, and gives each its own client, named
// tag-family-k. Variants that do not fit come back in deferred; a family whose
// generator refuses the environment is reported in refused (family index → why).
func newRound(n int, kind string, s *Search, vs []Variant, env Env, fault *schedule.Fault, maxLen time.Duration, pace float64, tag string, seed uint64, plan *learnPlan) (r *Round, deferred []Variant, refused map[int]string, err error) {
	if err := env.check(); err != nil {
		return nil, nil, nil, err
	}
	r = &Round{N: n, Kind: kind, Env: env, Fault: fault}
	refused = map[int]string{}
	// The learning probes go first; the variants fit around them.
	var parts []Part
	if plan != nil {
		parts = append(parts, plan.probes...)
	}
	nprobes := len(parts)
	var built []Variant
	var pressed []*PressureLevel
	for _, v := range vs {
		f, _ := s.Family(v.Family)
		if _, bad := refused[v.Family]; bad {
			continue
		}
		p, applied, err := buildVariant(f, env, v, seed)
		if err != nil {
			refused[v.Family] = err.Error()
			continue
		}
		parts = append(parts, p)
		built = append(built, v)
		pressed = append(pressed, applied)
	}
	var shift []time.Duration
	var placed []bool
	if kind == kindPressure {
		shift, placed = placePressure(parts, maxLen, env.MaxRate)
	} else {
		shift, placed = place(parts, maxLen, pace, nprobes)
	}
	var probes []schedule.Schedule
	for i := range nprobes {
		if !placed[i] {
			return nil, nil, nil, fmt.Errorf("round %d: a learning probe of %v does not fit in %v", n, parts[i].Schedule.Duration, maxLen)
		}
		probes = append(probes, shifted(parts[i].Schedule, shift[i]))
	}
	if plan != nil {
		plan.moved(shift[:nprobes])
	}
	var scheds []schedule.Schedule
	for i, p := range parts[nprobes:] {
		if !placed[nprobes+i] {
			deferred = append(deferred, built[i])
			continue
		}
		f, space := s.Family(built[i].Family)
		sc := shifted(p.Schedule, shift[nprobes+i])
		sc.Clients = append([]schedule.Client(nil), sc.Clients...)
		for c := range sc.Clients {
			sc.Clients[c].ID = fmt.Sprintf("%s-%s-%d", tag, f.Name, len(r.sent))
			if len(sc.Clients) > 1 {
				sc.Clients[c].ID += fmt.Sprintf(".%d", c)
			}
		}
		r.sent = append(r.sent, &sentVariant{v: built[i], fam: f, space: space, sched: sc, pressure: pressed[i]})
		scheds = append(scheds, sc)
	}
	r.finish(append(scheds, probes...), env.Grace)
	r.faults = faultWindows(fault, env.Grace)
	if fault != nil {
		r.recovered = fault.To + env.Grace
	}
	for _, sv := range r.sent {
		if sv.acc, err = accounting.New(&sv.sched, r.faults); err != nil {
			return nil, nil, nil, err
		}
	}
	return r, deferred, refused, nil
}

// finish merges the round's schedules and gives every one the round's duration, so that each
// variant's achieved rate is over the same span as the round's.
func (r *Round) finish(scheds []schedule.Schedule, grace time.Duration) {
	var d time.Duration
	for _, s := range scheds {
		d = max(d, s.Duration)
	}
	if r.Fault != nil {
		d = max(d, r.Fault.To+grace)
	}
	for i := range scheds {
		scheds[i].Duration = d
	}
	for _, sv := range r.sent {
		sv.sched.Duration = d
	}
	r.m = merge(scheds)
	r.Schedule = r.m.Schedule
}

// measured puts the fault's windows as made in place of the planned ones (harness/fault's
// Windows: from its beginning until the recovery grace after the member answered again).
func (r *Round) measured(t result.FaultTiming) error {
	ws := fault.Windows(t, r.Env.Grace, r.Schedule.Duration)
	if ws == nil {
		return fmt.Errorf("round %d: the %s fault was not made: %s", r.N, t.Fault, t.Error)
	}
	r.faults, r.recovered = ws, ws[0].To
	for _, sv := range r.sent {
		if err := sv.acc.SetFaults(ws); err != nil {
			return err
		}
	}
	return nil
}

// Variants is how many variants the round sends.
func (r *Round) Variants() int { return len(r.sent) }

// Add takes one outcome of the round's schedule; it has the signature of traffic.Run's sink.
func (r *Round) Add(o traffic.Outcome) error {
	if o.Index < 0 || o.Index >= len(r.m.Requests) {
		return fmt.Errorf("outcome for request %d of a round of %d", o.Index, len(r.m.Requests))
	}
	if v := int(r.m.variant[o.Index]); v >= len(r.sent) {
		q := r.m.Requests[o.Index]
		r.probes = append(r.probes, probeOutcome{probe: v - len(r.sent), replica: q.Replica, sent: o.Sent, late: o.Lateness, code: o.Code})
		return nil
	}
	sv := r.sent[r.m.variant[o.Index]]
	o.Index = int(r.m.local[o.Index])
	if o.Code >= 200 && o.Code < 300 {
		sv.accepted = append(sv.accepted, acceptance{o.Sent, o.Sent + o.Latency})
	}
	sv.sent = append(sv.sent, o.Sent)
	return sv.acc.Add(o)
}

// judge is every variant's account, judged as loadtest judges (base: what loadtest judges
// the system's scenarios with), and the search's measurement of it.
func (r *Round) judge(base judging.Judging) ([]result.HuntVariant, []Measured) {
	var hv []result.HuntVariant
	var ms []Measured
	fault := ""
	if r.Fault != nil {
		fault = r.Fault.Kind
	}
	for _, sv := range r.sent {
		h, m := judgeVariant(sv, r.N, r.Env, fault, r.recovered, base)
		hv, ms = append(hv, h), append(ms, m)
	}
	return hv, ms
}

// judgeVariant is one variant's account: loadtest's figures and gates for its client, judged
// by harness/verdict exactly as loadtest judges a scenario (every check: 1.1x, false rejects,
// errors and 5xx, lock-out, the generator's), and for a fault variant loadtest's fault gates
// for the round's fault (one limit per node while the store is away, 1.1x after it returned
// and the recovery grace passed, no 5xx, no error while the store is away). base is what
// loadtest judges the system with (its gates, the store's timeout and wait, the shards); the
// window, replicas, sync interval and grace are the round's.
func judgeVariant(sv *sentVariant, round int, env Env, fault string, recovered time.Duration, base judging.Judging) (result.HuntVariant, Measured) {
	rep := sv.acc.Report()
	j := base
	j.Window, j.Sync, j.Replicas, j.Grace = env.Window, env.Interval, env.Replicas, env.Grace
	var ev judging.Evidence
	if sv.fam.Kind == Fault {
		// The round's fault (store-stop, store-pause) with its own gates; the outage ends the
		// grace before recovered, as measured.
		j.Fault, j.Outage = cmp.Or(fault, result.FaultStop), result.Interval{From: env.Outage.From, To: recovered - env.Grace}
		if result.LinkFault(j.Fault) { // the far zone cut: one limit a cut node, as loadtest's link faults
			j.CutNodes = len(env.Far)
		}
		p := result.ProbeResult{ClientReport: result.ClientReport{Limit: env.Limit}}
		for _, a := range sv.accepted {
			p.AcceptedAt, p.AnsweredAt = append(p.AcceptedAt, a.sent), append(p.AnsweredAt, a.answered)
		}
		for _, c := range rep.Clients {
			p.ID = c.ID
			break
		}
		p.AfterRecovery = judging.AfterRecovery(p, j.Recovered(), env.Window, j.Clock())
		ev.Probes = []result.ProbeResult{p}
	}
	v := judging.Judge(&rep, j, ev)
	if sv.fam.Unpaced {
		// Its lateness is the busy sender's jitter the family is made of: it is judged on the
		// send times achieved, by every check but the generator's, which are dropped (kept,
		// they would read as failures of the variant).
		v = withoutGeneratorChecks(v)
	}
	clocks := v.Clocks
	// The figures the variant prints are those of the clock its checks were gated on.
	gate := clocks.Gate
	over, _ := rep.Overshoot(gate)
	falseRejects, _ := rep.FalseRejectsOn(gate)
	h := result.HuntVariant{
		Round: round, Level: sv.v.Level, Accepted: rep.Accepted, Rejected: rep.Rejected, Errors: rep.Errors.Total(),
		Overshoot: over, FalseRejects: falseRejects, Outcome: v.Outcome(), GeneratorBound: v.GeneratorBound,
		PromiseBroken: v.Broken, Checks: v.Checks, Clocks: &clocks,
	}
	for i, p := range sv.space {
		h.Params = append(h.Params, result.HuntParam{Name: p.Name, Value: sv.v.Values[i], Unit: p.Unit})
	}
	for _, c := range rep.Clients {
		h.Offered += c.Offered
		h.Busiest = max(h.Busiest, c.BusiestAccepted)
		if h.Client == "" {
			h.Client = c.ID
		}
		if c.OvershootOn(gate) > j.Gates.MaxOvershoot {
			h.ClientsOver++
		}
	}
	h.Clients = len(rep.Clients)
	m := Measured{GeneratorBound: v.GeneratorBound}
	switch sv.fam.Kind {
	case Attack:
		m.Score = h.Overshoot + float64(h.FalseRejects)
	case AtLimit:
		m.Score = float64(h.FalseRejects) + float64(h.Rejected)/float64(h.Offered+1)
	case Fault:
		h.AfterRecovery = float64(ev.Probes[0].AfterRecovery) / float64(env.Limit)
		h.Replicas = env.Replicas
		h.ErrorsInFault = rep.ErrorsInFault
		// An error while the store is away is a broken promise as a false reject is: each
		// counts a whole bound, so a variant that met them is the family's worst.
		m.Score = max(h.Overshoot/float64(env.Replicas), h.AfterRecovery/j.Gates.MaxOvershoot) + float64(h.FalseRejects) + float64(h.ErrorsInFault)
	}
	return h, m
}

// withoutGeneratorChecks is v judged without the generator's checks: for a family whose
// lateness is what it sends (an unpaced herd), only the limiter's checks say anything.
func withoutGeneratorChecks(v judging.Verdict) judging.Verdict {
	checks := make([]result.Check, 0, len(v.Checks))
	v.Pass, v.GeneratorBound = true, false
	for _, c := range v.Checks {
		if accounting.IsGeneratorCheck(c.Name) {
			continue
		}
		checks = append(checks, c)
		v.Pass = v.Pass && c.Pass
	}
	v.Checks = checks
	return v
}
