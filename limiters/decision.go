package limiters

import (
	"context"
	"math"
	"time"
)

// Decision is the answer for one request.
type Decision struct {
	Allowed bool
	// Limit is the rule's limit (the policy quota).
	Limit int64
	// Remaining is how many more requests would be allowed now.
	Remaining int64
	// ResetAfter is when the allowance next recovers fully (windows: when the oldest
	// counted slice leaves the window; bucket: when it is full again).
	ResetAfter time.Duration
	// RetryAfter is, for a rejected request, the earliest time a retry could pass.
	RetryAfter time.Duration
	// At is the time the request was decided on the limiter's clock (zero where the limiter
	// does not say): the instant its count was taken.
	At time.Time
}

// Limiter decides requests. Implementations are safe for concurrent use.
type Limiter interface {
	// Allow decides one request of client under rule at time now. An error means the
	// decision could not be made (the store failed); the caller chooses to fail open.
	Allow(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error)
}

// windowDecision builds the decision from the counts of the window's slices after the
// request was counted (or not): counts[k] is slice d-n+1+k, oldest first, d the current one.
func windowDecision(r *Rule, counts []int64, d int64, now time.Time, allowed bool) Decision {
	n := int64(len(counts))
	total := sum(counts)
	dec := Decision{Allowed: allowed, Limit: r.Limit, Remaining: max(r.Limit-total, 0), At: now}
	sl := int64(r.sliceLen())
	nowNs := now.UnixNano()
	// Walk slices oldest first: slice j leaves the window at (j+n)·sliceLen.
	var expired int64
	retrySet := false
	for k, c := range counts {
		if c == 0 {
			continue
		}
		j := d - n + 1 + int64(k)
		leave := time.Duration((j+n)*sl - nowNs)
		if dec.ResetAfter == 0 {
			dec.ResetAfter = leave
		}
		expired += c
		if !allowed && !retrySet && total-expired < r.Limit {
			dec.RetryAfter, retrySet = leave, true
		}
	}
	if dec.ResetAfter == 0 {
		dec.ResetAfter = time.Duration((d+1)*sl - nowNs)
	}
	if !allowed && !retrySet {
		dec.RetryAfter = dec.ResetAfter
	}
	return dec
}

// windowBuf returns room for n slice counts, on the caller's stack when n is small.
func windowBuf(buf *[maxStackSlices]int64, n int) []int64 {
	if n <= maxStackSlices {
		clear(buf[:n])
		return buf[:n]
	}
	return make([]int64, n)
}

// maxStackSlices is the most slices a decision counts without allocating.
const maxStackSlices = 64

// bucketDecision builds the decision from the tokens left after the request, decided at now.
func bucketDecision(r *Rule, tokens float64, allowed bool, now time.Time) Decision {
	rate := r.refillPerSecond()
	dec := Decision{Allowed: allowed, Limit: r.Limit, Remaining: max(int64(math.Floor(tokens)), 0), At: now}
	dec.ResetAfter = secondsToDuration((float64(r.Burst) - tokens) / rate)
	if !allowed {
		dec.RetryAfter = secondsToDuration((1 - tokens) / rate)
	}
	return dec
}

func secondsToDuration(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(s * float64(time.Second)))
}
