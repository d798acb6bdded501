package synchealth

import (
	"fmt"
	"math"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// Tick is one round of scrapes: every node's sample at about one instant, nil where the
// node did not answer.
type Tick struct {
	At    time.Duration
	Nodes []*Sample
}

// Series is every scrape of a scenario, in order.
type Series struct {
	Names    Names
	Nodes    int
	Every    time.Duration
	Interval time.Duration // the sync interval; 0 when unknown
	Ticks    []Tick
	Errors   int // scrapes that failed
}

// Figures says how the scenario's sync went, from the first scrape to the last: counters
// and histograms are the increase between them (a node that restarted and began again
// from zero counts from zero), summed over nodes.
func (s Series) Figures() result.SyncHealth {
	h := result.SyncHealth{Path: s.Names.Path, Nodes: s.Nodes, Every: s.Every, Interval: s.Interval, ScrapeErrors: s.Errors}
	for _, t := range s.Ticks {
		for _, n := range t.Nodes {
			if n != nil {
				h.Scrapes++
			}
		}
	}
	if h.Scrapes == 0 {
		h.Why = fmt.Sprintf("no replica answered on %s (%d scrapes failed)", s.Names.Path, s.Errors)
		return h
	}
	var ex, rt exchangeSums
	var dur, cli, age hists
	blind := make([]float64, s.Nodes)
	hasBlind := false
	var deg result.Degraded
	hasDegraded := false
	var takes result.StoreDecisions
	hasTakes := false
	for node := range s.Nodes {
		var prev *Sample
		for _, t := range s.Ticks {
			cur := t.Nodes[node]
			if cur == nil {
				continue
			}
			if cur.SyncLag != nil {
				lag := *cur.SyncLag
				if h.MaxSyncLag == nil || lag > *h.MaxSyncLag {
					h.MaxSyncLag = &lag
				}
			}
			if prev != nil {
				ex.add(prev, cur)
				rt.addFallback(prev, cur)
				dur.add(prev.Duration, cur.Duration)
				cli.add(prev.Clients, cur.Clients)
				age.add(prev.ViewAge, cur.ViewAge)
				if prev.Blind != nil && cur.Blind != nil {
					blind[node] += increase(*prev.Blind, *cur.Blind)
					hasBlind = true
				}
				if prev.HasTake && cur.HasTake {
					takes.Calls += round(increase(prev.TakeCalls, cur.TakeCalls))
					takes.Failed += round(increase(prev.TakeTimeout, cur.TakeTimeout) + increase(prev.TakeErrOther, cur.TakeErrOther))
					hasTakes = true
				}
				if prev.Degraded != nil && cur.Degraded != nil {
					deg.Decisions += round(increase(*prev.Degraded, *cur.Degraded))
					deg.TimedOut += round(increase(prev.TakeTimeout, cur.TakeTimeout))
					deg.BreakerOpen += round(increase(prev.TakeBreakerOpen, cur.TakeBreakerOpen))
					deg.Failed += round(increase(prev.TakeErrOther, cur.TakeErrOther))
					hasDegraded = true
				}
			}
			prev = cur
		}
	}
	switch {
	case ex.seen:
		h.Exchanges, h.ExchangesFrom = ex.exchanges(), s.Names.Exchanges
	case rt.seen:
		h.Exchanges = rt.exchanges()
		h.ExchangesFrom = fmt.Sprintf("%s and %s{op=%q}", s.Names.RoundTrips, s.Names.StoreErrors, opExchange)
	}
	h.Duration, h.Clients, h.ViewAge = dur.distribution(), cli.distribution(), age.distribution()
	if hasBlind {
		h.Blind = &result.Blind{PerNode: blind}
		for _, b := range blind {
			h.Blind.Max = max(h.Blind.Max, b)
			h.Blind.Total += b
		}
	}
	if hasTakes && takes.Calls > 0 {
		h.StoreDecisions = &takes
	}
	if hasDegraded {
		deg.From = s.Names.Degraded
		h.Degraded = &deg
	}
	h.Series, h.AgeSeries = s.points()
	h.Available = h.Exchanges != nil || h.Duration != nil || h.Clients != nil || h.ViewAge != nil || h.Blind != nil || h.MaxSyncLag != nil
	if !h.Available {
		h.Why = fmt.Sprintf("the replicas' %s exposes no sync metric", s.Names.Path)
		h.Series = nil
	}
	return h
}

// points are the sync between consecutive ticks, every node together; a node that missed a
// scrape is counted from its last answered one.
func (s Series) points() ([]result.SyncPoint, string) {
	what := ""
	var out []result.SyncPoint
	last := make([]*Sample, s.Nodes)
	for i, b := range s.Ticks {
		var ex, rt exchangeSums
		var age hists
		lag, hasLag := 0.0, false
		from := time.Duration(-1)
		for node, c := range b.Nodes {
			if c == nil {
				continue
			}
			if c.SyncLag != nil {
				lag, hasLag = max(lag, *c.SyncLag), true
			}
			if p := last[node]; p != nil {
				ex.add(p, c)
				rt.addFallback(p, c)
				age.add(p.ViewAge, c.ViewAge)
				if from < 0 || p.At < from {
					from = p.At
				}
			}
			last[node] = c
		}
		if i == 0 || from < 0 || b.At <= from {
			continue
		}
		dt := (b.At - s.Ticks[i-1].At).Seconds()
		pt := result.SyncPoint{At: b.At, Age: -1}
		e := ex.exchanges()
		if !ex.seen {
			e = rt.exchanges()
		}
		if e != nil {
			pt.OKPerSec, pt.FailedPerSec = float64(e.OK)/dt, float64(e.Unsuccessful())/dt
		}
		switch d := age.distribution(); {
		case d != nil:
			pt.Age, what = d.P99, "view age p99"
		case age.seen: // no decision between these scrapes
		case hasLag:
			pt.Age, what = lag, "sync lag, the most of any node"
		}
		if e == nil && pt.Age < 0 {
			continue
		}
		out = append(out, pt)
	}
	return out, what
}

// exchangeSums add exchanges between samples, from the exchange counter or, for the
// fallback, from the store calls of the exchange op and their errors.
type exchangeSums struct {
	seen, fallback                bool
	ok, failed, timedOut, started float64
}

func (e *exchangeSums) add(a, b *Sample) {
	if !a.HasExchanges || !b.HasExchanges {
		return
	}
	e.seen = true
	e.ok += increase(a.OK, b.OK)
	e.failed += increase(a.Failed, b.Failed)
	e.timedOut += increase(a.TimedOut, b.TimedOut)
}

// addFallback counts an exchange for every store call of the exchange op and every one the
// breaker refused; those that ended in an error failed (timeouts apart).
func (e *exchangeSums) addFallback(a, b *Sample) {
	if !a.HasRoundTrips || !b.HasRoundTrips {
		return
	}
	e.seen, e.fallback = true, true
	e.started += increase(a.RoundTrips, b.RoundTrips) + increase(a.ErrBreakerOpen, b.ErrBreakerOpen)
	e.timedOut += increase(a.ErrTimeout, b.ErrTimeout)
	e.failed += increase(a.ErrOther, b.ErrOther) + increase(a.ErrBreakerOpen, b.ErrBreakerOpen)
}

func (e exchangeSums) exchanges() *result.Exchanges {
	if !e.seen {
		return nil
	}
	x := &result.Exchanges{Failed: round(e.failed), TimedOut: round(e.timedOut)}
	if e.fallback { // successes are the calls that did not fail
		x.Attempted = round(e.started)
		x.OK = max(0, x.Attempted-x.Failed-x.TimedOut)
		return x
	}
	x.OK = round(e.ok)
	x.Attempted = x.OK + x.Failed + x.TimedOut
	return x
}

// increase is a counter's increase from a to b; a counter that went down was reset (its
// process started again) and counts from zero.
func increase(a, b float64) float64 {
	if b < a {
		return b
	}
	return b - a
}

func round(f float64) int64 { return int64(math.Round(f)) }

// hists add histograms' increases between samples.
type hists struct {
	seen bool
	h    *Hist
	bad  bool // bucket bounds that differ between nodes or scrapes
}

func (s *hists) add(a, b *Hist) {
	if a == nil || b == nil {
		return
	}
	s.seen = true
	if len(a.Bounds) != len(b.Bounds) {
		s.bad = true
		return
	}
	reset := b.Count < a.Count
	if s.h == nil {
		s.h = &Hist{Bounds: b.Bounds, Counts: make([]float64, len(b.Bounds))}
	}
	if len(s.h.Bounds) != len(b.Bounds) {
		s.bad = true
		return
	}
	for i := range b.Counts {
		if s.h.Bounds[i] != b.Bounds[i] || a.Bounds[i] != b.Bounds[i] {
			s.bad = true
			return
		}
	}
	for i := range b.Counts {
		if reset {
			s.h.Counts[i] += b.Counts[i]
		} else {
			s.h.Counts[i] += b.Counts[i] - a.Counts[i]
		}
	}
	if reset {
		s.h.Count += b.Count
		s.h.Sum += b.Sum
	} else {
		s.h.Count += b.Count - a.Count
		s.h.Sum += b.Sum - a.Sum
	}
}

// distribution is nil when nothing was observed (or the buckets did not agree).
func (s hists) distribution() *result.Distribution {
	if s.h == nil || s.bad || s.h.Count <= 0 {
		return nil
	}
	return &result.Distribution{Count: round(s.h.Count), Mean: s.h.Sum / s.h.Count,
		P50: Quantile(0.5, s.h), P99: Quantile(0.99, s.h)}
}

// Quantile is the q-quantile of a cumulative histogram, interpolated linearly within its
// bucket as Prometheus's histogram_quantile does: a quantile in the +Inf bucket is the
// highest finite bound; the first bucket starts at 0 (or at its bound, if that is negative).
func Quantile(q float64, h *Hist) float64 {
	if h == nil || len(h.Bounds) == 0 {
		return math.NaN()
	}
	total := h.Counts[len(h.Counts)-1]
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	i := 0
	for i < len(h.Counts)-1 && h.Counts[i] < rank {
		i++
	}
	if math.IsInf(h.Bounds[i], 1) {
		if i == 0 {
			return math.NaN()
		}
		return h.Bounds[i-1]
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = h.Bounds[i-1], h.Counts[i-1]
	} else if h.Bounds[0] < 0 {
		return h.Bounds[0]
	}
	in := h.Counts[i] - below
	if in <= 0 {
		return h.Bounds[i]
	}
	return lo + (h.Bounds[i]-lo)*(rank-below)/in
}
