// Package limiters decides whether one request of one client may pass.
//
// Every decision takes the current time as an argument, in the manner of
// golang.org/x/time/rate, so the same code runs under a model clock (the documents'
// deterministic models) and under the wall clock (the replica). Three algorithms
// (fixed window, sliding window of N slices, token bucket) run in three distributed
// modes (central counter, split quota, delayed sync) over a Store, which is either
// in memory or Redis.
package limiters

import (
	"errors"
	"fmt"
	"time"
)

// Algorithm names a way of counting a client's requests against its limit.
type Algorithm string

// The algorithms of the rate-limiter document.
const (
	FixedWindow   Algorithm = "fixed_window"
	SlidingWindow Algorithm = "sliding_window"
	TokenBucket   Algorithm = "token_bucket"
)

// The document's figures that serve as defaults.
const (
	DefaultLimit        = 600                    // HS3: requests per window
	DefaultWindow       = 60 * time.Second       // HS3
	DefaultSlices       = 12                     // HS7: 12 slices of 5 s
	DefaultBurst        = 60                     // HS8: token bucket capacity
	DefaultNodes        = 8                      // HS4
	DefaultSyncInterval = 200 * time.Millisecond // HS5
)

// DefaultStoreTimeout is how long a replica's decision or sync waits on the counter store
// before it gives up and decides alone (fail-open): not a figure of the document, but the
// replica's default and the fleet's, spelled once.
const DefaultStoreTimeout = 50 * time.Millisecond

// DefaultStoreWait is how long a bounded node's decision past its budget waits for the
// store's answer (the replica's --store-wait): longer than the store timeout that syncs and
// other modes' calls run under, so that a store slowed by load slows the answers instead of
// handing every node a share of the limit to decide alone.
const DefaultStoreWait = 250 * time.Millisecond

// StoreFollowCeiling is how many times the longer of its store timeout and store wait a
// bounded node's timeout and wait may grow to as they follow the measured round trip to its
// store (a store 80 ms away keeps answering syncs that a 50 ms timeout would all give up
// on): 4, a second with the defaults.
const StoreFollowCeiling = 4

// Rule is a client's declared limit and the algorithm that enforces it.
type Rule struct {
	// Name identifies the rule; it is part of the store key, so two rules never share counters.
	Name      string
	Algorithm Algorithm
	// Limit is the number of requests allowed in any Window.
	Limit  int64
	Window time.Duration
	// Slices divides the window of a sliding window (HS7). Ignored by other algorithms.
	Slices int
	// Burst is a token bucket's capacity (HS8); it refills at Limit per Window.
	Burst int64
}

// Validate reports the first thing wrong with the rule, worded for the person who wrote it.
func (r Rule) Validate() error {
	switch r.Algorithm {
	case FixedWindow, SlidingWindow, TokenBucket:
	case "":
		return errors.New("algorithm is missing (want fixed_window, sliding_window or token_bucket)")
	default:
		return fmt.Errorf("algorithm %q is unknown (want fixed_window, sliding_window or token_bucket)", r.Algorithm)
	}
	if r.Limit <= 0 {
		return fmt.Errorf("limit must be > 0 (got %d)", r.Limit)
	}
	if r.Window <= 0 {
		return fmt.Errorf("window must be > 0 (got %s)", r.Window)
	}
	if r.Algorithm == SlidingWindow {
		if r.Slices < 1 {
			return fmt.Errorf("slices must be >= 1 for a sliding window (got %d)", r.Slices)
		}
		if r.Window%time.Duration(r.Slices) != 0 {
			return fmt.Errorf("window %s does not divide into %d equal slices", r.Window, r.Slices)
		}
	}
	if r.Algorithm == TokenBucket && r.Burst < 1 {
		return fmt.Errorf("burst must be >= 1 for a token bucket (got %d)", r.Burst)
	}
	return nil
}

// slices is the number of counters a window algorithm keeps per client.
func (r *Rule) slices() int {
	if r.Algorithm == SlidingWindow {
		return r.Slices
	}
	return 1
}

// sliceLen is the length of one counter's time span.
func (r *Rule) sliceLen() time.Duration { return r.Window / time.Duration(r.slices()) }

// sliceIndex is the number of the slice that holds now; slices are aligned to the Unix epoch,
// so every replica numbers them alike.
func (r *Rule) sliceIndex(now time.Time) int64 {
	return floorDiv(now.UnixNano(), int64(r.sliceLen()))
}

// refillPerSecond is a token bucket's refill rate: Limit per Window.
func (r *Rule) refillPerSecond() float64 { return float64(r.Limit) / r.Window.Seconds() }

// Share returns the rule one of n nodes enforces alone under split quota: 1/n of the limit
// and of the burst, rounded down.
func (r Rule) Share(n int) Rule {
	r.Limit /= int64(n)
	r.Burst /= int64(n)
	if r.Burst < 1 && r.Algorithm == TokenBucket {
		r.Burst = 1
	}
	return r
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Counters is the number of counter records the algorithm keeps per client: one per slice
// for a window, one for a bucket (the document's sizing, HS6–HS8).
func (r Rule) Counters() int {
	if r.Algorithm == TokenBucket {
		return 1
	}
	return r.slices()
}

// BlindCeiling is how many requests of one client at its full rate the other nodes can
// pass unseen within one sync interval: (limit/window) × interval × nodes. The document's
// bound on delayed sync's overshoot.
func (r Rule) BlindCeiling(interval time.Duration, nodes int) float64 {
	return r.refillPerSecond() * interval.Seconds() * float64(nodes)
}
