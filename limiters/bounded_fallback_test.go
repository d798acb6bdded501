package limiters

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A node whose store call fails decides alone: up to a whole limit of its own only when the
// error says the store is known down (ErrStoreDown), up to its share of the limit
// (⌈limit/nodes⌉) when the call merely timed out or failed otherwise.
func TestBoundedFallbackKnowsDownFromSlow(t *testing.T) {
	rule := &Rule{Name: "fb", Algorithm: SlidingWindow, Limit: 100, Window: 10 * time.Second, Slices: 10}
	const nodes = 8
	bd := BoundsFor(rule, nodes)
	if bd.Share != 13 {
		t.Fatalf("share %d, want ⌈100/8⌉ = 13", bd.Share)
	}
	tests := []struct {
		name string
		err  error
		want int64
	}{
		{"known down: refused", fmt.Errorf("%w: dial tcp: connect: connection refused", ErrStoreDown), rule.Limit},
		{"known down: breaker open", fmt.Errorf("%w: circuit breaker open", ErrStoreDown), rule.Limit},
		{"timed out", fmt.Errorf("redis settle: %w", context.DeadlineExceeded), bd.Share},
		{"another error", errors.New("ERR unknown script"), bd.Share},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewBoundedSync(NewMemoryStore(), BoundedNode("0", nodes),
				StoreCalls(func(context.Context, string, func(context.Context) error) error { return tt.err }))
			now := time.Unix(1_800_000_000, 0)
			var admitted int64
			var retry time.Duration
			for i := range 3 * rule.Limit {
				d, err := n.Allow(context.Background(), "c", rule, now.Add(time.Duration(i)*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted++
				} else {
					retry = d.RetryAfter
				}
			}
			// A refusal says when the node's own count falls under what it may admit alone:
			// when its first admissions leave the window, about a window from now.
			if retry < rule.Window-time.Second {
				t.Errorf("retry after %v, want about the window (%v)", retry, rule.Window)
			}
			// The budget's admissions are the node's own too: the fallback counts them.
			if admitted != tt.want {
				t.Errorf("admitted %d alone, want %d", admitted, tt.want)
			}
		})
	}
}
