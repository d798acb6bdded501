package limiters

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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

// A node cut from the store after reaching it admits each client alone up to its lease: what
// it admitted of the client in the window before its last store contact, at least its share
// ⌈L/N⌉ and at most the limit. A client that sent everything through this node keeps what it
// used here; one seen a little or never gets the share, so N nodes cut together give it
// about one limit, not N; and the lease holds over every window of the outage.
func TestBoundedLeaseWhileCut(t *testing.T) {
	rule := &Rule{Name: "lease", Algorithm: SlidingWindow, Limit: 100, Window: 10 * time.Second, Slices: 10}
	const nodes = 8
	bd := BoundsFor(rule, nodes)
	var cut atomic.Bool
	n := NewBoundedSync(NewMemoryStore(), BoundedNode("0", nodes),
		StoreCalls(func(ctx context.Context, _ string, f func(context.Context) error) error {
			if cut.Load() {
				return fmt.Errorf("%w: dial tcp: connect: connection refused", ErrStoreDown)
			}
			return f(ctx)
		}))
	t0 := time.Unix(1_800_000_000, 0)
	send := func(client string, k int, at time.Time) (admitted int) {
		for i := range k {
			d, err := n.Allow(context.Background(), client, rule, at.Add(time.Duration(i)*time.Microsecond))
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				admitted++
			}
		}
		return admitted
	}
	// Reachable: the store admits the sticky client's 60 through this node, the light one's 5.
	if a := send("sticky", 60, t0); a != 60 {
		t.Fatalf("sticky: %d of 60 admitted with the store, want 60", a)
	}
	if a := send("light", 5, t0.Add(time.Second)); a != 5 {
		t.Fatalf("light: %d of 5 admitted with the store, want 5", a)
	}
	cut.Store(true)
	// Cut, a window after: each client may be admitted its lease in every window.
	for w := range 3 {
		at := t0.Add(time.Duration(w+1)*rule.Window + 2*time.Second)
		for _, c := range []struct {
			client string
			want   int
		}{{"sticky", 60}, {"light", int(bd.Share)}, {"fresh", int(bd.Share)}} {
			if a := send(c.client, 3*int(rule.Limit), at); a != c.want {
				t.Errorf("window %d after the cut: %s admitted %d alone, want its lease %d", w+1, c.client, a, c.want)
			}
		}
	}
	// Back: the store decides again, and a later cut takes the lease from the last contact.
	cut.Store(false)
	at := t0.Add(5*rule.Window + 3*time.Second)
	if a := send("light", 40, at); a != 40 {
		t.Fatalf("light: %d of 40 admitted with the store back, want 40", a)
	}
	cut.Store(true)
	if a := send("light", 100, at.Add(time.Second)); a != 0 {
		t.Errorf("light, cut again within the window: %d more admitted alone, want 0 (its lease is the 40 it used here)", a)
	}
}
