package limiters

import (
	"math"
	"time"
)

// ring holds the counts of the most recent slices of one client. Slot i holds slice
// index idx[i]; a slot whose index fell out of the window counts as empty.
type ring struct {
	idx   []int64
	count []int64
}

func newRing(n int) ring {
	r := ring{idx: make([]int64, n), count: make([]int64, n)}
	for i := range r.idx {
		r.idx[i] = math.MinInt64
	}
	return r
}

func (w *ring) slot(d int64) int {
	return int(((d % int64(len(w.idx))) + int64(len(w.idx))) % int64(len(w.idx)))
}

// add adds k to slice d, recycling the slot of an older slice.
func (w *ring) add(d, k int64) {
	s := w.slot(d)
	if w.idx[s] != d {
		if w.idx[s] > d {
			return // older than what the ring holds: already outside the window
		}
		w.idx[s], w.count[s] = d, 0
	}
	w.count[s] += k
}

// total is the sum of the n slices ending at d.
func (w *ring) total(d int64, n int) int64 {
	var sum int64
	first := d - int64(n) + 1
	for i, x := range w.idx {
		if x >= first && x <= d {
			sum += w.count[i]
		}
	}
	return sum
}

// addWindow adds the counts of the len(dst) slices ending at d into dst, oldest first.
func (w *ring) addWindow(dst []int64, d int64) {
	first := d - int64(len(dst)) + 1
	for i, x := range w.idx {
		if x >= first && x <= d {
			dst[x-first] += w.count[i]
		}
	}
}

// reset empties the ring.
func (w *ring) reset() {
	for i := range w.idx {
		w.idx[i], w.count[i] = math.MinInt64, 0
	}
}

// set replaces the ring's contents with the given slices.
func (w *ring) set(counts []SliceCount) {
	w.reset()
	for _, c := range counts {
		w.add(c.Index, c.Count)
	}
}

// appendCounts appends the non-empty slices among the n ending at d, oldest first: a push
// must be in that order, since a store that holds part of it already holds its oldest part.
func (w *ring) appendCounts(dst []SliceCount, d int64, n int) []SliceCount {
	for x := d - int64(n) + 1; x <= d; x++ {
		if s := w.slot(x); w.idx[s] == x && w.count[s] != 0 {
			dst = append(dst, SliceCount{Index: x, Count: w.count[s]})
		}
	}
	return dst
}

// bucket is a token bucket's state: the tokens held at a time.
type bucket struct {
	tokens float64
	at     int64 // Unix nanoseconds
}

// refill brings the bucket to now: it gains Limit/Window tokens a second up to its burst.
// A new bucket (at == 0 and full) starts full. The arithmetic mirrors the document's model
// (tokens + seconds × rate, then the cap) so the figures match to the digit.
func (b *bucket) refill(r *Rule, nowNs int64) {
	if nowNs > b.at {
		elapsed := float64(nowNs-b.at) / float64(time.Second)
		b.tokens = math.Min(float64(r.Burst), b.tokens+elapsed*r.refillPerSecond())
	}
	b.at = nowNs
}

// state is one client's counters under one rule, for whichever algorithm the rule names.
type state struct {
	rule   *Rule
	win    ring
	bucket bucket
	seen   int64 // last decision, Unix nanoseconds, for pruning
}

func newState(r *Rule, nowNs int64) *state {
	s := &state{rule: r, seen: nowNs}
	if r.Algorithm == TokenBucket {
		s.bucket = bucket{tokens: float64(r.Burst), at: nowNs}
	} else {
		s.win = newRing(r.slices())
	}
	return s
}

// take decides one request on this state alone: the single-node algorithm.
func (s *state) take(now time.Time) Decision {
	r := s.rule
	nowNs := now.UnixNano()
	s.seen = nowNs
	if r.Algorithm == TokenBucket {
		s.bucket.refill(r, nowNs)
		allowed := s.bucket.tokens >= 1
		if allowed {
			s.bucket.tokens--
		}
		return bucketDecision(r, s.bucket.tokens, allowed, now)
	}
	d := r.sliceIndex(now)
	var buf [maxStackSlices]int64
	counts := windowBuf(&buf, r.slices())
	s.win.addWindow(counts, d)
	allowed := sum(counts) < r.Limit
	if allowed {
		s.win.add(d, 1)
		counts[len(counts)-1]++
	}
	return windowDecision(r, counts, d, now, allowed)
}

// idle reports whether the state holds nothing that still counts at now.
func (s *state) idle(nowNs int64) bool {
	return nowNs-s.seen > int64(s.rule.Window)
}

func sum(counts []int64) int64 {
	var t int64
	for _, c := range counts {
		t += c
	}
	return t
}
