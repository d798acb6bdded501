package hunt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/harness/verdict"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// Sender sends a round's schedule at the system under test from start (every offset counts
// from it), makes the round's store fault at its offsets and returns its timing as measured
// (nil without a fault), and passes every outcome to sink with the harness's statuses: 2xx
// accepted, 429 rejected, anything else an error.
type Sender interface {
	Send(ctx context.Context, r *Round, start time.Time, sink func(traffic.Outcome) error) (*result.FaultTiming, error)
}

// Config is the hunt of one system.
type Config struct {
	// System names what is hunted ("replica" or a target file's name); Design is the
	// built-in replica's --design when one was set. Both go into the schedule files.
	System, Design string
	TimeScale      float64
	// Env is the rule, the fleet and the generator's burst rate; Grace is loadtest's
	// recovery grace. The learning step fills in the rest.
	Env      Env
	Families []Family
	// Budget is the wall time the hunt may take, Requests how many it may send.
	Budget   time.Duration
	Requests int
	// Coarse is the most points of a family's coarse sweep; Levels the refinements after it.
	Coarse, Levels int
	Seed           uint64
	// Fault is the store fault of the fault rounds (result.FaultStop or FaultPause); "" runs
	// no fault round, and NoFault says why. Outage is how long the store is away.
	Fault, NoFault string
	Outage         time.Duration
	// Gates are loadtest's, its lateness tolerance already set for the time scale.
	Gates accounting.Gates
	// Judging is the rest of what loadtest judges the system's scenarios with
	// (loadtest.System.Judging: the store's timeout and wait, the shards, who owns a killed
	// node's refusals); its gates are Gates, and the window, replicas, sync interval, grace
	// and fault are each round's.
	Judging verdict.Judging
	// Pressure is the pressure ladder's top level (0: no pressure search); PressureShare
	// the factor each level puts on an attack's bursts (default 2); PressureRequests sizes a
	// pressure round (default DefaultPressureRequests): half of it one pass of a variant's
	// herd, twice it all the variant's passes, four times it the whole round.
	Pressure         int
	PressureShare    float64
	PressureRequests int
	// Lead is how far ahead of now a round's origin is picked (default 1 s); RoundWindows a
	// round's longest length in windows (default 4.2).
	Lead         time.Duration
	RoundWindows float64
	// OutDir is where the rounds' schedules and outcomes and the families' worst schedules
	// are written (under rounds/ and schedules/); hunt.json names them relative to RunDir.
	OutDir, RunDir string
	Now            func() time.Time
	Progress       io.Writer
}

// judging is what a round's variants are judged with besides the round's own: Judging with
// the gates.
func (c Config) judging() verdict.Judging {
	j := c.Judging
	j.Gates = c.Gates
	return j
}

func (c *Config) defaults() error {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Lead <= 0 {
		c.Lead = time.Second
	}
	if c.RoundWindows <= 0 {
		// An at-limit client's three windows from the first edge, which may be almost a
		// window after the origin.
		c.RoundWindows = 4.2
	}
	if c.Coarse <= 0 {
		c.Coarse = 12
	}
	if c.RunDir == "" {
		c.RunDir = c.OutDir
	}
	if c.PressureShare == 0 {
		c.PressureShare = DefaultPressureShare
	}
	if c.PressureRequests == 0 {
		c.PressureRequests = DefaultPressureRequests
	}
	switch {
	case c.Budget <= 0:
		return fmt.Errorf("--budget must be > 0 (got %v)", c.Budget)
	case c.Requests <= 0:
		return fmt.Errorf("--budget-requests must be > 0 (got %d)", c.Requests)
	case len(c.Families) == 0:
		return errors.New("no family to hunt with")
	case c.Pressure < 0:
		return fmt.Errorf("--pressure must be >= 0 (got %d)", c.Pressure)
	case !(c.PressureShare >= 1) || math.IsInf(c.PressureShare, 0):
		return fmt.Errorf("--pressure-share must be >= 1 (got %v)", c.PressureShare)
	case c.PressureRequests < 1:
		return fmt.Errorf("a pressure round's requests must be >= 1 (got %d)", c.PressureRequests)
	case c.Fault != "" && c.Outage <= 0:
		return fmt.Errorf("a fault round needs an outage > 0 (got %v)", c.Outage)
	}
	return c.Env.check()
}

// record is one variant as measured: the search's figure, hunt.json's, and its traffic.
type record struct {
	v     Variant
	m     Measured
	h     result.HuntVariant
	sched schedule.Schedule
	fault *schedule.Fault
	phase time.Duration // the round's origin's offset into a window since the epoch
}

type engine struct {
	cfg     Config
	snd     Sender
	search  *Search
	learned learned
	out     result.HuntSystem
	records [][]record // by family
	used    int
	started time.Time
	rounds  int
	// ladders are the families' pressure searches (nil for a family not pressed: a fault
	// family, or no --pressure); pressRecs their levels as measured.
	ladders   []*ladder
	pressRecs [][]pressureRecord
	// ceiling is the generator's peak rate as calibrated before the first pressure round (0:
	// not measured).
	ceiling float64
	// pace is the most requests per second a round asks for where its variants overlap: the
	// burst rate at first, lowered when a round's variants fell behind, raised again when
	// they kept up.
	pace float64
}

// Hunt searches cfg.Families against the system snd sends to, within the budget, and
// returns what it found; the worst schedule of every family is written under OutDir. An
// error is a round that could not be sent; what was found until then is returned with it.
func Hunt(ctx context.Context, cfg Config, snd Sender) (result.HuntSystem, error) {
	if err := cfg.defaults(); err != nil {
		return result.HuntSystem{}, err
	}
	e := &engine{cfg: cfg, snd: snd, started: cfg.Now(), records: make([][]record, len(cfg.Families)), pace: cfg.Env.MaxRate}
	e.out = result.HuntSystem{System: cfg.System, Design: cfg.Design, TimeScale: cfg.TimeScale, Window: cfg.Env.Window,
		Limit: cfg.Env.Limit, Replicas: cfg.Env.Replicas, SyncInterval: cfg.Env.Interval}
	e.search = NewSearch(cfg.Families, cfg.Env, cfg.Coarse, cfg.Levels, rand.New(rand.NewPCG(cfg.Seed, 0x4a17)))
	e.ladders, e.pressRecs = make([]*ladder, len(cfg.Families)), make([][]pressureRecord, len(cfg.Families))
	for i, f := range cfg.Families {
		if f.Kind == Fault && cfg.Fault == "" {
			e.search.Stop(i, cfg.NoFault)
		}
		if f.Kind != Fault && !f.Herd && cfg.Pressure > 0 {
			e.ladders[i] = newLadder(Ladder(cfg.Pressure, cfg.PressureShare))
		}
	}
	err := e.run(ctx)
	e.finish()
	return e.out, err
}

// isFault, isUnpaced and isSearch pick a round's families: the unpaced families (bursts a
// window apart, alone and in a herd) have rounds of their own, the first after the learning
// round.
func isFault(f Family) bool   { return f.Kind == Fault }
func isUnpaced(f Family) bool { return f.Kind != Fault && f.Unpaced }
func isSearch(f Family) bool  { return f.Kind != Fault && !f.Unpaced }

// learnable picks the families the learning round runs beside its probes: those that aim
// at nothing it learns and send at the generator's pace (an unpaced burst would make the
// probes late).
func learnable(f Family) bool {
	return f.Kind != Fault && !f.Herd && !f.Unpaced && !f.NeedsTicks && !aimsAtEdges(f)
}

// aimsAtEdges says whether a family places its traffic against window edges (and so waits
// for the learning step to say where they are).
func aimsAtEdges(f Family) bool {
	switch f.Name {
	case FamilyEdge, FamilyAtLimitPaced, FamilyAtLimitBursts, FamilyAtLimitSpread:
		return true
	}
	return false
}

func (e *engine) run(ctx context.Context) error {
	e.out.Stopped = "searched: every family swept and refined"
	if err := e.learn(ctx); err != nil {
		return err
	}
	if e.pressurePending() {
		if done, err := e.calibrate(ctx); err != nil || done {
			return err
		}
	}
	fault := e.cfg.Fault != ""
	// The kinds of round take turns, the kind with the fewest rounds sent first, and among
	// those in this order: the unpaced families (bursts a window apart) and the pressure
	// ladder's top, which a short budget must not miss, then the search and the fault.
	const unpacedRound, pressRound, searchRound, faultRound = 0, 1, 2, 3
	var sent [4]int
	for {
		if ctx.Err() != nil {
			e.out.Stopped = "interrupted"
			return nil
		}
		pending := [4]bool{e.search.Pending(isUnpaced), e.pressurePending(), e.search.Pending(isSearch), fault && e.search.Pending(isFault)}
		next := -1
		for k, ok := range pending {
			if ok && (next < 0 || sent[k] < sent[next]) {
				next = k
			}
		}
		var done bool
		var err error
		switch next {
		case -1:
			return nil
		case unpacedRound:
			done, err = e.round(ctx, isUnpaced, false, nil, kindUnpaced)
		case pressRound:
			done, err = e.pressureRound(ctx)
		case searchRound:
			done, err = e.round(ctx, isSearch, false, nil, "")
		default:
			done, err = e.round(ctx, isFault, true, nil, "")
		}
		sent[next]++
		if err != nil || done {
			return err
		}
	}
}

// learn runs the learning round: the probes, and beside them the coarse sweep of the
// families that aim at nothing learned.
func (e *engine) learn(ctx context.Context) error {
	origin := e.nextOrigin()
	env := roundEnv(e.cfg.Env, origin, learned{})
	plan := newLearnPlan(env, e.tag(origin, 0))
	plan.origin = origin
	_, err := e.round(ctx, learnable, false, &plan, "")
	return err
}

func (e *engine) tag(origin time.Time, n int) string {
	return fmt.Sprintf("hunt%d-r%d", origin.UnixMilli()%1_000_000_000, n)
}

// nextOrigin is the first slice boundary since the epoch at least Lead from now.
func (e *engine) nextOrigin() time.Time {
	return traffic.NextAligned(e.cfg.Now().Add(e.cfg.Lead), e.cfg.Env.Slice())
}

// kindUnpaced is the kind of a round of the unpaced families, as hunt.json gives it.
const kindUnpaced = "unpaced"

// round builds, sends and judges one round of the families filter picks (with plan, the
// learning round); kind, when set, names the round's kind in place of lay's. done is true
// when a budget ran out.
func (e *engine) round(ctx context.Context, filter func(Family) bool, faultRound bool, plan *learnPlan, kind string) (done bool, err error) {
	s := e.lay(faultRound, plan)
	if kind != "" {
		s.kind = kind
	}
	vs := e.search.Next(filter)
	r, deferred, refused, err := e.build(s.n, s.kind, vs, s.env, s.fault, s.maxLen, s.origin, plan)
	if err != nil {
		return true, err
	}
	if r.Variants() == 0 && plan == nil {
		// Nothing fitted even alone in an empty round: those families cannot run.
		for fi, why := range refused {
			e.search.Stop(fi, why)
		}
		for _, v := range deferred {
			e.search.Stop(v.Family, fmt.Sprintf("a variant does not fit in a round of %v", s.maxLen))
		}
		return false, nil
	}
	r, deferred, last, err := e.fitRequests(s, r, vs, deferred, plan)
	if err != nil || r == nil {
		return true, err
	}
	e.search.Return(deferred)
	for fi, why := range refused {
		e.search.Stop(fi, why)
	}
	if e.outOfTime(s, r) {
		return true, nil
	}
	hr, stop, err := e.send(ctx, s, r)
	if stop || err != nil {
		return true, err
	}
	e.judge(s, r, hr, plan)
	if last {
		e.out.Stopped = e.requestsSpent()
		return true, nil
	}
	return false, nil
}

// layout is what a round is laid out on before its variants are chosen.
type layout struct {
	n      int
	kind   string // "learn", "search" or "fault"
	origin time.Time
	env    Env
	fault  *schedule.Fault
	maxLen time.Duration
	// nprobes is how many requests the learning probes take, counted first against the
	// request budget.
	nprobes int
}

// lay places the next round: its origin, its environment, its fault, its longest length.
func (e *engine) lay(faultRound bool, plan *learnPlan) layout {
	cfg := e.cfg
	s := layout{n: e.rounds, kind: "search", origin: e.nextOrigin()}
	switch {
	case plan != nil:
		s.kind = "learn"
		s.origin = plan.origin // the probes were laid out for it
	case faultRound:
		s.kind = "fault"
	}
	s.env = roundEnv(cfg.Env, s.origin, e.learned)
	s.maxLen = time.Duration(cfg.RoundWindows * float64(cfg.Env.Window))
	if faultRound {
		from := 2 * s.env.Slice()
		s.fault = &schedule.Fault{Kind: cfg.Fault, From: from, To: from + cfg.Outage}
		s.env.Outage = result.Interval{From: s.fault.From, To: s.fault.To}
		s.maxLen = max(s.maxLen, s.fault.To+cfg.Env.Grace+2*cfg.Env.Window)
	}
	if plan != nil {
		for _, p := range plan.probes {
			s.maxLen = max(s.maxLen, p.Schedule.Duration)
			s.nprobes += len(p.Schedule.Requests)
		}
	}
	return s
}

// fitRequests keeps a round within the request budget: the variants that fit in what is left
// are rebuilt into it and the others deferred. A nil round means that none fitted (the hunt
// stops there); last, that this round spends the budget.
func (e *engine) fitRequests(s layout, r *Round, vs, deferred []Variant, plan *learnPlan) (_ *Round, _ []Variant, last bool, _ error) {
	left := e.cfg.Requests - e.used
	if len(r.Schedule.Requests) <= left {
		return r, deferred, false, nil
	}
	sum := s.nprobes
	var kept []Variant
	for _, sv := range r.sent {
		if sum+len(sv.sched.Requests) > left {
			break
		}
		sum += len(sv.sched.Requests)
		kept = append(kept, sv.v)
	}
	if len(kept) == 0 && plan == nil {
		e.search.Return(vs)
		e.out.Stopped = e.requestsSpent()
		return nil, nil, true, nil
	}
	var rest []Variant
	for _, v := range vs {
		if !containsVariant(kept, v) {
			rest = append(rest, v)
		}
	}
	r, _, _, err := e.build(s.n, s.kind, kept, s.env, s.fault, s.maxLen, s.origin, plan)
	return r, rest, true, err
}

func (e *engine) requestsSpent() string {
	return fmt.Sprintf("request budget spent (%d of %d sent)", e.used, e.cfg.Requests)
}

// outOfTime says whether the round would end past the time budget (the wait for its origin,
// the round, and the answers' timeout); if so it gives its variants back and says why the
// hunt stopped.
func (e *engine) outOfTime(s layout, r *Round) bool {
	need := s.origin.Sub(e.cfg.Now()) + r.Schedule.Duration + 2*time.Second
	elapsed := e.cfg.Now().Sub(e.started)
	if elapsed+need <= e.cfg.Budget {
		return false
	}
	e.search.Return(r.variants())
	e.out.Stopped = fmt.Sprintf("time budget spent (%v of %v; the next round needed %v)", elapsed.Round(time.Second), e.cfg.Budget, need.Round(time.Second))
	return true
}

// send writes the round's schedule, sends it, and writes and accounts for every outcome.
// stop is true when the round ended the hunt: interrupted, or failed (err says how).
func (e *engine) send(ctx context.Context, s layout, r *Round) (_ result.HuntRound, stop bool, _ error) {
	cfg := e.cfg
	n := s.n
	e.rounds++
	dir := filepath.Join(cfg.OutDir, "rounds", fmt.Sprintf("round-%d", n))
	hr := result.HuntRound{Round: n, Kind: s.kind, Start: s.origin.UTC(), Duration: r.Schedule.Duration, Variants: r.Variants(),
		Requests: len(r.Schedule.Requests), Pace: e.pace}
	if s.fault != nil {
		hr.Fault = &result.HuntFault{Kind: s.fault.Kind, From: s.fault.From, To: s.fault.To}
	}
	whole := schedule.File{Header: schedule.Header{Name: "round " + fmt.Sprint(n), Target: cfg.System, Design: cfg.Design,
		TimeScale: cfg.TimeScale, Align: cfg.Env.Slice(), Replicas: cfg.Env.Replicas, Fault: s.fault, Seed: cfg.Seed}, Schedule: r.Schedule}
	if err := schedule.WriteFile(filepath.Join(dir, "schedule.json"), &whole); err != nil {
		return hr, true, err
	}
	hr.Schedule = e.rel(filepath.Join(dir, "schedule.json"))
	w, err := traffic.Create(dir)
	if err != nil {
		return hr, true, err
	}
	hr.Outcomes = e.rel(filepath.Join(dir, traffic.OutcomesFile))
	all, err := accounting.New(&r.Schedule, faultWindows(s.fault, cfg.Env.Grace))
	if err != nil {
		w.Close()
		return hr, true, err
	}
	fmt.Fprintf(cfg.Progress, "   round %d (%s): %d variants, %d requests over %v from %s\n", n, s.kind, r.Variants(),
		len(r.Schedule.Requests), r.Schedule.Duration.Round(time.Millisecond), s.origin.Format("15:04:05.000"))
	before, read := e.storeLoad()
	timing, sendErr := e.snd.Send(ctx, r, s.origin, func(o traffic.Outcome) error {
		if err := w.Write(o); err != nil {
			return err
		}
		if err := all.Add(o); err != nil {
			return err
		}
		return r.Add(o)
	})
	sendErr = errors.Join(sendErr, w.Close())
	if timing != nil {
		// Judged as loadtest judges a fault: on the windows measured, not the ones planned.
		hr.Fault.Timing = timing
		if err := r.measured(*timing); err != nil {
			return hr, true, err
		}
		_ = all.SetFaults(r.faults)
	}
	rep := all.Report()
	hr.Lateness = rep.Lateness
	e.used += rep.Outcomes
	if sendErr != nil && ctx.Err() == nil {
		hr.Error = sendErr.Error()
		e.out.Rounds = append(e.out.Rounds, hr)
		if s.kind != kindPressure {
			e.search.Return(r.variants())
		}
		return hr, true, fmt.Errorf("round %d: %w", n, sendErr)
	}
	if ctx.Err() != nil {
		e.out.Rounds = append(e.out.Rounds, hr)
		e.out.Stopped = "interrupted"
		return hr, true, nil
	}
	if after, readAfter := e.storeLoad(); read && readAfter {
		hr.Store = &result.HuntStore{Timeouts: after.Timeouts - before.Timeouts, Degraded: after.Degraded - before.Degraded}
	}
	return hr, false, nil
}

// judge records what the round showed: what the learning round learned, each variant's
// measure for the search, and the round itself.
func (e *engine) judge(s layout, r *Round, hr result.HuntRound, plan *learnPlan) {
	cfg := e.cfg
	if plan != nil {
		e.learned = plan.analyse(s.env, s.origin, r.probes, cfg.Gates.LatenessP99)
		e.afterLearning()
		e.out.Learned = e.learned.result()
		fmt.Fprintf(cfg.Progress, "   learned: %s; %s\n", e.learned.edge, e.learned.tickNote)
	}
	hv, ms := r.judge(cfg.judging())
	phase := time.Duration(s.origin.UnixNano() % int64(cfg.Env.Window))
	for i, sv := range r.sent {
		if ms[i].GeneratorBound {
			hr.Bound++
		}
		hv[i].Store = hr.Store
		e.search.Record(sv.v, ms[i])
		e.records[sv.v.Family] = append(e.records[sv.v.Family], record{v: sv.v, m: ms[i], h: hv[i], sched: sv.sched, fault: s.fault, phase: phase})
	}
	e.out.Rounds = append(e.out.Rounds, hr)
	e.adapt(hr)
	e.printBest(cfg.Progress)
}

// build is newRound with the engine's search, tag and seed.
func (e *engine) build(n int, kind string, vs []Variant, env Env, fault *schedule.Fault, maxLen time.Duration, origin time.Time,
	plan *learnPlan) (*Round, []Variant, map[int]string, error) {
	if plan != nil {
		// A rebuild places the probes afresh: start from where they were laid out.
		p := *plan
		p.probes, p.sync = slices.Clone(plan.probes), slices.Clone(plan.sync)
		defer func() { *plan = p }()
		plan = &p
	}
	return newRound(n, kind, e.search, vs, env, fault, maxLen, e.pace, e.tag(origin, n), e.cfg.Seed, plan)
}

// variants are the variants a round sends.
func (r *Round) variants() []Variant {
	out := make([]Variant, len(r.sent))
	for i, sv := range r.sent {
		out[i] = sv.v
	}
	return out
}

func containsVariant(vs []Variant, v Variant) bool {
	for _, x := range vs {
		if x.Family == v.Family && x.key() == v.key() {
			return true
		}
	}
	return false
}

// afterLearning stops or qualifies the families that aim at what the learning step could
// not find.
func (e *engine) afterLearning() {
	for i := range e.search.Families() {
		f, _ := e.search.Family(i)
		if f.NeedsFar && len(e.cfg.Env.Far) == 0 {
			e.search.Stop(i, "no far zone to aim at: hunt on a topology (--zones, --topology, a target file's topology:)")
			continue
		}
		if !f.NeedsTicks || e.learned.ticks != nil {
			continue
		}
		env := e.cfg.Env
		if env.Interval <= 0 || env.Replicas < 2 {
			e.search.Stop(i, e.learned.tickNote)
			continue
		}
		// A syncing fleet whose ticks did not show: aim at whole intervals since the epoch.
		e.learned.ticks = make([]time.Duration, env.Replicas)
		e.learned.tickNote += "; the sync-tick family aims at whole intervals since the epoch instead"
	}
}

// replayFile is a schedule the hunt sent, as loadtest --schedule replays it: the hunt's
// header, named name with note, and sched moved by phase onto the window and trimmed.
func (e *engine) replayFile(name, note string, sched schedule.Schedule, phase time.Duration) schedule.File {
	cfg := e.cfg
	return schedule.File{Header: schedule.Header{Name: name, Target: cfg.System, Design: cfg.Design, TimeScale: cfg.TimeScale,
		Align: cfg.Env.Window, Replicas: cfg.Env.Replicas, Seed: cfg.Seed, Note: note},
		Schedule: trimmed(shifted(sched, phase), cfg.Env.Slice())}
}

// writeReplay writes file as schedules/<base>.json in the hunt's directory, and returns its
// path as hunt.json gives it.
func (e *engine) writeReplay(base string, file *schedule.File) (string, error) {
	path := filepath.Join(e.cfg.OutDir, "schedules", base+".json")
	if err := schedule.WriteFile(path, file); err != nil {
		return "", err
	}
	return e.rel(path), nil
}

// rel is path relative to the run directory, for hunt.json.
func (e *engine) rel(path string) string {
	if r, err := filepath.Rel(e.cfg.RunDir, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// printBest prints every family's worst case so far on one line each.
func (e *engine) printBest(w io.Writer) {
	for i := range e.search.Families() {
		f, space := e.search.Family(i)
		v, m, ok := e.search.Best(i)
		if !ok {
			continue
		}
		bound := ""
		if m.GeneratorBound {
			bound = " (generator-bound)"
		}
		fmt.Fprintf(w, "     %-16s worst so far %.3f%s: %s\n", f.Name, m.Score, bound, describe(space, v.Values))
	}
}

// worse says a family's variant a did more harm than b: one that broke a promise on traffic
// sent on schedule (by any check: a 5xx, an error or a client locked out as much as 1.1x)
// before one that did not, then the search's measure (Measured.better).
func worse(a, b record) bool {
	if fa, fb := a.h.Outcome == outcome.Fail, b.h.Outcome == outcome.Fail; fa != fb {
		return fa
	}
	return a.m.better(b.m)
}

// finish fills in every family's result and writes its worst schedule.
func (e *engine) finish() {
	cfg := e.cfg
	e.out.Elapsed = cfg.Now().Sub(e.started)
	e.out.Requests = e.used
	for i := range e.search.Families() {
		f, space := e.search.Family(i)
		hf := result.HuntFamily{Name: f.Name, Kind: string(f.Kind), Doc: f.Doc}
		recs := e.records[i]
		if len(recs) == 0 {
			hf.NotRun = e.search.Stopped(i)
			if hf.NotRun == "" {
				hf.NotRun = "no round had room for it before the budget ran out"
			}
		}
		switch {
		case !f.NeedsTicks || e.learned.ticks == nil:
		case strings.Contains(e.learned.tickNote, "instead"):
			hf.Note = "sync ticks not learned: aimed at whole intervals since the epoch"
		case strings.Contains(e.learned.tickNote, "the others taken"):
			hf.Note = "some sync ticks not learned: " + e.learned.tickNote
		}
		worst := -1
		for k, r := range recs {
			hf.Tried = append(hf.Tried, r.h)
			if worst < 0 || worse(r, recs[worst]) {
				worst = k
			}
		}
		if worst >= 0 {
			w := recs[worst]
			hf.Worst = &w.h
			hf.GeneratorBound = w.h.Outcome == outcome.GeneratorBound
			hf.Breaks = w.h.Outcome == outcome.Fail
			file := e.replayFile(f.Name, fmt.Sprintf("harness hunt round %d: %s", w.h.Round, hf.Verdict()), w.sched, w.phase)
			for k, p := range space {
				file.Params = append(file.Params, schedule.Param{Name: p.Name, Value: w.v.Values[k], Unit: p.Unit})
			}
			if w.fault != nil {
				fl := *w.fault
				fl.From, fl.To = fl.From+w.phase, fl.To+w.phase
				file.Fault = &fl
				file.Schedule.Duration = max(file.Schedule.Duration, fl.To+cfg.Env.Grace)
			}
			if path, err := e.writeReplay(f.Name, &file); err != nil {
				hf.Note = strings.TrimPrefix(hf.Note+"; ", "; ") + "its schedule could not be written: " + err.Error()
			} else {
				hf.Schedule = path
			}
		}
		e.finishPressure(i, f, &hf)
		hf.Outcome = result.FamilyOutcome(hf)
		e.out.Families = append(e.out.Families, hf)
	}
}

// adapt sets the next round's pace from this one's variants: a quarter or more of them sent
// late or slow lowers it (to 0.7×, not under a quarter of the burst rate), a tenth or fewer
// raises it again (1.25×, up to the burst rate).
func (e *engine) adapt(hr result.HuntRound) {
	if hr.Variants == 0 {
		return
	}
	share := float64(hr.Bound) / float64(hr.Variants)
	switch {
	case share >= 0.25:
		e.pace = max(e.cfg.Env.MaxRate/4, e.pace*0.7)
	case share <= 0.1:
		e.pace = min(e.cfg.Env.MaxRate, e.pace*1.25)
	}
}

// trimmed is s ending tail after its last request: a variant alone needs no more of its
// round than that.
func trimmed(s schedule.Schedule, tail time.Duration) schedule.Schedule {
	if n := len(s.Requests); n > 0 {
		s.Duration = min(s.Duration, s.Requests[n-1].At+tail)
	}
	return s
}
