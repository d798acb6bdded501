package limiters

import (
	"context"
	"sync/atomic"
	"time"
)

// SliceCount is the count of one window slice; Index is the slice number since the Unix epoch.
type SliceCount struct {
	Index int64
	Count int64
}

// SyncEntry is one client's part of a delayed-sync exchange: what this node counted since
// its last exchange goes in, the shared view comes back.
type SyncEntry struct {
	Client string
	Rule   *Rule
	// Push holds the window slices counted locally (window algorithms).
	Push []SliceCount
	// Spent is the tokens taken locally (token bucket).
	Spent int64
	// Mark lets a store count a push once even when it is sent again: an exchange that
	// timed out may have landed all the same, and the node pushes its counts again with the
	// next sync. Zero: the store adds the push as it is.
	Mark PushMark

	// View is filled by the store: the shared counts of the slices in the window.
	View []SliceCount
	// Tokens and At are filled by the store: the shared bucket after the push.
	Tokens float64
	At     int64 // Unix nanoseconds
}

// PushMark places a push in its node's running count of one client. Base is the node's
// count before the push's first count and Total after its last (Total - Base is the push:
// the window's counts oldest slice first, or the tokens spent). The store keeps the highest
// Total it has seen from Node for the client's counter incarnation Inc, and adds only the
// part of a push above it: what an exchange that timed out but landed already counted is the
// push's oldest part, since a node pushes its counts again in the order it counted them.
type PushMark struct {
	Node        string // empty: no mark
	Inc         int64  // the node's incarnation of the client's count: a forgotten client starts anew
	Base, Total int64
	// Call numbers the bounded design's store calls of the client from this node, one at a
	// time: a call that reaches the store after a later one (the node gave up on it at its
	// timeout and decided its requests alone) admits none of them.
	Call int64
	// Repush marks a push of everything the node admitted in the window under a new
	// incarnation, after the store forgot it (or may have: its epoch changed), and the
	// pushes that retry it. A store that holds a mark of this node under another
	// incarnation (written since it forgot, by a call that needed no re-push or an earlier
	// re-push that landed after the node gave up on it; or it never forgot) holds that
	// mark's total of the node's counts already: it adds the re-push's part above it and
	// takes its incarnation, instead of adding it all a second time.
	Repush bool
}

// Store holds the counters shared by the nodes of a fleet.
type Store interface {
	// Take decides one request atomically against the shared counters (central mode).
	Take(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error)
	// Exchange adds each entry's local counts to the shared counters and fills in the
	// shared view, in one round trip (delayed sync).
	Exchange(ctx context.Context, now time.Time, entries []SyncEntry) error
}

// MemoryStore is a Store inside this process, for the models and for tests. It runs the
// same algorithm code as the single-node limiter.
type MemoryStore struct {
	local   *Local
	touches atomic.Int64
	bounded boundedMemory
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{local: NewLocal()} }

// Touches is the number of round trips made to the store.
func (m *MemoryStore) Touches() int64 { return m.touches.Load() }

// Take implements Store.
func (m *MemoryStore) Take(_ context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	m.touches.Add(1)
	return m.local.Take(client, rule, now), nil
}

// Exchange implements Store. It adds every push as it is, ignoring marks: an exchange
// with it never fails, so no push is ever sent twice.
func (m *MemoryStore) Exchange(_ context.Context, now time.Time, entries []SyncEntry) error {
	m.touches.Add(1)
	m.local.mu.Lock()
	defer m.local.mu.Unlock()
	nowNs := now.UnixNano()
	for i := range entries {
		e := &entries[i]
		s := m.local.stateFor(e.Client, e.Rule, nowNs)
		s.seen = nowNs
		if e.Rule.Algorithm == TokenBucket {
			s.bucket.refill(e.Rule, nowNs)
			s.bucket.tokens -= float64(e.Spent)
			e.Tokens, e.At = s.bucket.tokens, s.bucket.at
			continue
		}
		for _, c := range e.Push {
			s.win.add(c.Index, c.Count)
		}
		e.View = s.win.appendCounts(e.View[:0], e.Rule.sliceIndex(now), e.Rule.slices())
	}
	return nil
}

// Central is the central-counter mode: every decision reads and writes the shared counter
// atomically in the store. Exact, at the price of one store round trip per request.
type Central struct {
	store   Store
	touches atomic.Int64
}

// NewCentral returns a central-mode node over store.
func NewCentral(store Store) *Central { return &Central{store: store} }

// Allow implements Limiter.
func (c *Central) Allow(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	c.touches.Add(1)
	return c.store.Take(ctx, client, rule, now)
}

// Touches is the number of store round trips this node made.
func (c *Central) Touches() int64 { return c.touches.Load() }
