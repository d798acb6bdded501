package model

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// lockstep is the document's delayed-sync fleet: nodes that sync at one instant, so that
// every node's push is in the store before any node's view is read. Each node is the
// project's DelayedSync making its own exchange, one round trip a sync, and counting it;
// the lockstep lives in the store the nodes share, which holds every exchange of an
// instant until all of them have pushed.
type lockstep struct {
	store *limiters.MemoryStore
	nodes []*limiters.DelayedSync

	mu   sync.Mutex
	cond *sync.Cond
	// An instant's accounting: exchanges waiting for the others, nodes whose sync returned,
	// and whether the views may be read.
	waiting, returned int
	released          bool
}

// newLockstep returns n nodes over one shared memory store. Each pulls the view of every
// client it tracks at each sync (limiters.FullView), as the document's nodes do.
func newLockstep(n int) *lockstep {
	l := &lockstep{store: limiters.NewMemoryStore()}
	l.cond = sync.NewCond(&l.mu)
	for range n {
		l.nodes = append(l.nodes, limiters.NewDelayedSync(barrier{l}, limiters.FullView()))
	}
	return l
}

// sync is one instant: every node syncs, concurrently as real nodes do.
func (l *lockstep) sync(ctx context.Context, now time.Time) error {
	l.mu.Lock()
	l.waiting, l.returned, l.released = 0, 0, false
	l.mu.Unlock()
	errs := make([]error, len(l.nodes))
	var wg sync.WaitGroup
	for i, node := range l.nodes {
		wg.Go(func() {
			errs[i] = node.Sync(ctx, now) // a node with nothing to exchange returns at once
			l.mu.Lock()
			l.returned++
			l.releaseLocked()
			l.mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// touches is the store round trips the nodes made, as each counted its own.
func (l *lockstep) touches() int64 {
	var t int64
	for _, n := range l.nodes {
		t += n.Touches()
	}
	return t
}

// releaseLocked lets the instant's exchanges read their views once every node is either
// waiting in one or done without one. Caller holds l.mu.
func (l *lockstep) releaseLocked() {
	if !l.released && l.waiting+l.returned == len(l.nodes) {
		l.released = true
		l.cond.Broadcast()
	}
}

// barrier is the store as the nodes see it: Take as the shared store's, Exchange held at
// the instant's barrier between pushing and reading the view.
type barrier struct{ l *lockstep }

func (b barrier) Take(ctx context.Context, client string, rule *limiters.Rule, now time.Time) (limiters.Decision, error) {
	return b.l.store.Take(ctx, client, rule, now)
}

func (b barrier) Exchange(ctx context.Context, now time.Time, batch []limiters.SyncEntry) error {
	l := b.l
	if err := l.store.Exchange(ctx, now, batch); err != nil { // push; the view is read below
		return err
	}
	l.mu.Lock()
	l.waiting++
	l.releaseLocked()
	for !l.released {
		l.cond.Wait()
	}
	l.mu.Unlock()
	// Every push of the instant is in: read the views, pushing nothing more.
	views := make([]limiters.SyncEntry, len(batch))
	for i, e := range batch {
		views[i] = limiters.SyncEntry{Client: e.Client, Rule: e.Rule}
	}
	if err := l.store.Exchange(ctx, now, views); err != nil {
		return err
	}
	for i := range batch {
		batch[i].View, batch[i].Tokens, batch[i].At = views[i].View, views[i].Tokens, views[i].At
	}
	return nil
}

// timerTouches is what the nodes' sync timers cost the store over one window: a fleet of
// n nodes, each already holding the client (the steady state of a client every node
// serves), synced by a timer every interval for one window, each node counting the
// exchanges it made. It is the document's "counter touches" of delayed sync, DUGUM ×
// ⌊PENCERE / aralik⌋ (dagitik.mjs), made by the code instead of computed beside it: a node
// that skipped a tracked client, or exchanged more than once a sync, would change it.
func timerTouches(ctx context.Context, n int, rule *limiters.Rule, window, interval time.Duration) (int64, error) {
	if interval <= 0 {
		return 0, fmt.Errorf("sync interval %v: want a positive interval", interval)
	}
	l := newLockstep(n)
	epoch := time.Unix(0, 0)
	for i, node := range l.nodes {
		if _, err := node.Allow(ctx, "client", rule, epoch); err != nil {
			return 0, fmt.Errorf("node %d: %w", i, err)
		}
	}
	for at := interval; at <= window; at += interval {
		if err := l.sync(ctx, epoch.Add(at)); err != nil {
			return 0, err
		}
	}
	return l.touches(), nil
}
