package hunt

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// Pressure defaults and the ladder's constants.
const (
	// DefaultPressure is the ladder's top level; DefaultPressureShare the factor each level
	// puts on an attack's bursts; DefaultPressureRequests the most a pressure round's
	// variants send in one pass each (their herds at once).
	DefaultPressure         = 3
	DefaultPressureShare    = 2.0
	DefaultPressureRequests = 24_000
	// maxShareLimits caps a pressed client: at most this many limits in any window-long
	// interval of its own sends.
	maxShareLimits = 8
	// peakBucket is the grain of a variant's peak rate, asked and achieved.
	peakBucket = 10 * time.Millisecond
	// A ladder's push fell short of the generator's ceiling when its peak is under
	// ceilingShare × the ceiling measured.
	ceilingShare = 0.9
	// One pass of a variant's herd sends at most PressureRequests / herdShare below the top,
	// so that a round holds several families; all its passes at most sustain × that; a
	// round's variants together at most sustain × PressureRequests (or one top level).
	herdShare = 2
	sustain   = 4
	// drainFactor × the burst rate is how fast the generator is taken to send an unpaced
	// burst: a pressure round keeps the bursts of two variants that long apart.
	drainFactor = 4
	// The top level's herd: one pass asks what the generator sends in topHold at the ceiling
	// measured (at least PressureRequests, at most topPasses × PressureRequests), of at most
	// topHerd clients.
	topHold   = 500 * time.Millisecond
	topPasses = 4
	topHerd   = 2000
)

// Calibration: a round of its own before the first pressure round sends PressureRequests /
// herdShare requests at one instant over the replicas from one client and reads the peak
// rate they were sent at: the generator's ceiling on this machine.
const kindCalibrate = "calibrate"

// kindPressure is a pressure round's kind, as hunt.json gives it.
const kindPressure = "pressure"

// PressureLevel is one rung of the pressure ladder: how hard a family's variant pushes.
type PressureLevel struct {
	Level int
	// Herd is how many fresh clients send the variant's traffic at the same instants.
	Herd int
	// Conns is how many requests a burst asks of each replica per millisecond: a burst is
	// sent at once, as fast as the generator can, and the generator caps no connection, so
	// every request in flight holds its own.
	Conns int
	// Share multiplies every request of an attack (Share copies, fractions spread evenly),
	// up to maxShareLimits limits in any window-long interval of one client.
	Share float64
	// Repeat is how many passes of an attack's traffic are sent, one after the other, each
	// whole periods of its part (a slice for traffic aimed at slice boundaries) past the last.
	Repeat int
	// Most is the most requests one pass of the herd may send (the herd lowered to fit, at
	// least one client), Total the most of all its passes (the passes lowered to fit, at
	// least one), Fit the longest the pressed part may last (passes lowered to fit); 0 is no
	// cap.
	Most, Total int
	Fit         time.Duration
}

// Ladder is the pressure ladder up to level top: herds of 1, 8, 32 (×4 a level beyond),
// 64 requests per replica per millisecond doubled each level, share^(level−1) on every
// burst, and an attack sent in 1, 12, 36 passes (×3 a level beyond). The top level's herd is
// topHerd: as many clients as the generator's ceiling lets one pass send (pressureVariants
// sizes it).
func Ladder(top int, share float64) []PressureLevel {
	var out []PressureLevel
	herd, repeat := 1, 1
	for k := 1; k <= top; k++ {
		switch k {
		case 1:
		case 2:
			herd, repeat = 8, 12
		case 3:
			herd, repeat = 32, 36
		default:
			herd, repeat = herd*4, repeat*3
		}
		l := PressureLevel{Level: k, Herd: herd, Conns: 64 << (k - 1), Share: math.Pow(share, float64(k-1)), Repeat: repeat}
		if k == top && k > 1 {
			l.Herd = topHerd
		}
		out = append(out, l)
	}
	return out
}

func (l PressureLevel) String() string {
	return fmt.Sprintf("level %d (herd %d, %d per replica per ms, share x%.3g, %s)", l.Level, l.Herd, l.Conns, l.Share, Passes(l.Repeat))
}

// Passes is n passes in words.
func Passes(n int) string {
	if n == 1 {
		return "1 pass"
	}
	return fmt.Sprintf("%d passes", n)
}

// rate is the level's burst rate over replicas: Conns a millisecond to each.
func (l PressureLevel) rate(replicas int) float64 { return float64(l.Conns*replicas) * 1000 }

// pressedValues are a variant's values with every burst-rate parameter set to rate.
func pressedValues(space []ParamSpec, values []float64, rate float64) []float64 {
	out := slices.Clone(values)
	for i, p := range space {
		if p.Name == "rate" {
			out[i] = rate
		}
	}
	return out
}

// middle is the centre of a family's space: the point a family no round has measured is
// pressed at.
func middle(space []ParamSpec) []float64 {
	out := make([]float64, len(space))
	for i, p := range space {
		out[i] = p.clamp((p.Lo + p.Hi) / 2)
	}
	return out
}

// press is one client's part at a pressure level: an attack's every request sent share
// times (capped at maxShareLimits limits in any window-long interval), then the whole sent
// by herd fresh clients at the same instants (the herd lowered to stay within lvl.Most). An
// at-limit client is only herded: each of its herd stays within its limit. It returns the
// part and the level as applied.
func press(p Part, kind Kind, lvl PressureLevel, limit int, window time.Duration) (Part, PressureLevel) {
	s := p.Schedule
	applied := lvl
	reqs := s.Requests
	if kind == Attack && lvl.Share != 1 {
		var at []time.Duration
		for _, r := range reqs {
			at = append(at, r.At)
		}
		busiest := max(1, accounting.Busiest(at, window))
		share := min(lvl.Share, float64(maxShareLimits*limit)/float64(busiest))
		share = max(share, 1)
		var out []schedule.Request
		for i, r := range reqs {
			n := int(math.Floor(float64(i+1)*share)) - int(math.Floor(float64(i)*share))
			for range n {
				out = append(out, r)
			}
		}
		reqs, applied.Share = out, share
	} else {
		applied.Share = 1
	}
	herd := max(1, lvl.Herd)
	if lvl.Most > 0 {
		herd = max(1, min(herd, lvl.Most/max(1, len(reqs))))
	}
	applied.Herd = herd
	applied.Repeat = 1
	if kind == Attack && lvl.Repeat > 1 && p.Period > 0 && len(reqs) > 0 {
		span := reqs[len(reqs)-1].At - reqs[0].At
		every := (span/p.Period + 1) * p.Period
		n := lvl.Repeat
		if lvl.Total > 0 {
			n = min(n, lvl.Total/(herd*len(reqs)))
		}
		if lvl.Fit > 0 {
			n = min(n, int((lvl.Fit-s.Duration)/every)+1)
		}
		n = max(1, n)
		out := make([]schedule.Request, 0, n*len(reqs))
		for k := range n {
			for _, r := range reqs {
				r.At += time.Duration(k) * every
				out = append(out, r)
			}
		}
		reqs, applied.Repeat = out, n
		s.Duration += time.Duration(n-1) * every
	}
	c := s.Clients[0]
	s.Clients = make([]schedule.Client, herd)
	for j := range s.Clients {
		s.Clients[j] = c
	}
	s.Requests = make([]schedule.Request, 0, herd*len(reqs))
	for _, r := range reqs {
		for j := range herd {
			r.Client = int32(j)
			s.Requests = append(s.Requests, r)
		}
	}
	return Part{Schedule: s, Period: p.Period}, applied
}

// buildVariant is a variant's part: its family's build, and for a pressure variant the
// build at the level's burst rate, pressed; applied is the level as pressed (nil for none).
func buildVariant(f Family, env Env, v Variant, seed uint64) (_ Part, applied *PressureLevel, _ error) {
	rng := variantSeed(seed, f.Name, v)
	if v.Pressure == nil {
		p, err := f.Build(env, v.Values, rng)
		return p, nil, err
	}
	env.MaxRate = v.Pressure.rate(env.Replicas)
	p, err := f.Build(env, v.Values, rng)
	if err != nil {
		return p, nil, err
	}
	p, lvl := press(p, f.Kind, *v.Pressure, env.Limit, env.Window)
	return p, &lvl, p.Schedule.Validate()
}

// placePressure puts a pressure round's parts: light traffic (at most rate × rateBucket
// requests in a bucket) anywhere, and each part's bursts where no other part's burst is
// being sent, a burst of n taking n / (drainFactor × rate) of the generator's time. Parts go
// in their order; shift and placed are as place's.
func placePressure(parts []Part, maxLen time.Duration, rate float64) (shift []time.Duration, placed []bool) {
	shift, placed = make([]time.Duration, len(parts)), make([]bool, len(parts))
	light := rate * rateBucket.Seconds()
	drain := drainFactor * rate
	busy := make([]bool, int(maxLen/rateBucket)+2)
	for i, p := range parts {
		// The buckets this part's bursts hold the generator in, unshifted.
		own := map[int]float64{}
		for _, r := range p.Schedule.Requests {
			own[int(r.At/rateBucket)]++
		}
		var held []int
		for b, n := range own {
			if n <= light {
				continue
			}
			span := int(math.Ceil(n / drain / rateBucket.Seconds()))
			for k := range max(1, span) {
				held = append(held, b+k)
			}
		}
		for m := time.Duration(0); p.Schedule.Duration+m <= maxLen; m += p.Period {
			off := int(m / rateBucket)
			fits := true
			for _, b := range held {
				if b+off < len(busy) && busy[b+off] {
					fits = false
					break
				}
			}
			if fits {
				for _, b := range held {
					if b+off < len(busy) {
						busy[b+off] = true
					}
				}
				shift[i], placed[i] = m, true
				break
			}
			if p.Period <= 0 {
				break
			}
		}
	}
	return shift, placed
}

// peakRate is the most requests in any peakBucket of times, per second.
func peakRate(times []time.Duration) float64 {
	count := map[time.Duration]int{}
	most := 0
	for _, t := range times {
		b := t / peakBucket
		count[b]++
		most = max(most, count[b])
	}
	return float64(most) / peakBucket.Seconds()
}

// StoreLoad is what the fleet's replicas say of their store: calls that timed out and
// decisions made without it, summed over every replica since it started.
type StoreLoad struct {
	Timeouts, Degraded float64
}

// StoreReader is a Sender that can read its fleet's store load (the built-in replica's
// metrics); ok is false when the system exposes none.
type StoreReader interface {
	StoreLoad() (load StoreLoad, ok bool, err error)
}

// pressureStep is one level of a family's ladder as measured.
type pressureStep struct {
	level PressureLevel // as applied
	// measured: some request of the variant was answered.
	measured bool
	broke    bool
	// asked and achieved are the variant's peak rates (peakRate), scheduled and sent.
	asked, achieved float64
	// store is the fleet's store load over the round; storeRead false when not read.
	store     StoreLoad
	storeRead bool
}

// ladder is one family's pressure search: the top level first, where the push is hardest,
// then the levels below from the lowest, until the bound breaks or every level was sent. It
// decides from what was measured; it sends nothing.
type ladder struct {
	levels []PressureLevel
	steps  []pressureStep
	done   bool
	broke  bool
	// verdict is the ladder's end in words, set when done.
	verdict string
	// ceiling is the generator's peak rate as calibrated, 0 when not measured.
	ceiling float64
}

func newLadder(levels []PressureLevel) *ladder { return &ladder{levels: levels} }

// order is the k-th level to send: the top, then 1, 2, … below it.
func (l *ladder) order(k int) PressureLevel {
	if k == 0 {
		return l.levels[len(l.levels)-1]
	}
	return l.levels[k-1]
}

// next is the level to send next, and false when the ladder is done.
func (l *ladder) next() (PressureLevel, bool) {
	if l.done || len(l.steps) >= len(l.levels) {
		return PressureLevel{}, false
	}
	return l.order(len(l.steps)), true
}

// stop ends the ladder without a measurement, saying why.
func (l *ladder) stop(why string) {
	l.done = true
	l.verdict = why
}

// record takes the measurement of the level next gave and decides whether to go on.
func (l *ladder) record(s pressureStep) {
	l.steps = append(l.steps, s)
	switch {
	case !s.measured:
		l.stop(fmt.Sprintf("not measured at level %d: no request of it was answered", s.level.Level))
	case s.broke:
		l.done, l.broke = true, true
		l.verdict = fmt.Sprintf("broke at %s, at a peak of %.0f req/s sent%s", s.level, s.achieved, storeTail(s))
	case len(l.steps) == len(l.levels):
		l.done = true
		l.verdict = l.held("")
	}
}

// peak is the step that sent fastest.
func (l *ladder) peak() pressureStep {
	var p pressureStep
	for _, s := range l.steps {
		if s.measured && s.achieved >= p.achieved {
			p = s
		}
	}
	return p
}

// held is an unbroken ladder in words: the pressure reached, not the level asked, and how far
// that is from the generator's ceiling; rest says what was not sent.
func (l *ladder) held(rest string) string {
	p := l.peak()
	var sent []string
	for _, s := range l.steps {
		sent = append(sent, fmt.Sprint(s.level.Level))
	}
	out := fmt.Sprintf("held at a peak of %.0f req/s%s", p.achieved, storeTail(p))
	switch {
	case l.ceiling <= 0:
		out += " (the generator's ceiling not measured)"
	case p.achieved < ceilingShare*l.ceiling:
		out += fmt.Sprintf(", short of the generator's ceiling (%.0f req/s measured): pushed that far, not to the most this machine sends", l.ceiling)
	default:
		out += fmt.Sprintf(", the generator's ceiling (%.0f req/s measured)", l.ceiling)
	}
	out += fmt.Sprintf("; level %s sent (herd %d at level %d)", strings.Join(sent, ", "), p.level.Herd, p.level.Level)
	return out + rest
}

// storeTail is a step's store load in words, empty when it was not read.
func storeTail(s pressureStep) string {
	if !s.storeRead {
		return ""
	}
	return fmt.Sprintf(", %.0f store timeouts and %.0f decisions without the store over the round", s.store.Timeouts, s.store.Degraded)
}

// final is the ladder's verdict at the end of the hunt: a ladder the budget cut short says
// how far it got.
func (l *ladder) final() string {
	switch {
	case l.done:
		return l.verdict
	case len(l.steps) == 0:
		return "not searched under pressure: no round had room for it before the budget ran out"
	}
	return l.held(fmt.Sprintf("; the budget ran out before level %d", l.order(len(l.steps)).Level))
}

// level is the highest level measured.
func (l *ladder) level() int {
	most := 0
	for _, s := range l.steps {
		most = max(most, s.level.Level)
	}
	return most
}

// pressureRecord is one level's variant as measured, kept for hunt.json and its schedule.
type pressureRecord struct {
	round result.HuntPressureRound
	sched schedule.Schedule
	phase time.Duration
}

// pressurePending says whether some family's ladder has a level to send.
func (e *engine) pressurePending() bool {
	for _, l := range e.ladders {
		if l != nil {
			if _, ok := l.next(); ok {
				return true
			}
		}
	}
	return false
}

// pressureVariants are every pending ladder's next level, the lowest levels first and among
// them the families the search found worst; each at its family's worst point so far (its
// space's middle when none).
func (e *engine) pressureVariants() []Variant {
	type cand struct {
		v     Variant
		score float64
	}
	var cs []cand
	for i, l := range e.ladders {
		if l == nil {
			continue
		}
		lvl, ok := l.next()
		if !ok {
			continue
		}
		_, space := e.search.Family(i)
		values, score := middle(space), 0.0
		if v, m, ok := e.search.Best(i); ok {
			values, score = v.Values, m.Score
		}
		lvl.Most, lvl.Total = e.cfg.PressureRequests/herdShare, e.cfg.PressureRequests*sustain/herdShare
		if lvl.Level == e.cfg.Pressure {
			lvl.Most = e.topPass()
			lvl.Total = sustain * lvl.Most
		}
		lvl.Fit = time.Duration(e.cfg.RoundWindows * float64(e.cfg.Env.Window))
		cs = append(cs, cand{Variant{Family: i, Values: pressedValues(space, values, lvl.rate(e.cfg.Env.Replicas)), Pressure: &lvl}, score})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.v.Pressure.Level, b.v.Pressure.Level), cmp.Compare(b.score, a.score))
	})
	out := make([]Variant, len(cs))
	for i, c := range cs {
		out[i] = c.v
	}
	return out
}

// pressureRound sends one round of the ladders' next levels: as many families as fit in the
// round's requests (sustain × PressureRequests) and the budget, their bursts apart. done is
// true when a budget ran out.
func (e *engine) pressureRound(ctx context.Context) (done bool, err error) {
	s := e.lay(false, nil)
	s.kind = kindPressure
	vs := e.pressureVariants()
	r, _, refused, err := e.build(s.n, s.kind, vs, s.env, nil, s.maxLen, s.origin, nil)
	if err != nil {
		return true, err
	}
	for fi, why := range refused {
		e.ladders[fi].stop("not searched under pressure: " + why)
	}
	left := min(max(e.cfg.PressureRequests*sustain, sustain*e.topPass()), e.cfg.Requests-e.used)
	var kept []Variant
	sum := 0
	for _, sv := range r.sent {
		if n := len(sv.sched.Requests); len(kept) == 0 || sum+n <= left {
			sum += n
			kept = append(kept, sv.v)
		}
	}
	if len(kept) == 0 {
		// Nothing could be placed even alone: those ladders cannot climb.
		for _, v := range vs {
			if _, bad := refused[v.Family]; !bad {
				e.ladders[v.Family].stop(fmt.Sprintf("not searched under pressure: %s does not fit in a round of %v", v.Pressure, s.maxLen))
			}
		}
		return false, nil
	}
	if sum > e.cfg.Requests-e.used {
		e.out.Stopped = e.requestsSpent()
		return true, nil
	}
	if len(kept) < len(r.sent) {
		if r, _, _, err = e.build(s.n, s.kind, kept, s.env, nil, s.maxLen, s.origin, nil); err != nil {
			return true, err
		}
	}
	need := s.origin.Sub(e.cfg.Now()) + r.Schedule.Duration + 2*time.Second
	if elapsed := e.cfg.Now().Sub(e.started); elapsed+need > e.cfg.Budget {
		e.out.Stopped = fmt.Sprintf("time budget spent (%v of %v; the next round needed %v)", elapsed.Round(time.Second), e.cfg.Budget, need.Round(time.Second))
		return true, nil
	}
	hr, stop, err := e.send(ctx, s, r)
	if stop || err != nil {
		return true, err
	}
	e.judgePressure(s, r, hr)
	return false, nil
}

// topPass is the most one pass of the top level's herd sends: what the generator sends in
// topHold at the ceiling calibrated, within PressureRequests and topPasses × PressureRequests.
func (e *engine) topPass() int {
	lo, hi := e.cfg.PressureRequests, topPasses*e.cfg.PressureRequests
	return min(hi, max(lo, int(e.ceiling*topHold.Seconds())))
}

// calibrate measures the generator's ceiling: PressureRequests / herdShare requests at one
// instant over the replicas, from one fresh client, and the peak rate they left at. done is
// true when a budget ran out.
func (e *engine) calibrate(ctx context.Context) (done bool, err error) {
	s := e.lay(false, nil)
	s.kind = kindCalibrate
	n := e.cfg.PressureRequests / herdShare
	if n > e.cfg.Requests-e.used {
		return false, nil
	}
	c := s.env.client("calibrate")
	c.ID = e.tag(s.origin, s.n) + "-calibrate"
	var b builder
	b.burst(0, 0, n, 0, s.env.Replicas)
	part, err := b.part(c, 0, s.env.Slice())
	if err != nil {
		return true, err
	}
	plan := &learnPlan{edge: -1, origin: s.origin, probes: []Part{part}}
	r, _, _, err := e.build(s.n, s.kind, nil, s.env, nil, s.maxLen, s.origin, plan)
	if err != nil {
		return true, err
	}
	if e.outOfTime(s, r) {
		return true, nil
	}
	hr, stop, err := e.send(ctx, s, r)
	if stop || err != nil {
		return true, err
	}
	var sent []time.Duration
	for _, p := range r.probes {
		sent = append(sent, p.sent)
	}
	e.ceiling = peakRate(sent)
	e.out.Ceiling = e.ceiling
	for _, l := range e.ladders {
		if l != nil {
			l.ceiling = e.ceiling
		}
	}
	e.out.Rounds = append(e.out.Rounds, hr)
	fmt.Fprintf(e.cfg.Progress, "     the generator's ceiling: %.0f req/s at its peak, %d requests at once; the top level's pass: %d requests\n",
		e.ceiling, n, e.topPass())
	return false, nil
}

// storeLoad reads the fleet's store load when the sender can.
func (e *engine) storeLoad() (StoreLoad, bool) {
	sr, ok := e.snd.(StoreReader)
	if !ok {
		return StoreLoad{}, false
	}
	l, ok, err := sr.StoreLoad()
	if err != nil {
		fmt.Fprintf(e.cfg.Progress, "   store metrics not read: %v\n", err)
		return StoreLoad{}, false
	}
	return l, ok
}

// judgePressure judges a pressure round's variants as any round's and climbs each ladder.
func (e *engine) judgePressure(s layout, r *Round, hr result.HuntRound) {
	cfg := e.cfg
	hv, ms := r.judge(cfg.judging())
	phase := time.Duration(s.origin.UnixNano() % int64(cfg.Env.Window))
	var load StoreLoad
	read := hr.Store != nil
	if read {
		load = StoreLoad{Timeouts: hr.Store.Timeouts, Degraded: hr.Store.Degraded}
	}
	for i, sv := range r.sent {
		if ms[i].GeneratorBound {
			hr.Bound++
		}
		hv[i].Store = hr.Store
		applied := *sv.pressure
		var asked []time.Duration
		for _, q := range sv.sched.Requests {
			asked = append(asked, q.At)
		}
		st := pressureStep{level: applied, measured: len(sv.sent) > 0, broke: hv[i].PromiseBroken,
			asked: peakRate(asked), achieved: peakRate(sv.sent), store: load, storeRead: read}
		l := e.ladders[sv.v.Family]
		l.record(st)
		pr := result.HuntPressureRound{Level: applied.Level, Herd: applied.Herd, Conns: applied.Conns, Share: applied.Share, Repeat: applied.Repeat,
			AskedPeak: st.asked, AchievedPeak: st.achieved, StoreTimeouts: load.Timeouts, Degraded: load.Degraded, StoreRead: read,
			Broke: st.broke, Variant: hv[i]}
		e.pressRecs[sv.v.Family] = append(e.pressRecs[sv.v.Family], pressureRecord{round: pr, sched: sv.sched, phase: phase})
		store := "store not read"
		if read {
			store = fmt.Sprintf("%.0f store timeouts, %.0f decisions without the store", load.Timeouts, load.Degraded)
		}
		fmt.Fprintf(cfg.Progress, "     %-16s pressure level %d: x%.3f, %d false rejects; peak %.0f of %.0f req/s asked; %s\n",
			sv.fam.Name, applied.Level, hv[i].Overshoot, hv[i].FalseRejects, st.achieved, st.asked, store)
	}
	e.out.Rounds = append(e.out.Rounds, hr)
}

// finishPressure fills in a family's pressure ladder and writes the schedule of the level
// that broke (else the highest level sent).
func (e *engine) finishPressure(i int, f Family, hf *result.HuntFamily) {
	l := e.ladders[i]
	if l == nil {
		return
	}
	hf.Pressure, hf.PressureVerdict, hf.BrokeUnderPressure = l.level(), l.final(), l.broke
	recs := e.pressRecs[i]
	if len(recs) == 0 {
		return
	}
	pick := len(recs) - 1
	for k, r := range recs {
		hf.PressureRounds = append(hf.PressureRounds, r.round)
		if r.round.Broke && !recs[pick].round.Broke {
			pick = k
		}
	}
	w := recs[pick]
	file := e.replayFile(f.Name+" pressure level "+fmt.Sprint(w.round.Level),
		fmt.Sprintf("harness hunt round %d, pressure: %s", w.round.Variant.Round, hf.PressureVerdict), w.sched, w.phase)
	for _, p := range w.round.Variant.Params {
		file.Params = append(file.Params, schedule.Param{Name: p.Name, Value: p.Value, Unit: p.Unit})
	}
	path, err := e.writeReplay(f.Name+"-pressure", &file)
	if err != nil {
		hf.Note = strings.TrimPrefix(hf.Note+"; ", "; ") + "its pressure schedule could not be written: " + err.Error()
		return
	}
	hf.PressureSchedule = path
}
