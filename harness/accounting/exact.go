package accounting

import (
	"math"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// An exact clock gives each request a time of its own where arrival bounds give an interval:
// the decision clock is when the limiter says it decided (its answers carry it), the
// backend's is when an admitted request reached a recording backend behind a limiter that
// proxies, what the protected service saw. On it a request is a point: an admission counts
// in the window-long intervals that hold its time, and a refusal at time t is false when the
// client's requests in (t−W, t], itself included, number at most its limit. A request
// without a time there (an error, an answer that did not say) keeps its arrival bounds, so
// that the exact figures never assume what was not measured.

// noTime marks a request without a time on an exact clock.
const noTime = time.Duration(math.MinInt64)

// setTime sets ts[i] to t, making ts (n long, every entry noTime) on its first time.
func setTime(ts []time.Duration, n, i int, t time.Duration) []time.Duration {
	if ts == nil {
		ts = make([]time.Duration, n)
		for k := range ts {
			ts[k] = noTime
		}
	}
	ts[i] = t
	return ts
}

// UseBackend says the run had a recording backend behind the limiter: its promises are
// counted on the backend's clock (AddBackend's times) even where no request reached it.
func (a *Accumulator) UseBackend() { a.backend = true }

// AddBackend records that request index reached the recording backend at offset at (on the
// outcomes' clock). A request that reached it twice (a proxy's retry) keeps its first
// arrival and is counted (Report.ReachedTwice); an index outside the schedule is counted
// too (ReachedOther).
func (a *Accumulator) AddBackend(index int, at time.Duration) {
	a.backend = true
	switch {
	case index < 0 || index >= len(a.class):
		a.reachedOther++
	case a.reached != nil && a.reached[index] != noTime:
		a.reachedTwice++
		a.reached[index] = min(a.reached[index], at)
	default:
		a.reached = setTime(a.reached, len(a.class), index, at)
	}
}

// exactTimes names in r the exact clock the run has and returns its times by schedule
// index: the decision clock where any answer said when it was decided, else the backend's
// where the run had one; nil for none.
func (a *Accumulator) exactTimes(r *Report) []time.Duration {
	switch {
	case a.decided != nil:
		r.Exact = result.ClockDecision
		return a.decided
	case a.backend:
		r.Exact = result.ClockBackend
		r.ReachedTwice, r.ReachedOther = a.reachedTwice, a.reachedOther
		if a.reached == nil {
			a.reached = setTime(nil, len(a.class), 0, noTime)
		}
		return a.reached
	}
	return nil
}

// exactClient adds client cl's promises on the exact clock (times by schedule index) to cr,
// whose requests are idx, and what the clock's times are worth to r.
func (a *Accumulator) exactClient(cr *result.ClientReport, cl schedule.Client, idx []int32, times []time.Duration, r *Report, b *sends) {
	backend := r.Exact == result.ClockBackend
	b.exactAdmitted, b.exactLo, b.exactHi, b.exactRejected = b.exactAdmitted[:0], b.exactLo[:0], b.exactHi[:0], b.exactRejected[:0]
	for _, i := range idx {
		k := a.class[i]
		if k == unseen {
			continue
		}
		t := a.sent[i]
		if a.routing(i, k, t) {
			continue
		}
		answered := t + time.Duration(a.took[i])*time.Microsecond
		lo, hi := t, answered
		e := times[i]
		has := e != noTime
		if has {
			r.ExactTimes++
			if off := max(t-e, e-answered); off > 0 {
				r.ExactOutside++
				r.ExactOutsideMax = max(r.ExactOutsideMax, off)
			}
			lo, hi = e, e
		}
		b.exactLo, b.exactHi = append(b.exactLo, lo), append(b.exactHi, hi)
		switch {
		case k == accepted:
			if !has {
				r.ExactMissing++
			}
			b.exactAdmitted = append(b.exactAdmitted, span{sent: lo, answered: hi})
		case backend && has: // it reached the protected service though its client saw no admission
			r.ReachedUnadmitted++
			b.exactAdmitted = append(b.exactAdmitted, span{sent: lo, answered: hi})
		}
		if k == rejected {
			if !has && !backend {
				r.ExactMissing++
			}
			b.exactRejected = append(b.exactRejected, rejection{sent: lo, answered: hi})
		}
	}
	slices.Sort(b.exactLo)
	slices.Sort(b.exactHi)
	cr.BusiestExact = busiestArrived(b.exactAdmitted, cl.Window, &b.arrival)
	cr.OvershootExact = math.Inf(1)
	if cl.Limit > 0 {
		cr.OvershootExact = float64(cr.BusiestExact) / float64(cl.Limit)
	}
	cr.FalseRejectsExact = unearned(b.exactLo, b.exactHi, b.exactRejected, cl.Window, cl.Limit, nil) // the zones count theirs on arrival bounds
}
