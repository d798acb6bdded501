package accounting

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// A run's two promises are counted on two clocks. The client's clock is its send times: what
// the client did. Arrival bounds are what a limiter could know: a request reached it somewhere
// between its send and its answer, so an acceptance counts against a window only when it must
// have arrived in it (sent and answered inside it), and a rejection is excused when some order
// of arrival within those bounds explains it. Arrival bounds give the limiter the benefit of
// the doubt on both promises; the client's clock gives it none on either.

// span is a request's send and answer times: it reached the limiter between them.
type span struct{ sent, answered time.Duration }

func bySent(a, b span) int { return cmp.Compare(a.sent, b.sent) }

// busiestArrived is the most acceptances that must have arrived in one window-long interval
// [t, t+window): sent at or after t and answered before t+window. spans is in any order; it is
// sorted by send time. Over the sends as interval starts (an interval can be moved right to
// its first send without losing one), a Fenwick tree over the answers' ranks counts, for each
// start, the later sends answered before its end. sc holds its working memory between calls.
func busiestArrived(spans []span, window time.Duration, sc *arrivalScratch) int {
	if len(spans) <= 1 {
		return len(spans)
	}
	slices.SortFunc(spans, bySent)
	n := len(spans)
	sc.byAnswer, sc.rank, sc.ans, sc.tree = grow(sc.byAnswer, n), grow(sc.rank, n), grow(sc.ans, n), grow(sc.tree, n+1)
	byAnswer, rank, ans, tree := sc.byAnswer, sc.rank, sc.ans, sc.tree
	for i := range byAnswer {
		byAnswer[i] = int32(i)
	}
	slices.SortFunc(byAnswer, func(a, b int32) int { return cmp.Compare(spans[a].answered, spans[b].answered) })
	for r, i := range byAnswer {
		rank[i], ans[r] = int32(r), spans[i].answered
	}
	clear(tree)
	add := func(r int32) {
		for r++; int(r) < len(tree); r += r & -r {
			tree[r]++
		}
	}
	below := func(n int) int32 { // inserted answers among the n smallest ranks
		c := int32(0)
		for ; n > 0; n -= n & -n {
			c += tree[n]
		}
		return c
	}
	best := int32(0)
	for i := n - 1; i >= 0; {
		t := spans[i].sent
		for ; i >= 0 && spans[i].sent == t; i-- { // every send at t starts with the interval
			add(rank[i])
		}
		k, _ := slices.BinarySearch(ans, t+window) // answers before t+window
		best = max(best, below(k))
	}
	return int(best)
}

// arrivalScratch is busiestArrived's working memory, kept between clients.
type arrivalScratch struct {
	byAnswer, rank, tree []int32
	ans                  []time.Duration
}

// grow is s resized to n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// unearnedSent counts the rejections rej for which the client's sends in the window-long
// interval (t−window, t] before the rejection's send t, itself included, number at most
// limit: false rejects on the client's clock. spans are the client's requests sorted by send
// time. For each one arrival bounds excuse (unearned's count is over limit), the least arrival
// skew that excuses it goes into skew: the limit+1−n-th smallest of how much earlier a later
// send (sent while it was in flight) must have arrived than sent, or how much later an
// earlier send (answered after t−window) must have arrived than t−window.
func unearnedSent(spans []span, rej []rejection, window time.Duration, limit int, skew *Latency) int {
	n := 0
	maxTook := time.Duration(0)
	for _, s := range spans {
		maxTook = max(maxTook, s.answered-s.sent)
	}
	after := func(t time.Duration) int { // first span sent after t
		i, _ := slices.BinarySearchFunc(spans, t, func(s span, t time.Duration) int {
			if s.sent <= t {
				return -1
			}
			return 1
		})
		return i
	}
	for _, r := range rej {
		hi, lo := after(r.sent), after(r.sent-window)
		sent := hi - lo
		if sent > limit {
			continue
		}
		n++
		if d, ok := neededSkew(spans, r, window, limit+1-sent, hi, lo, maxTook); ok {
			skew.Record(d)
		}
	}
	return n
}

// neededSkew is the k-th smallest skew among the sends that could have arrived inside the
// rejection's window though sent outside it: later sends, from index hi, sent before its
// answer came back (skew: how much earlier than sent); earlier sends, below index lo,
// answered after its window opened (skew: how much later than sent). It reports false when
// fewer than k could: the arrival bounds do not excuse the rejection.
func neededSkew(spans []span, r rejection, window time.Duration, k, hi, lo int, maxTook time.Duration) (time.Duration, bool) {
	open := r.sent - window
	later := func(i int) (time.Duration, bool) {
		if i < len(spans) && spans[i].sent <= r.answered {
			return spans[i].sent - r.sent, true
		}
		return 0, false
	}
	i, j := hi, lo-1
	var d time.Duration
	for ; k > 0; k-- {
		for j >= 0 && open-spans[j].sent <= maxTook && spans[j].answered <= open {
			j-- // answered before the window opened: it cannot have arrived in it
		}
		ld, lok := later(i)
		ed, eok := time.Duration(0), j >= 0 && open-spans[j].sent <= maxTook
		if eok {
			ed = open - spans[j].sent
		}
		switch {
		case lok && (!eok || ld <= ed):
			d = ld
			i++
		case eok:
			d = ed
			j--
		default:
			return 0, false
		}
	}
	return d, true
}

// Overshoot is the run's worst overshoot on the clock named (result.ClockArrival,
// ClockClient, or the run's exact clock, ClockDecision or ClockBackend; empty is arrival),
// and the client that had it. An exact clock the run does not have reads 0 and no client.
func (r *Report) Overshoot(clock string) (float64, string) {
	switch {
	case clock == result.ClockClient:
		return r.MaxOvershoot, r.MaxOvershootClient
	case result.Exact(clock):
		if clock != r.Exact {
			return 0, ""
		}
		return r.OvershootExact, r.OvershootExactClient
	}
	return r.OvershootArrival, r.OvershootArrivalClient
}

// FalseRejectsOn is the run's false rejects on the clock named, and how many clients had one.
func (r *Report) FalseRejectsOn(clock string) (int, int) {
	switch {
	case clock == result.ClockClient:
		return r.FalseRejectsSent, r.FalseRejectSentClients
	case result.Exact(clock):
		if clock != r.Exact {
			return 0, 0
		}
		return r.FalseRejectsExact, r.FalseRejectExactClients
	}
	return r.FalseRejects, r.FalseRejectClients
}

// Clocks is both promises on every clock the run has, with gate the clock that gates them
// and the arrival bounds' width (the p99 of answer minus send) beside them.
func (r *Report) Clocks(gate string) result.Clocks {
	if gate == "" {
		gate = result.ClockArrival
	}
	c := result.Clocks{
		Gate:               gate,
		OvershootClient:    r.MaxOvershoot,
		OvershootArrival:   r.OvershootArrival,
		FalseRejectsClient: r.FalseRejectsSent, FalseRejectsArrival: r.FalseRejects,
		ExcusedSkew:  r.ExcusedSkew,
		ArrivalWidth: r.Latency.P99,
	}
	if r.Exact != "" {
		c.Exact, c.OvershootExact, c.FalseRejectsExact = r.Exact, r.OvershootExact, r.FalseRejectsExact
		c.ExactTimes, c.ExactMissing, c.ExactOutside, c.ExactOutsideMax = r.ExactTimes, r.ExactMissing, r.ExactOutside, r.ExactOutsideMax
	}
	return c
}

// ParseClock reads a gate clock: auto, decision, backend, arrival or client.
func ParseClock(s string) (string, error) {
	switch s {
	case result.ClockAuto, result.ClockDecision, result.ClockBackend, result.ClockArrival, result.ClockClient:
		return s, nil
	}
	return "", fmt.Errorf("gate clock %q: use %s (the target's exact clock where it gives one, else arrival bounds), %s (the limiter's own decision times), %s (when admissions reached a recording backend), %s (what a limiter could know: arrival bounds) or %s (the client's send times)",
		s, result.ClockAuto, result.ClockDecision, result.ClockBackend, result.ClockArrival, result.ClockClient)
}

// GateClock is the clock a run asked to gate on (asked: auto, an exact clock, arrival or
// client; empty: arrival) made concrete for the exact clock the target declares (declared:
// ClockDecision, ClockBackend or empty) and the one the outcomes carry (r.Exact). auto gates
// on the declared exact clock where the outcomes carry it, and on arrival bounds otherwise,
// why saying what was missing. An exact clock asked for by name is returned as it is: where
// the outcomes lack it, its promises are not measured (CheckOvershoot says so).
func (r *Report) GateClock(asked, declared string) (clock, why string) {
	switch {
	case asked == "":
		return result.ClockArrival, ""
	case asked != result.ClockAuto:
		return asked, ""
	case declared == "":
		return result.ClockArrival, ""
	case r.Exact == declared && r.ExactTimes > 0:
		return declared, ""
	case declared == result.ClockDecision:
		return result.ClockArrival, "gated on arrival bounds: the target names a decision time header, but no answer carried one"
	}
	return result.ClockArrival, "gated on arrival bounds: the target runs behind a recording backend, but no request reached it"
}

// BusiestArrived is the most acceptances that must have arrived in one window-long interval,
// for acceptances sent at sent[i] and answered at answered[i] (any order).
func BusiestArrived(sent, answered []time.Duration, window time.Duration) int {
	spans := make([]span, len(sent))
	for i := range sent {
		spans[i] = span{sent: sent[i], answered: answered[i]}
	}
	return busiestArrived(spans, window, &arrivalScratch{})
}
