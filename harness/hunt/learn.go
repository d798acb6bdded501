package hunt

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// The learning step sends a few probe clients before the search and reads two things from
// their answers, as a client outside the limiter could:
//
//   - where the window's edges are: a probe sends its limit in the middle of a window and
//     then asks every 20th of a slice; with a fixed window a long run of rejections turns into
//     acceptances at the next edge, less than a window later. A sliding window gives the
//     capacity back only a window after the burst, a bucket a little at a time: no edge.
//   - where each replica's sync ticks are: a probe sends its limit to one replica, then asks
//     every other replica every 8th of a sync interval; a replica that decides on a view it
//     refreshes every interval accepts until its tick brings the other's count, then
//     rejects. The acceptance that turns into rejections is the tick. The probes run twice,
//     half an interval apart: a tick stays put, a change tied to the probe's own timing (a
//     limiter that asks the store past a budget) moves with it and is not taken for a tick.

// learnPlan is the learning probes of one round, each a one-client schedule, and what each
// is for.
type learnPlan struct {
	origin time.Time // the round's origin the probes are laid out for
	// probes may move by their period (the edge probe by whole windows, the sync probes by
	// whole intervals) to make room for each other; moved records where they went.
	probes []Part
	edge   int // index of the edge probe, -1 for none
	// sync[k] is the k-th sync probe: trial 0 or 1, the replica it bursts at.
	sync []syncProbe
	gap  time.Duration // a sync probe's poll spacing
}

type syncProbe struct {
	probe, trial, burstAt int
	polls                 time.Duration // when its polls start
}

// edgePollsPerSlice is how often the edge probe asks: 20 times a slice.
const edgePollsPerSlice = 20

// newLearnPlan lays out the probes in env: the edge probe, and with a sync interval and more
// than one replica, four sync probes.
func newLearnPlan(env Env, tag string) learnPlan {
	p := learnPlan{edge: -1}
	s := env.Slice()
	client := func(name string) schedule.Client {
		c := env.client(name)
		c.ID = tag + "-" + name
		return c
	}
	// The edge probe: the limit in the middle of a window, then polls for a window and two
	// slices.
	{
		var b builder
		t0 := (env.FirstEdge + env.Window/2) % env.Window
		span := spanFor(env.Limit, env.MaxRate)
		b.burst(t0, span, env.Limit, 0, env.Replicas)
		gap := s / edgePollsPerSlice
		for t, k := t0+span, 0; t < t0+span+env.Window+2*s; t, k = t+gap, k+1 {
			b.add(t, k%env.Replicas)
		}
		part, err := b.part(client("learn-edge"), env.Window, s)
		if err == nil {
			p.edge = len(p.probes)
			p.probes = append(p.probes, part)
		}
	}
	if env.Interval <= 0 || env.Replicas < 2 {
		return p
	}
	iv := env.Interval
	p.gap = max(iv/8, time.Millisecond)
	span := spanFor(env.Limit, env.MaxRate)
	// Each probe polls as many replicas as keeps its polls within half the burst rate; the
	// probes of a trial poll every replica between them.
	per := max(1, min(env.Replicas-1, int(env.MaxRate/2*p.gap.Seconds())))
	block := ((span+4*iv)/iv + 1) * iv // a probe's burst and polls, in whole intervals
	t0 := s
	for trial := range 2 {
		t0 += time.Duration(trial) * iv / 2
		for first := 0; first < env.Replicas; first += per {
			group := make([]int, 0, per)
			for j := first; j < min(first+per, env.Replicas); j++ {
				group = append(group, j)
			}
			at := (group[len(group)-1] + 1) % env.Replicas // a replica it does not poll
			var b builder
			b.burstTo(t0, span, env.Limit, at)
			for t := t0 + span; t < t0+span+4*iv; t += p.gap {
				for _, j := range group {
					b.add(t, j)
				}
			}
			part, err := b.part(client(fmt.Sprintf("learn-sync-%d-%d", trial, first)), iv, s)
			if err != nil {
				continue
			}
			p.sync = append(p.sync, syncProbe{probe: len(p.probes), trial: trial, burstAt: at, polls: t0 + span})
			p.probes = append(p.probes, part)
			t0 += block
		}
	}
	return p
}

// moved records that the round placed probe i shift[i] later.
func (p *learnPlan) moved(shift []time.Duration) {
	for i := range p.probes {
		p.probes[i] = Part{Schedule: shifted(p.probes[i].Schedule, shift[i]), Period: p.probes[i].Period}
	}
	for k := range p.sync {
		p.sync[k].polls += shift[p.sync[k].probe]
	}
}

// learned is what the probes' answers say, as phases since the epoch.
type learned struct {
	edgePhase time.Duration // window edges are at edgePhase + k·window since the epoch
	edge      string
	ticks     []time.Duration // nil: not learned
	tickNote  string
}

// analyse reads the probes' answers of a round whose origin is origin. A sync probe whose
// polls were sent later than tolerance is not read: its polls did not ask when it meant to.
func (p learnPlan) analyse(env Env, origin time.Time, outs []probeOutcome, tolerance time.Duration) learned {
	by := map[int][]probeOutcome{}
	for _, o := range outs {
		by[o.probe] = append(by[o.probe], o)
	}
	for k := range by {
		slices.SortStableFunc(by[k], func(a, b probeOutcome) int { return int(a.sent - b.sent) })
	}
	var l learned
	l.edgePhase, l.edge = p.analyseEdge(env, origin, by[p.edge])
	l.ticks, l.tickNote = p.analyseTicks(env, origin, by, tolerance)
	return l
}

// accepted says whether an answer is an acceptance; rejected whether it is a rejection
// (the sender has turned every target's statuses into the harness's 200 and 429).
func accepted(o probeOutcome) bool { return o.code >= 200 && o.code < 300 }
func rejected(o probeOutcome) bool { return o.code == 429 }

func (p learnPlan) analyseEdge(env Env, origin time.Time, outs []probeOutcome) (time.Duration, string) {
	epoch := "window edges taken at whole windows since the epoch"
	if p.edge < 0 || len(outs) <= env.Limit {
		return 0, epoch + " (the edge probe was not answered)"
	}
	probe := p.probes[p.edge].Schedule
	burstEnd := probe.Requests[env.Limit-1].At
	s := env.Slice()
	var runFrom time.Duration = -1
	var lastRej time.Duration
	for _, o := range outs {
		if o.sent <= burstEnd {
			continue
		}
		switch {
		case rejected(o):
			if runFrom < 0 {
				runFrom = o.sent
			}
			lastRej = o.sent
		case accepted(o) && runFrom >= 0 && lastRej-runFrom >= 2*s:
			// A long run of rejections turned into an acceptance.
			if o.sent-burstEnd >= env.Window*9/10 {
				return 0, fmt.Sprintf("%s: capacity came back %v after the probe's burst (a sliding window or a bucket: no fixed edge)",
					epoch, (o.sent - burstEnd).Round(time.Millisecond))
			}
			w := int64(env.Window)
			at := origin.Add(o.sent).UnixNano()
			// Within the poll's resolution of a whole window since the epoch: the epoch's edge.
			if prev := at - at%w; at-prev <= int64(o.sent-lastRej)+int64(time.Millisecond) {
				return 0, fmt.Sprintf("window edges at whole windows since the epoch (a run of rejections turned into acceptances %v after one)",
					time.Duration(at-prev).Round(time.Millisecond))
			}
			phase := time.Duration(at % w)
			return phase, fmt.Sprintf("window edges learned at %v into each window since the epoch (a run of rejections turned into acceptances; resolution %v)",
				phase.Round(time.Millisecond), (o.sent - lastRej).Round(time.Millisecond))
		case accepted(o):
			runFrom = -1
		}
	}
	return 0, epoch + " (no run of rejections turned into acceptances after the probe's burst)"
}

func (p learnPlan) analyseTicks(env Env, origin time.Time, by map[int][]probeOutcome, tolerance time.Duration) ([]time.Duration, string) {
	switch {
	case env.Replicas < 2:
		return nil, "one replica: no sync between replicas to aim at"
	case env.Interval <= 0:
		return nil, "the target declares no sync interval (metrics.sync_interval in its target file)"
	}
	iv := int64(env.Interval)
	// est[trial][replica]: the tick's phase since the epoch, -1 when that trial saw none.
	est := [2][]int64{make([]int64, env.Replicas), make([]int64, env.Replicas)}
	for t := range est {
		for j := range est[t] {
			est[t][j] = -1
		}
	}
	instant, late := 0, 0
	for _, sp := range p.sync {
		if slices.ContainsFunc(by[sp.probe], func(o probeOutcome) bool { return o.sent >= sp.polls && o.late > tolerance }) {
			late++
			continue
		}
		// Per polled replica: the last acceptance before the first rejection.
		last := map[int16]time.Duration{}
		done := map[int16]bool{}
		for _, o := range by[sp.probe] {
			if o.sent < sp.polls || int(o.replica) == sp.burstAt || done[o.replica] {
				continue
			}
			if accepted(o) {
				last[o.replica] = o.sent
				continue
			}
			if !rejected(o) {
				continue
			}
			done[o.replica] = true
			prev, ok := last[o.replica]
			if !ok {
				instant++ // rejected at its first poll: it knew at once
				continue
			}
			mid := origin.Add(prev + (o.sent-prev)/2).UnixNano()
			if j := int(o.replica); est[sp.trial][j] < 0 {
				est[sp.trial][j] = mid % iv
			}
		}
	}
	ticks := make([]time.Duration, env.Replicas)
	found := 0
	for j := range ticks {
		a, b := est[0][j], est[1][j]
		if a < 0 || b < 0 {
			continue
		}
		d := (a - b + iv) % iv
		d = min(d, iv-d)
		if d > iv/4 {
			continue // the change moved with the probe: not a tick
		}
		// The circular mean of the two.
		ticks[j] = time.Duration((b + ((a-b+iv+iv/2)%iv-iv/2)/2 + iv) % iv)
		found++
	}
	if found < env.Replicas {
		why := fmt.Sprintf("%d of %d replicas showed a sync tick that stayed put across two probes half an interval apart", found, env.Replicas)
		if instant > 0 {
			why += fmt.Sprintf("; %d polled replicas rejected at their first poll (they knew at once)", instant)
		}
		if late > 0 {
			why += fmt.Sprintf("; %d of %d probes not read: the generator sent their polls more than %v late", late, len(p.sync), tolerance)
		}
		return nil, why
	}
	return ticks, fmt.Sprintf("every replica's sync tick learned: an acceptance that turned into rejections, the same phase in two probes half an interval apart (resolution %v)", p.gap)
}

// roundEnv is env for a round whose origin is origin: the first window edge and each
// replica's first sync tick at or after it.
func roundEnv(env Env, origin time.Time, l learned) Env {
	at := origin.UnixNano()
	mod := func(x, m int64) int64 { return ((x % m) + m) % m }
	env.FirstEdge = time.Duration(mod(int64(l.edgePhase)-at, int64(env.Window)))
	env.Ticks = nil
	if l.ticks != nil {
		env.Ticks = make([]time.Duration, len(l.ticks))
		for i, ph := range l.ticks {
			env.Ticks[i] = time.Duration(mod(int64(ph)-at, int64(env.Interval)))
		}
	}
	return env
}

// resultLearned is what hunt.json says of the learning step.
func (l learned) result() result.HuntLearned {
	return result.HuntLearned{EdgePhase: l.edgePhase, Edge: l.edge, TickPhases: l.ticks, Ticks: l.tickNote}
}

// circularDistance is how far apart two phases are on a circle of length period.
func circularDistance(a, b, period time.Duration) time.Duration {
	d := time.Duration(math.Abs(float64((a - b) % period)))
	return min(d, period-d)
}
