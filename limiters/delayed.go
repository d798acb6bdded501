package limiters

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DelayedSync is the delayed-sync mode (the document's choice): a node counts locally and,
// every sync interval, pushes its counts to the store and pulls the shared view. It allows
// while the last shared view plus its own unsynced count is under the limit, so a decision
// never waits for the store; between syncs the fleet can overshoot by at most what the other
// nodes allowed unseen (the document's blind ceiling: limit/window × interval × nodes).
//
// When the store is unreachable, Sync fails and Allow goes on deciding from the last view
// plus everything counted since: fail-open, approaching one full limit per node.
type DelayedSync struct {
	store   Store
	mu      sync.Mutex
	clients map[stateKey]*syncState
	touches atomic.Int64
	// batch is reused between syncs; only Sync touches it, under syncMu.
	syncMu sync.Mutex
	batch  []SyncEntry
	keys   []stateKey
	// dirty lists the clients with counts not yet pushed, under mu; spare is the list's
	// other buffer, swapped in at each sync so neither allocates in steady state.
	dirty, spare []stateKey
	// fullView makes every sync pull the shared view of every client the node tracks, not
	// only of those it has news of (FullView).
	fullView bool
	// node names this node in the store's push marks (NodeID); incs numbers the clients'
	// counter incarnations, under mu.
	node string
	incs int64
	// obs hears of every exchange and decision (Observe); nil: nobody listens.
	obs Observer
}

// Observer hears what a delayed-sync node does, for its operator's metrics. Its methods are
// called on the decision and sync paths, some under the node's lock: they must be quick
// and must not call back into the node.
type Observer interface {
	// Exchanged is called once per store exchange, before it is sent, with the number of
	// clients it carries.
	Exchanged(clients int)
	// Decided is called once per decision with the age of the shared view of the client
	// the node decided with: the time since that view was last refreshed from the store,
	// or, for a client the node has not yet synced, since the node first saw the client
	// (it has decided blind, on its own counts, that long).
	Decided(viewAge time.Duration)
}

// Observe makes the node report its exchanges and decisions to o.
func Observe(o Observer) DelayedOption { return func(n *DelayedSync) { n.obs = o } }

// DelayedOption adjusts a DelayedSync.
type DelayedOption func(*DelayedSync)

// FullView makes every Sync pull the shared view of every client the node tracks, not only
// of the clients it counted since the last sync: the document's model of a sync, where each
// node's view of every client is at most one interval old. It costs a round trip in
// proportion to the clients tracked, not to the node's news.
func FullView() DelayedOption { return func(n *DelayedSync) { n.fullView = true } }

// NodeID names the node to the store, which then counts each of the node's pushes once even
// when the node sends it again after an exchange that timed out but landed (PushMark). Every
// node of a fleet needs its own ID, unique for the life of the store's keys: two nodes under
// one ID would skip each other's counts. Without one, a push sent twice is counted twice.
func NodeID(id string) DelayedOption { return func(n *DelayedSync) { n.node = id } }

// syncState is what a node knows of one client.
type syncState struct {
	rule *Rule
	// Window algorithms: the shared view, the counts pushed but not yet seen in a view,
	// and the counts not yet pushed.
	view, inflight, pending ring
	// Token bucket: the shared bucket and the tokens taken locally.
	viewBucket               bucket
	inflightSpent, pendSpent int64
	seen                     int64
	dirty                    bool // on the node's dirty list
	// inc is this count's incarnation (PushMark.Inc); counted is every count the node made
	// for the client since, pushed or not.
	inc, counted int64
	// viewAt is when the view was last refreshed from the store (Unix ns, the sync's time),
	// or when the node first saw the client if it never was.
	viewAt int64
}

// NewDelayedSync returns a delayed-sync node over store.
func NewDelayedSync(store Store, opts ...DelayedOption) *DelayedSync {
	n := &DelayedSync{store: store, clients: make(map[stateKey]*syncState)}
	for _, o := range opts {
		o(n)
	}
	return n
}

// Allow implements Limiter. It never touches the store and never fails.
func (n *DelayedSync) Allow(_ context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	nowNs := now.UnixNano()
	k := stateKey{client, rule.Name}
	s := n.clients[k]
	if s == nil || *s.rule != *rule {
		s = newSyncState(rule, nowNs)
		n.incs++
		s.inc = n.incs
		n.clients[k] = s
	}
	s.seen = nowNs
	if n.obs != nil {
		n.obs.Decided(time.Duration(max(nowNs-s.viewAt, 0)))
	}
	if rule.Algorithm == TokenBucket {
		b := s.viewBucket
		b.refill(rule, nowNs)
		avail := b.tokens - float64(s.inflightSpent+s.pendSpent)
		allowed := avail >= 1
		if allowed {
			s.pendSpent++
			s.counted++
			avail--
			n.markDirty(k, s)
		}
		return bucketDecision(rule, avail, allowed, now), nil
	}
	d := rule.sliceIndex(now)
	// The shared view, the counts in flight and the unpushed ones, slice by slice.
	var buf [maxStackSlices]int64
	counts := windowBuf(&buf, rule.slices())
	s.view.addWindow(counts, d)
	s.inflight.addWindow(counts, d)
	s.pending.addWindow(counts, d)
	allowed := sum(counts) < rule.Limit
	if allowed {
		s.pending.add(d, 1)
		s.counted++
		counts[len(counts)-1]++
		n.markDirty(k, s)
	}
	return windowDecision(rule, counts, d, now, allowed), nil
}

func newSyncState(r *Rule, nowNs int64) *syncState {
	s := &syncState{rule: r, seen: nowNs, viewAt: nowNs}
	if r.Algorithm == TokenBucket {
		s.viewBucket = bucket{tokens: float64(r.Burst), at: nowNs}
		return s
	}
	s.view, s.inflight, s.pending = newRing(r.slices()), newRing(r.slices()), newRing(r.slices())
	return s
}

// Sync pushes what this node counted since the last sync and pulls the shared view of the
// same clients (with FullView, of every client it tracks), in one store round trip. With
// nothing to exchange it makes none. If the store fails, the counts stay pending for the
// next sync and still count meanwhile.
func (n *DelayedSync) Sync(ctx context.Context, now time.Time) error {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	n.collect(now)
	if len(n.batch) == 0 {
		return nil
	}
	n.touches.Add(1)
	if n.obs != nil {
		n.obs.Exchanged(len(n.batch))
	}
	if err := n.store.Exchange(ctx, now, n.batch); err != nil {
		if !n.partial(err, now) {
			n.restore()
		}
		return fmt.Errorf("delayed sync: exchange with the counter store: %w", err)
	}
	n.apply(now)
	return nil
}

// collect fills the batch. It takes the clients that sent since the last sync (the dirty
// list), so a sync costs the node's lock time in proportion to its news, not to every
// client it tracks; their pending counts move to in-flight and into the batch. With
// fullView every other client it tracks follows, pushing nothing, for its view.
func (n *DelayedSync) collect(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.batch, n.keys = n.batch[:0], n.keys[:0]
	defer n.collectViews()
	dirty := n.dirty
	n.dirty = n.spare[:0]
	n.spare = dirty
	for _, k := range dirty {
		s := n.clients[k]
		if s == nil || !s.dirty {
			continue
		}
		s.dirty = false
		if !s.hasPending(now) {
			continue // its counts fell out of the window before they were pushed
		}
		e := SyncEntry{Client: k.client, Rule: s.rule}
		pushed := int64(0)
		if s.rule.Algorithm == TokenBucket {
			e.Spent = s.pendSpent
			pushed = e.Spent
			s.inflightSpent += s.pendSpent
			s.pendSpent = 0
		} else {
			d, m := s.rule.sliceIndex(now), s.rule.slices()
			e.Push = s.pending.appendCounts(nil, d, m) // oldest first, as a mark needs
			for _, c := range e.Push {
				s.inflight.add(c.Index, c.Count)
				pushed += c.Count
			}
			s.pending.reset()
		}
		if n.node != "" {
			// Counts that fell out of the window unpushed are the oldest: Base is past them.
			e.Mark = PushMark{Node: n.node, Inc: s.inc, Base: s.counted - pushed, Total: s.counted}
		}
		n.batch = append(n.batch, e)
		n.keys = append(n.keys, k)
	}
}

// collectViews adds every tracked client not already in the batch, pushing nothing, when
// the node pulls full views. Caller holds n.mu.
func (n *DelayedSync) collectViews() {
	if !n.fullView {
		return
	}
	in := make(map[stateKey]bool, len(n.keys))
	for _, k := range n.keys {
		in[k] = true
	}
	for k, s := range n.clients {
		if !in[k] {
			n.batch = append(n.batch, SyncEntry{Client: k.client, Rule: s.rule})
			n.keys = append(n.keys, k)
		}
	}
}

// markDirty puts a client with unsynced counts on the next sync's list. Caller holds n.mu.
func (n *DelayedSync) markDirty(k stateKey, s *syncState) {
	if !s.dirty {
		s.dirty = true
		n.dirty = append(n.dirty, k)
	}
}

// Prune forgets clients that sent nothing for a whole window and have nothing unsynced, so
// memory stays bounded by the clients active in the last window. It walks every client
// under the node's lock: call it about once a window, not every sync. It returns how many
// clients remain.
func (n *DelayedSync) Prune(now time.Time) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	nowNs := now.UnixNano()
	for k, s := range n.clients {
		if !s.dirty && nowNs-s.seen > int64(s.rule.Window) && s.inflightSpent == 0 && !s.hasPending(now) {
			delete(n.clients, k)
		}
	}
	return len(n.clients)
}

// restore puts in-flight counts back to pending after a failed exchange, so they are
// pushed with the next one and still count meanwhile.
func (n *DelayedSync) restore() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, e := range n.batch {
		s := n.clients[n.keys[i]]
		if s == nil {
			continue
		}
		s.pendSpent += e.Spent
		s.inflightSpent -= e.Spent
		for _, c := range e.Push {
			s.pending.add(c.Index, c.Count)
			s.inflight.add(c.Index, -c.Count)
		}
		n.markDirty(n.keys[i], s)
	}
}

// apply installs the shared views that came back.
func (n *DelayedSync) apply(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, e := range n.batch {
		s := n.clients[n.keys[i]]
		if s == nil || s.rule != e.Rule {
			continue
		}
		s.viewAt = now.UnixNano()
		if e.Rule.Algorithm == TokenBucket {
			s.inflightSpent -= e.Spent
			s.viewBucket = bucket{tokens: e.Tokens, at: e.At}
			continue
		}
		for _, c := range e.Push {
			s.inflight.add(c.Index, -c.Count)
		}
		s.view.set(e.View)
	}
}

func (s *syncState) hasPending(now time.Time) bool {
	if s.rule.Algorithm == TokenBucket {
		return s.pendSpent != 0
	}
	return s.pending.total(s.rule.sliceIndex(now), s.rule.slices()) != 0
}

// Touches is the number of store round trips this node made.
func (n *DelayedSync) Touches() int64 { return n.touches.Load() }

// Clients is the number of clients this node currently tracks.
func (n *DelayedSync) Clients() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.clients)
}
