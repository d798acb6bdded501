package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// Term is one regressor of a fit: what a part's busy cores grow with.
type Term int

// The terms a part's busy cores are fitted over.
const (
	// Fixed is what the part keeps busy whatever the rate: a process's collector, timers
	// and sync, Redis's cron and each replica's epoch reads.
	Fixed Term = iota
	// PerRequest grows with the requests the part is sent (core-seconds a request).
	PerRequest
	// PerPastBudget grows with the requests a node decides with the store: those past the
	// node's budget of their client in a window (core-seconds a request past a budget).
	PerPastBudget
	// PerRequestBeside grows with the requests the part is sent and with the busy cores of
	// the processes beside it at one node's share (the replica and Redis, as their fits give
	// them at the same load): core-seconds a request for each busy core beside it. It is the
	// generator's: in a slice run it shares the machine's cores with the replica and Redis,
	// and each request cost it more where they kept more of them busy.
	PerRequestBeside
)

func (t Term) String() string {
	switch t {
	case Fixed:
		return "fixed"
	case PerRequest:
		return "a request"
	case PerPastBudget:
		return "a request past a budget"
	case PerRequestBeside:
		return "a request for each busy core beside it"
	}
	return fmt.Sprintf("term %d", int(t))
}

// Load is what a node is sent, in the terms a fit uses.
type Load struct {
	Rate float64 // req/s
	// Past is the share of the requests past their client's budget at the node.
	Past float64
	// Beside is the busy cores of the node's replica and Redis at this load, as their fits
	// give them: what shared the generator's machine with it at one node's share.
	Beside float64
}

func (l Load) value(t Term) float64 {
	switch t {
	case PerRequest:
		return l.Rate
	case PerPastBudget:
		return l.Rate * l.Past
	case PerRequestBeside:
		return l.Rate * l.Beside
	}
	return 1
}

// Fit is a part's busy cores as a sum of terms, fitted by least squares to the busy cores
// measured at several loads.
type Fit struct {
	Terms []Term
	Coef  []float64 // cores for Fixed; core-seconds a request for the others
	// Points are the runs fitted to; Worst is the largest |fitted − measured| / measured
	// over them.
	Points int
	Worst  float64
}

// At is the busy cores the fit gives at l, never below 0.
func (f Fit) At(l Load) float64 {
	var y float64
	for i, t := range f.Terms {
		y += f.Coef[i] * l.value(t)
	}
	return math.Max(0, y)
}

// Coefficient is the fit's coefficient of t, 0 when it has no such term.
func (f Fit) Coefficient(t Term) float64 {
	for i, u := range f.Terms {
		if u == t {
			return f.Coef[i]
		}
	}
	return 0
}

// String says the fit in units a reader sizes with: cores fixed, µs a request.
func (f Fit) String() string {
	var parts []string
	for i, t := range f.Terms {
		if t == Fixed {
			parts = append(parts, fmt.Sprintf("%.4f cores fixed", f.Coef[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%.2f us %s", f.Coef[i]*1e6, t))
		}
	}
	return strings.Join(parts, " + ")
}

// minSpan is how many times its smallest value a term's load must reach over the runs
// for a fit with a fixed part to tell the two apart: the store calls a second of runs from
// 200,000 clients at a node are the probes' at every rate, a fixed part of Redis's work.
const minSpan = 1.5

// fit fits cores to loads over terms by least squares on the relative error, each run's
// |fitted − measured| / measured weighing alike: a plan is judged by how far off it is in
// per cent, and a run at a low rate is as much evidence as one at a high rate. Beside a
// fixed part, a term whose load the runs span less than minSpan times is left out (it is
// the fixed part; where that leaves the fixed part alone, the fixed part goes instead). A term whose coefficient comes out negative (a cost that falls as its
// load grows: noise between runs, not a cost) is left out and the rest fitted again; where
// the runs are fewer than the terms, or cannot tell them apart, a cost beside the other
// parts' cores is left out first, then the fixed part, then the last term.
func fit(loads []Load, cores []float64, terms []Term) (Fit, error) {
	if len(loads) == 0 {
		return Fit{}, fmt.Errorf("no run to fit to")
	}
	terms = slices.Clone(terms)
	if slices.Contains(terms, Fixed) {
		told := slices.DeleteFunc(slices.Clone(terms), func(t Term) bool { return t != Fixed && span(loads, t) < minSpan })
		if len(told) > 1 {
			terms = told
		} else {
			// Nothing but the fixed part is told apart (one run, one rate): a cost a load, as
			// the runs measured it, says more than a fixed part that does not grow.
			terms = slices.DeleteFunc(terms, func(t Term) bool { return t == Fixed })
		}
	}
	for len(terms) > 0 {
		coef, ok := []float64(nil), len(terms) <= len(loads)
		if ok {
			coef, ok = leastSquares(loads, cores, terms)
		}
		drop := -1
		if !ok {
			// Too few runs, or runs that cannot tell the terms apart (one rate): a cost beside
			// the other parts' cores goes first (it refines a cost a request, which two runs
			// cannot tell it from), then the fixed part, so that one run gives its cost a
			// request, as it measured.
			drop = len(terms) - 1
			if i := slices.Index(terms, PerRequestBeside); i >= 0 && len(terms) > 1 {
				drop = i
			} else if i := slices.Index(terms, Fixed); i >= 0 && len(terms) > 1 {
				drop = i
			}
		} else {
			for i, c := range coef {
				if c < 0 && terms[i] != Fixed {
					drop = i
					break
				}
			}
		}
		if drop < 0 {
			f := Fit{Terms: terms, Coef: coef, Points: len(loads)}
			for i, l := range loads {
				if cores[i] > 0 {
					f.Worst = math.Max(f.Worst, math.Abs(f.At(l)-cores[i])/cores[i])
				}
			}
			return f, nil
		}
		terms = append(terms[:drop:drop], terms[drop+1:]...)
	}
	return Fit{}, fmt.Errorf("no term fits the %d runs", len(loads))
}

// span is the largest of t's loads over the runs over the smallest, +Inf when one is 0.
func span(loads []Load, t Term) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, l := range loads {
		v := l.value(t)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo <= 0 {
		return math.Inf(1)
	}
	return hi / lo
}

// leastSquares solves the normal equations of 1 ≈ Σ coef·term / cores over loads (the
// relative error; a run that measured nothing weighs as if it measured 1), the columns
// scaled to their largest value so that a rate in thousands and a fixed 1 weigh alike;
// false when the columns are not independent.
func leastSquares(loads []Load, cores []float64, terms []Term) ([]float64, bool) {
	n := len(terms)
	scale := make([]float64, n)
	for j, t := range terms {
		for _, l := range loads {
			scale[j] = math.Max(scale[j], math.Abs(l.value(t)))
		}
		if scale[j] == 0 {
			return nil, false
		}
	}
	// a = XᵀX, b = Xᵀy on scaled columns, each row over its measure, solved by Gaussian
	// elimination with pivoting.
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for k, l := range loads {
		w := 1.0
		if cores[k] > 0 {
			w = 1 / cores[k]
		}
		for i, ti := range terms {
			xi := w * l.value(ti) / scale[i]
			for j, tj := range terms {
				a[i][j] += xi * w * l.value(tj) / scale[j]
			}
			a[i][n] += xi * w * cores[k]
		}
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-9*float64(len(loads)) {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	coef := make([]float64, n)
	for i := range coef {
		coef[i] = a[i][n] / a[i][i] / scale[i]
	}
	return coef, true
}

// PastBudget is the share of the slice's requests that reach the node past their client's
// budget (limiters.BoundsFor) and within its limit: those after the Budget-th of the
// client's admitted requests within one window before them. The bounded design decides each
// of them with one store call; the rest the node decides alone, or refuses on its view of a
// client at its limit.
func PastBudget(s schedule.Slice) (float64, error) {
	sched, err := schedule.BuildSlice(s, schedule.DefaultClasses()[0])
	if err != nil {
		return 0, err
	}
	rule := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow, Limit: limiters.DefaultLimit, Window: s.Window(), Slices: limiters.DefaultSlices}
	return pastBudget(sched, s.Window(), int(limiters.BoundsFor(&rule, s.Nodes).Budget)), nil
}

// pastBudget is the share of sched's requests (in time order) that come after budget of
// their client's admitted requests within win before them and are admitted: a request at
// its client's limit is refused on the node's view of the client, without a store call.
func pastBudget(sched schedule.Schedule, win time.Duration, budget int) float64 {
	if len(sched.Requests) == 0 {
		return 0
	}
	admitted := make([][]int, len(sched.Clients))
	past := 0
	for i, r := range sched.Requests {
		q := admitted[r.Client]
		for len(q) > 0 && sched.Requests[q[0]].At <= r.At-win {
			q = q[1:]
		}
		switch {
		case len(q) >= sched.Clients[r.Client].Limit:
			continue
		case len(q) >= budget:
			past++
		}
		admitted[r.Client] = append(q, i)
	}
	return float64(past) / float64(len(sched.Requests))
}
