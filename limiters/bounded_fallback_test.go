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

// A node cut from the store after reaching it admits each client alone up to its lease: L ×
// what it admitted of the client in the window before its last store contact / the store's
// count of the client it last read, at least its share ⌈L/N⌉ and at most the limit. A client
// that sent everything through the cut node keeps its whole limit there (a store down for
// everyone refuses no client that keeps to one node); one spread over two nodes keeps half;
// one the node never asked the store about gets the share, so N nodes cut together give it
// about one limit, not N; and the lease holds over every window of the outage.
func TestBoundedLeaseWhileCut(t *testing.T) {
	rule := &Rule{Name: "lease", Algorithm: SlidingWindow, Limit: 100, Window: 10 * time.Second, Slices: 10}
	const nodes = 8
	bd := BoundsFor(rule, nodes)
	store := NewMemoryStore()
	var cut atomic.Bool
	a := NewBoundedSync(store, BoundedNode("a", nodes),
		StoreCalls(func(ctx context.Context, _ string, f func(context.Context) error) error {
			if cut.Load() {
				return fmt.Errorf("%w: dial tcp: connect: connection refused", ErrStoreDown)
			}
			return f(ctx)
		}))
	b := NewBoundedSync(store, BoundedNode("b", nodes))
	t0 := time.Unix(1_800_000_000, 0)
	send := func(n *BoundedSync, client string, k int, at time.Time) (admitted int) {
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
	// Reachable: the store admits the sticky client's 60 through a alone, the spread one's
	// 80 through a and b in turn (a's last view: 40 of 80 its own).
	if got := send(a, "sticky", 60, t0); got != 60 {
		t.Fatalf("sticky: %d of 60 admitted with the store, want 60", got)
	}
	for i := range 40 {
		at := t0.Add(time.Second + time.Duration(i)*time.Millisecond)
		if send(b, "spread", 1, at) != 1 || send(a, "spread", 1, at.Add(time.Microsecond)) != 1 {
			t.Fatalf("spread: a request %d refused with the store", i)
		}
	}
	cut.Store(true)
	// Cut, a window after and every window after that: each client its lease.
	for w := range 3 {
		at := t0.Add(time.Duration(w+1)*rule.Window + 2*time.Second)
		for _, c := range []struct {
			client string
			want   int
		}{{"sticky", int(rule.Limit)}, {"spread", int(rule.Limit) / 2}, {"fresh", int(bd.Share)}} {
			if got := send(a, c.client, 3*int(rule.Limit), at); got != c.want {
				t.Errorf("window %d after the cut: %s admitted %d alone, want its lease %d", w+1, c.client, got, c.want)
			}
		}
	}
	// Back: the store decides again; the spread client now sends through a alone, and a later
	// cut leases it the whole limit, less what a admitted of it in the window.
	cut.Store(false)
	at := t0.Add(5*rule.Window + 3*time.Second)
	if got := send(a, "spread", 10, at); got != 10 {
		t.Fatalf("spread: %d of 10 admitted with the store back, want 10", got)
	}
	cut.Store(true)
	if got := send(a, "spread", 200, at.Add(time.Second)); got != int(rule.Limit)-10 {
		t.Errorf("spread, now through a alone, cut again within the window: %d more admitted alone, want %d", got, rule.Limit-10)
	}
}
