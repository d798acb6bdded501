package schedule

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// Pattern names, as they appear in Client.Pattern.
const (
	PatternUniform2x    = "uniform2x"
	PatternBoundary     = "boundary-burst"
	PatternIntermittent = "intermittent"
	PatternSync90       = "sync90"
	PatternBackground   = "background"
)

// Params are a client's declared limit and the time scale a run uses. The
// scale multiplies every duration of a pattern, so the shape of the traffic
// relative to the window is that of the document while the run is shorter:
// Scale 0.1 turns the 60 s window into 6 s and every rate into ten times the
// document's. The limit, a count, is not scaled.
type Params struct {
	Limit  int           // requests per window; HS3 600
	Window time.Duration // window before scaling; HS3 60 s
	Scale  float64       // time scale F; 1 is the document's own time
}

// DefaultParams are the document's figures at its own time scale.
func DefaultParams() Params {
	return Params{Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Scale: 1}
}

// ScaledWindow is the window a run uses: Window × Scale, to the nanosecond.
func (p Params) ScaledWindow() time.Duration { return scale(p.Window, p.Scale) }

func (p Params) check() error {
	if p.Limit <= 0 {
		return fmt.Errorf("limit must be > 0 (got %d)", p.Limit)
	}
	if p.Window <= 0 {
		return fmt.Errorf("window must be > 0 (got %v)", p.Window)
	}
	if err := checkScale(p.Scale); err != nil {
		return err
	}
	if p.ScaledWindow() < limiters.DefaultSlices {
		return fmt.Errorf("window %v × scale %v is shorter than %d ns; use a larger scale", p.Window, p.Scale, limiters.DefaultSlices)
	}
	return nil
}

// probe is a single-client schedule of the given offsets.
func (p Params) probe(pattern string, d time.Duration, at []time.Duration) Schedule {
	s := Schedule{
		Clients:  []Client{{ID: "probe-" + pattern, Limit: p.Limit, Window: p.ScaledWindow(), Pattern: pattern, Probe: true}},
		Requests: make([]Request, len(at)),
		Duration: d,
	}
	for i, t := range at {
		s.Requests[i] = Request{At: t}
	}
	return s
}

// spread places n offsets evenly in [from, from+span), the i-th at
// from + ⌊i·span/n⌋ as pencere.mjs does in milliseconds; here in nanoseconds,
// so that at Scale 1 the offsets truncated to milliseconds are the model's.
func spread(at []time.Duration, from, span time.Duration, n int) []time.Duration {
	for i := range n {
		at = append(at, from+mulDiv(span, int64(i), int64(n)))
	}
	return at
}

// mulDiv is ⌊d·a/b⌋ for d ≥ 0 and 0 ≤ a ≤ b, exact in 128 bits: d·a alone
// can exceed 2⁶³ ns for millions of requests over minutes.
func mulDiv(d time.Duration, a, b int64) time.Duration {
	hi, lo := bits.Mul64(uint64(d), uint64(a))
	q, _ := bits.Div64(hi, lo, uint64(b))
	return time.Duration(q)
}

// Uniform2x is a client sending at twice its limit, 2L/W per second, evenly
// spaced over three windows (pencere.mjs "duzgun 2x": 3600 requests, one every
// 50 ms, at the document's scale).
func Uniform2x(p Params) (Schedule, error) {
	if err := p.check(); err != nil {
		return Schedule{}, err
	}
	w := p.ScaledWindow()
	n := 2 * p.Limit * ModelWindows
	at := spread(make([]time.Duration, 0, n), 0, ModelWindows*w, n)
	return p.probe(PatternUniform2x, ModelWindows*w, at), nil
}

// BoundaryBurst is a client sending its whole limit in the slice before a
// window edge and again in the slice after it, at the edges W and 2W
// (pencere.mjs "sinirda yigin": 2400 requests). A fixed window lets twice
// the limit through in one window-long interval.
func BoundaryBurst(p Params) (Schedule, error) {
	if err := p.check(); err != nil {
		return Schedule{}, err
	}
	w := p.ScaledWindow()
	slice := w / limiters.DefaultSlices
	at := make([]time.Duration, 0, 4*p.Limit)
	for _, edge := range []time.Duration{w, 2 * w} {
		at = spread(at, edge-slice, slice, p.Limit)
		at = spread(at, edge, slice, p.Limit)
	}
	return p.probe(PatternBoundary, ModelWindows*w, at), nil
}

// IntermittentAtLimit is a client sending exactly its limit in the first
// slice of each of three windows and nothing else (pencere.mjs "aralikli tam
// sinir": 1800 requests). It never exceeds its limit, so it must never be
// rejected; a token bucket rejects most of it.
func IntermittentAtLimit(p Params) (Schedule, error) {
	if err := p.check(); err != nil {
		return Schedule{}, err
	}
	w := p.ScaledWindow()
	at := make([]time.Duration, 0, ModelWindows*p.Limit)
	for k := range ModelWindows {
		at = spread(at, time.Duration(k)*w, w/limiters.DefaultSlices, p.Limit)
	}
	return p.probe(PatternIntermittent, ModelWindows*w, at), nil
}

// Sync90 is the delayed-sync stress client: SyncStressFactor times the limit
// rate, evenly spaced over one window (dagitik.mjs's 90/s for 60 s, 5400
// requests). Delayed sync lets a little more than the limit through; how much
// depends on the sync interval.
func Sync90(p Params) (Schedule, error) {
	if err := p.check(); err != nil {
		return Schedule{}, err
	}
	w := p.ScaledWindow()
	n := SyncStressFactor * p.Limit
	return p.probe(PatternSync90, w, spread(make([]time.Duration, 0, n), 0, w, n)), nil
}

// Probes is the four probe clients merged into one schedule, in the order
// uniform 2×, boundary burst, intermittent, sync 90.
func Probes(p Params) (Schedule, error) {
	var parts []Schedule
	for _, f := range []func(Params) (Schedule, error){Uniform2x, BoundaryBurst, IntermittentAtLimit, Sync90} {
		s, err := f(p)
		if err != nil {
			return Schedule{}, err
		}
		parts = append(parts, s)
	}
	return Merge(parts...), nil
}
