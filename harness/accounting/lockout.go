package accounting

import (
	"fmt"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// DefaultMinShare is the least share of its limit a client sending steadily over its limit
// must be admitted in a window: a limiter that locks such a client out (one that counts the
// requests it denied, so that the client's rate never falls back under the limit) breaks the
// client's promise as surely as one that lets it through.
const DefaultMinShare = 0.9

// tenths is how many parts of a window a steady sender sends in, each at least once.
const tenths = 10

// steadyWindows are the window-aligned windows [kW, (k+1)W) of the run in which a client sent
// steadily over its limit: more than limit requests, at least one in every tenth of the window,
// and the same in the window before (so that what the limiter counted before the window was
// steady sending too, not a burst it still holds against the client). Windows that overlap
// excluded (a fault's window) are left out. For each, the acceptances admitted in it are
// counted on both clocks: by send time, and on arrival bounds (sent before the window's end
// and answered at or after its start: the most that may have arrived in it). sent, accepted
// and answered are the client's send times, its accepted requests' send times and their
// answer times, each sorted. It returns how many windows were steady and, per clock, the one
// admitted least.
func steadyWindows(sent, accepted, answered []time.Duration, window time.Duration, limit int, excluded func(from, to time.Duration) bool) steady {
	var st steady
	if window <= 0 || len(sent) <= limit {
		return st
	}
	prevK, prevSteady := int64(0), false
	for i := 0; i < len(sent); {
		k := floorDiv(sent[i], window)
		start := time.Duration(k) * window
		end := start + window
		var seen uint32
		j := i
		for ; j < len(sent) && sent[j] < end; j++ {
			seen |= 1 << ((sent[j] - start) * tenths / window)
		}
		isSteady := j-i > limit && seen == 1<<tenths-1
		if isSteady && prevSteady && prevK == k-1 && !excluded(start, end) {
			lo, _ := slices.BinarySearch(accepted, start)
			hi, _ := slices.BinarySearch(accepted, end)
			// An acceptance answered before the window's start was sent before it too, so
			// the ones that may have arrived in it are those sent before its end less those.
			gone, _ := slices.BinarySearch(answered, start)
			st.n++
			st.client.least(st.n, start, hi-lo)
			st.arrival.least(st.n, start, hi-gone)
		}
		prevK, prevSteady, i = k, isSteady, j
	}
	return st
}

// steady is what steadyWindows found: how many steady windows, and the one admitted least on
// each clock.
type steady struct {
	n               int
	client, arrival leastWindow
}

// leastWindow is the steady window admitted least so far: its start and its acceptances.
type leastWindow struct {
	at       time.Duration
	admitted int
}

// least keeps the window from at with admitted acceptances when it is the first (n == 1) or
// admitted fewer than the one kept.
func (w *leastWindow) least(n int, at time.Duration, admitted int) {
	if n == 1 || admitted < w.admitted {
		w.at, w.admitted = at, admitted
	}
}

// floorDiv is ⌊t/w⌋ for w > 0, a send a hair before the run's start included.
func floorDiv(t, w time.Duration) int64 {
	k := int64(t / w)
	if t < 0 && t%w != 0 {
		k--
	}
	return k
}

// overlapsFault reports whether [from, to) overlaps a fault window or the killed replica's.
func (a *Accumulator) overlapsFault(from, to time.Duration) bool {
	overlaps := func(iv result.Interval) bool { return iv.From < to && iv.To > from }
	if a.dead != nil && overlaps(a.dead.during) {
		return true
	}
	return slices.ContainsFunc(a.faults, overlaps)
}

// LockedOut counts the clients admitted less than minShare of their limit in some window in
// which they sent steadily over it (ClientReport.SteadyWindows), on the clock named
// (result.ClockArrival or result.ClockClient), and names the one admitted the least share;
// steady says whether any client sent steadily over its limit at all.
func (r *Report) LockedOut(minShare float64, clock string) (n int, worst result.ClientReport, steady bool) {
	for _, c := range r.Clients {
		if c.SteadyWindows == 0 {
			continue
		}
		if !steady || steadyShare(c, clock) < steadyShare(worst, clock) {
			worst = c
		}
		steady = true
		if steadyShare(c, clock) < minShare {
			n++
		}
	}
	return n, worst, steady
}

// steadyShare is the least share of its limit client c was admitted in a steady window, on
// the clock named.
func steadyShare(c result.ClientReport, clock string) float64 {
	if clock == result.ClockClient {
		return c.SteadyShare
	}
	return c.SteadyShareArrival
}

// CheckLockout is the no lock-out promise: a client that sends steadily over its limit is
// admitted at least minShare of its limit in every window-aligned window in which it does,
// fault windows left out (see ClientReport.SteadyWindows), gated on the clock named (empty:
// arrival bounds, what a limiter could know) with the other shown beside it. With no such
// window in the run the check is not measured, and does not fail the run.
func CheckLockout(r *Report, minShare float64, clock string) result.Check {
	if minShare <= 0 {
		minShare = DefaultMinShare
	}
	if clock != result.ClockClient {
		clock = result.ClockArrival
	}
	n, w, steady := r.LockedOut(minShare, clock)
	if !steady {
		return NotMeasuredCheck("locked-out clients", OpEqual, 0,
			"no client sent steadily over its limit (more than its limit in a window and in the one before, at least one request in every tenth of each) outside fault windows")
	}
	steadyClients := 0
	for _, c := range r.Clients {
		if c.SteadyWindows > 0 {
			steadyClients++
		}
	}
	other := result.OtherClock(clock)
	on := func(c result.ClientReport, clock string) string {
		at, admitted := c.SteadyAtArrival, c.SteadyAdmittedArrival
		if clock == result.ClockClient {
			at, admitted = c.SteadyAt, c.SteadyAdmitted
		}
		return fmt.Sprintf("%d admitted in the %v window from %v, limit %d (x%.3f; %s)", admitted, c.Window, at, c.Limit, steadyShare(c, clock), countedOn(clock))
	}
	nOther, wOther, _ := r.LockedOut(minShare, other)
	detail := fmt.Sprintf("%d of %d clients sending steadily over their limit admitted less than %gx it in a window; worst: client %s, %s; %s: %d locked out, worst client %s, %s",
		n, steadyClients, minShare, w.ID, on(w, clock), countedOn(other), nOther, wOther.ID, on(wOther, other))
	return NewCheck("locked-out clients", float64(n), OpEqual, 0, detail)
}

// countedOn is how the lock-out detail says which clock a count is on.
func countedOn(clock string) string {
	if clock == result.ClockClient {
		return "by send time"
	}
	return "on arrival bounds"
}
