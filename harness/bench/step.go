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
// 200) at the rate asked, spread uniformly over the replicas, for d. Each step draws its
// clients under a prefix of its own, so no step's counts weigh on the next.
type stepper struct {
	urls    []string
	d       time.Duration
	clients int
	seed    uint64
	gates   accounting.Gates
	timeout time.Duration
	n       int // steps sent, for prefixes and seeds
	// before runs just before the traffic (the store's stats are reset there).
	before func(context.Context) error
}

func (s *stepper) send(ctx context.Context, rate float64) (result.Step, error) {
	s.n++
	p := schedule.DefaultParams()
	bg := schedule.DefaultBackground(p, rate, s.d)
	bg.Clients = s.clients
	bg.Prefix = fmt.Sprintf("s%d-", s.n)
	rng := rand.New(rand.NewPCG(s.seed, uint64(s.n)))
	sched, err := schedule.NewBackground(bg, rng)
	if err != nil {
		return result.Step{}, err
	}
	if err := sched.AssignReplicas(len(s.urls), rng); err != nil {
		return result.Step{}, err
	}
	acc, err := accounting.New(&sched, nil)
	if err != nil {
		return result.Step{}, err
	}
	if s.before != nil {
		if err := s.before(ctx); err != nil {
			return result.Step{}, err
		}
	}
	sum, err := traffic.Run(ctx, &sched, s.urls, traffic.Options{Timeout: s.timeout, Grace: s.d}, acc.Add)
	if err != nil && ctx.Err() != nil {
		return result.Step{}, err
	}
	rep := acc.Report()
	st := result.Step{
		Rate: rate, Achieved: rep.AchievedRate, Duration: s.d, Requests: len(sched.Requests),
		Answered: rep.Accepted + rep.Rejected, Rejected: rep.Rejected,
		Errors:  rep.Errors.Total() + rep.Unsent,
		Latency: rep.Latency, Lateness: rep.Lateness,
	}
	judge(&st, s.gates)
	if err != nil { // the run overran its bound: not sustained, whatever the counts say
		st.Sustained = false
		st.Why = strings.TrimPrefix(st.Why+"; "+err.Error(), "; ")
	}
	if sum.Truncated && st.Sustained {
		st.Sustained, st.Why, st.GeneratorBound = false, "pacing fell more than a step behind", true
	}
	return st, nil
}
