package bench

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/edgeproof/rlharness/harness/result"
)

// Sender runs one fixed-rate step against a fleet and says whether it was sustained.
type Sender func(ctx context.Context, rate float64) (result.Step, error)

// Search configures a ceiling search: a geometric step-up from Start by Factor until a step
// is not sustained, then Refine geometric bisections between the last sustained rate and
// the first that was not. A first step that fails steps down by Factor instead, to Min.
type Search struct {
	Start, Min, Max float64 // requests per second
	Factor          float64 // > 1
	Refine          int     // bisections after the first failure
	MaxSteps        int     // bound on steps, whatever happens
	// Confirm sends a step that was not sustained once more, and only a second failure
	// counts: on a shared machine one neighbour's burst can put a step behind schedule.
	Confirm bool
}

// DefaultSearch fits a 2-core machine: 1,000 req/s up by 1.5× (resolution 1.5^(1/4) ≈ 11 %
// after two bisections), failures confirmed, at most 12 steps.
func DefaultSearch() Search {
	return Search{Start: 1000, Min: 100, Max: 64_000, Factor: 1.5, Refine: 2, MaxSteps: 12, Confirm: true}
}

func (s Search) check() error {
	switch {
	case !(s.Start > 0) || !(s.Min > 0) || s.Min > s.Start || s.Max < s.Start:
		return fmt.Errorf("ceiling search: want 0 < min <= start <= max (got %v, %v, %v)", s.Min, s.Start, s.Max)
	case !(s.Factor > 1):
		return fmt.Errorf("ceiling search: factor must be > 1 (got %v)", s.Factor)
	case s.Refine < 0 || s.MaxSteps < 1:
		return fmt.Errorf("ceiling search: refine must be >= 0 and max steps >= 1 (got %d, %d)", s.Refine, s.MaxSteps)
	}
	return nil
}

// Ceiling is a search's outcome: the highest rate sustained (0 when none was), whether the
// search stopped at Max while still sustaining, and every step in order.
type Ceiling struct {
	Rate   float64
	Capped bool
	Steps  []result.Step
}

// Run searches the ceiling with send. An error from send ends the search with it.
func (s Search) Run(ctx context.Context, send Sender) (Ceiling, error) {
	if err := s.check(); err != nil {
		return Ceiling{}, err
	}
	var c Ceiling
	lo, hi := 0.0, math.Inf(1) // highest sustained, lowest not sustained
	refined := 0
	next := s.Start
	for len(c.Steps) < s.MaxSteps {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		st, err := send(ctx, next)
		if err != nil {
			return c, fmt.Errorf("step at %s req/s: %w", result.Rate(next), err)
		}
		c.Steps = append(c.Steps, st)
		if !st.Sustained && s.Confirm && len(c.Steps) < s.MaxSteps {
			if st, err = send(ctx, next); err != nil {
				return c, fmt.Errorf("step at %s req/s, again: %w", result.Rate(next), err)
			}
			c.Steps = append(c.Steps, st)
		}
		if st.Sustained {
			lo = next
		} else {
			hi = next
		}
		switch {
		case math.IsInf(hi, 1): // still climbing
			if lo >= s.Max {
				c.Rate, c.Capped = lo, true
				return c, nil
			}
			next = min(lo*s.Factor, s.Max)
		case lo == 0: // nothing sustained yet: step down
			next = hi / s.Factor
			if next < s.Min {
				return c, nil
			}
		default:
			if refined == s.Refine {
				c.Rate = lo
				return c, nil
			}
			refined++
			next = math.Sqrt(lo * hi)
		}
	}
	c.Rate = lo
	return c, nil
}

// Interleave searches several ceilings at once, one step at a time in turn, so every fleet's
// steps meet the same neighbours on a shared machine: a burst of someone else's work lands on
// one step of one fleet, not on all of one fleet's search. Searches that finish drop out of
// the turn. The result is in the order of sends.
func (s Search) Interleave(ctx context.Context, sends ...Sender) ([]Ceiling, []error) {
	t := &turns{n: len(sends), done: make([]bool, len(sends))}
	t.cond = sync.NewCond(&t.mu)
	out := make([]Ceiling, len(sends))
	errs := make([]error, len(sends))
	var wg sync.WaitGroup
	for i, send := range sends {
		wg.Go(func() {
			defer t.finish(i)
			out[i], errs[i] = s.Run(ctx, func(ctx context.Context, rate float64) (result.Step, error) {
				t.wait(i)
				defer t.next(i)
				return send(ctx, rate)
			})
		})
	}
	wg.Wait()
	return out, errs
}

// turns lets n searches take steps in a round: i waits until it is its turn, and a search
// that finished is skipped.
type turns struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
	turn int
	done []bool
}

func (t *turns) wait(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.turn != i {
		t.cond.Wait()
	}
}

// next passes the turn to the next search that has not finished.
func (t *turns) next(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.advance(i)
}

func (t *turns) advance(from int) {
	for k := 1; k <= t.n; k++ {
		j := (from + k) % t.n
		if !t.done[j] {
			t.turn = j
			break
		}
	}
	t.cond.Broadcast()
}

func (t *turns) finish(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done[i] = true
	if t.turn == i {
		t.advance(i)
	}
}
