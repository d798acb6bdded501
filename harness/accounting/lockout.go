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
// excluded (a fault's window) are left out. For each, admitted is the acceptances sent in it,
// by send time. sent and accepted are the client's send times and its accepted requests' send
// times, each sorted. It returns how many windows were steady and the one admitted least:
// its start and its acceptances.
func steadyWindows(sent, accepted []time.Duration, window time.Duration, limit int, excluded func(from, to time.Duration) bool) (n int, worstAt time.Duration, worst int) {
	if window <= 0 || len(sent) <= limit {
		return 0, 0, 0
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
		steady := j-i > limit && seen == 1<<tenths-1
		if steady && prevSteady && prevK == k-1 && !excluded(start, end) {
			lo, _ := slices.BinarySearch(accepted, start)
			hi, _ := slices.BinarySearch(accepted, end)
			if n++; n == 1 || hi-lo < worst {
				worstAt, worst = start, hi-lo
			}
		}
		prevK, prevSteady, i = k, steady, j
	}
	return n, worstAt, worst
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
// which they sent steadily over it (ClientReport.SteadyWindows), and names the one admitted
// the least share; steady says whether any client sent steadily over its limit at all.
func (r *Report) LockedOut(minShare float64) (n int, worst result.ClientReport, steady bool) {
	for _, c := range r.Clients {
		if c.SteadyWindows == 0 {
			continue
		}
		if !steady || c.SteadyShare < worst.SteadyShare {
			worst = c
		}
		steady = true
		if c.SteadyShare < minShare {
			n++
		}
	}
	return n, worst, steady
}

// CheckLockout is the no lock-out promise: a client that sends steadily over its limit is
// admitted at least minShare of its limit in every window-aligned window in which it does,
// fault windows left out (see ClientReport.SteadyWindows). Both are counted by send time.
// With no such window in the run the check is not measured, and does not fail the run.
func CheckLockout(r *Report, minShare float64) result.Check {
	if minShare <= 0 {
		minShare = DefaultMinShare
	}
	n, w, steady := r.LockedOut(minShare)
	if !steady {
		c := NewCheck("locked-out clients", 0, OpEqual, 0,
			"not measured: no client sent steadily over its limit (more than its limit in a window and in the one before, at least one request in every tenth of each) outside fault windows")
		c.NotMeasured = true
		return c
	}
	steadyClients := 0
	for _, c := range r.Clients {
		if c.SteadyWindows > 0 {
			steadyClients++
		}
	}
	detail := fmt.Sprintf("%d of %d clients sending steadily over their limit admitted less than %gx it in a window; worst: client %s, %d admitted in the %v window from %v, limit %d (x%.3f; counted by send time)",
		n, steadyClients, minShare, w.ID, w.SteadyAdmitted, w.Window, w.SteadyAt, w.Limit, w.SteadyShare)
	return NewCheck("locked-out clients", float64(n), OpEqual, 0, detail)
}
