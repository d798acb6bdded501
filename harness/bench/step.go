package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// judge says whether a step was sustained: the generator kept its schedule (the load test's
// own gates: achieved ≥ 95 % of asked, p99 lateness ≤ 10 ms) and nothing failed (no
// transport error, no 5xx, no status other than 200 and 429).
func judge(st *result.Step, g accounting.Gates) {
	var why []string
	if st.Errors > 0 {
		why = append(why, fmt.Sprintf("%d errors", st.Errors))
	}
	behind := false
	if st.Achieved < g.MinRateRatio*st.Rate {
		why = append(why, fmt.Sprintf("achieved %s of %s req/s (< %.0f %%)", result.Rate(st.Achieved), result.Rate(st.Rate), 100*g.MinRateRatio))
		behind = true
	}
	if st.Lateness.P99 > g.LatenessP99 {
		why = append(why, fmt.Sprintf("generator p99 lateness %v > %v", st.Lateness.P99.Round(time.Microsecond), g.LatenessP99))
		behind = true
	}
	st.Sustained = len(why) == 0
	st.Why = strings.Join(why, "; ")
	st.GeneratorBound = behind
}

// stepper sends fixed-rate steps at a fleet's replicas: each step is the document's
// background population (HS1 clients, each at most half its limit, so every answer should be
// 200) at the rate asked, spread uniformly over the replicas, for d; or, with slice set, one
// node's share of the documents' traffic (schedule.BuildSlice) to the one replica. Each step
// draws its clients under a prefix of its own, so no step's counts weigh on the next.
type stepper struct {
	urls    []string
	d       time.Duration
	clients int
	seed    uint64
	slice   *schedule.Slice
	gates   accounting.Gates
	timeout time.Duration
	n       int // steps sent, for prefixes and seeds
	// shape, when set, is the request shape and status of a target file's limiter
	// (loadtest.DriveTarget).
	shape  func(*schedule.Schedule) traffic.Options
	status func(uint16) uint16
	// before runs just before the traffic (the store's stats are reset there), after just
	// after it, before anything is counted.
	before func(context.Context) error
	after  func(context.Context)
	// warm, when set, opens and warms that many connections before the traffic's origin
	// (traffic.Options.Warm), and before then runs at the origin, after the warm-up.
	warm int
	// degraded, when set, scrapes the replicas' count of decisions made without the store
	// over each step: a step some of whose answers a replica gave without its store (it
	// fails open when a store call times out) did not sustain its rate as a limiter.
	degraded *synchealth.Scraper
}

// stepSeed is the seed of step n's traffic.
func (s *stepper) stepSeed() uint64 { return s.seed + uint64(s.n) }

// build is step n's traffic at rate.
func (s *stepper) build(rate float64) (schedule.Schedule, error) {
	prefix := fmt.Sprintf("s%d-", s.n)
	if s.slice != nil {
		sl := *s.slice
		sl.Rate, sl.Duration, sl.Seed, sl.Prefix = rate, s.d, s.stepSeed(), prefix
		return schedule.BuildSlice(sl, schedule.DefaultClasses()[0])
	}
	p := schedule.DefaultParams()
	bg := schedule.DefaultBackground(p, rate, s.d)
	bg.Clients = s.clients
	bg.Prefix = prefix
	rng := rand.New(rand.NewPCG(s.seed, uint64(s.n)))
	sched, err := schedule.NewBackground(bg, rng)
	if err != nil {
		return schedule.Schedule{}, err
	}
	return sched, sched.AssignReplicas(len(s.urls), rng)
}

func (s *stepper) send(ctx context.Context, rate float64) (result.Step, error) {
	s.n++
	sched, err := s.build(rate)
	if err != nil {
		return result.Step{}, err
	}
	acc, err := accounting.New(&sched, nil)
	if err != nil {
		return result.Step{}, err
	}
	opts := traffic.Options{}
	if s.shape != nil {
		opts = s.shape(&sched)
	}
	opts.Grace = s.d
	if opts.Timeout == 0 {
		opts.Timeout = s.timeout
	}
	sink := acc.Add
	if s.status != nil {
		sink = func(o traffic.Outcome) error { o.Code = s.status(o.Code); return acc.Add(o) }
	}
	switch {
	case s.before != nil && s.warm > 0:
		opts.Warm = s.warm
		opts.OnStart = func(time.Time) error { return s.before(ctx) }
	case s.before != nil:
		if err := s.before(ctx); err != nil {
			return result.Step{}, err
		}
	case s.warm > 0:
		opts.Warm = s.warm
	}
	var scrape *synchealth.Running
	if s.degraded != nil {
		scrape = s.degraded.Start(ctx, time.Now())
	}
	sum, err := traffic.Run(ctx, &sched, s.urls, opts, sink)
	if s.after != nil {
		s.after(ctx)
	}
	var degraded *result.Degraded
	if scrape != nil {
		degraded = scrape.Stop(ctx).Figures().Degraded
	}
	if err != nil && ctx.Err() != nil {
		return result.Step{}, err
	}
	rep := acc.Report()
	st := result.Step{
		Rate: rate, Achieved: rep.AchievedRate, Duration: s.d, Requests: len(sched.Requests),
		Answered: rep.Accepted + rep.Rejected, Rejected: rep.Rejected,
		Errors: rep.Errors.Total() + rep.Unsent, Clients: distinctClients(&sched),
		Latency: rep.Latency, Lateness: rep.Lateness,
	}
	if s.slice != nil {
		st.Seed = s.stepSeed()
	}
	judge(&st, s.gates)
	if degraded != nil && degraded.Decisions > 0 {
		st.Degraded = degraded.Decisions
		st.Sustained = false
		st.Why = strings.TrimPrefix(st.Why+"; "+degraded.String()+" (failed open)", "; ")
	}
	if err != nil { // the run overran its bound: not sustained, whatever the counts say
		st.Sustained = false
		st.Why = strings.TrimPrefix(st.Why+"; "+err.Error(), "; ")
	}
	if sum.Truncated && st.Sustained {
		st.Sustained, st.Why, st.GeneratorBound = false, "pacing fell more than a step behind", true
	}
	return st, nil
}

// distinctClients is how many clients the schedule sends at least one request for.
func distinctClients(s *schedule.Schedule) int {
	seen := make([]bool, len(s.Clients))
	n := 0
	for _, r := range s.Requests {
		if !seen[r.Client] {
			seen[r.Client], n = true, n+1
		}
	}
	return n
}
