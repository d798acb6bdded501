package limiters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// BoundedSync is delayed sync with a proven bound (docs/design-bound.md): the replica's
// delayed mode for sliding-window rules. A node decides a client alone only while it has
// admitted fewer than its unsynced budget of the client's requests in the last window (a
// share of a twentieth of the limit: Budget); beyond it, each admission is decided by one
// atomic call to the store, which carries the node's unpushed counts, so the store's count
// of the client holds everything but what the nodes admitted within their budgets. A client
// far below its limit (most of a large population) never costs the store anything; one near
// its limit costs it one call per admission, and none per rejection while the node's last
// view of it says it is full.
//
// The store keeps each client's admissions as a log of their decision times, exact to the
// µs, and a clock of its own per client: a request is decided, and counted, at the later of
// its arrival at its node and the newest decision time of its client, so every node's calls
// of a client are decided in one order on one clock, each at an instant between the request's
// send and its answer. The store admits a request while its log holds fewer than the limit in
// the half-open window-long interval that ends at the request's decision time; so the store's
// admissions of a client number at most the limit in any window-long interval of decision
// times, and with every node's unseen budget the fleet admits at most limit + nodes × budget
// (1.05 × limit) there, the whole window counted, with no margin: two bursts whose decision
// times are less than a window apart are never both admitted whole. A refusal counts only
// admissions decided within a window before it, each between its own send and answer.
//
// While the store is known down (a call's error wraps ErrStoreDown: its connections are
// refused or reset, or the replica's breaker is open) a node falls back on its own count, up
// to its lease of the client: its part of the limit as its part of the client's traffic
// before it last reached the store, at least its share and at most the limit (lease); one node cannot tell
// a store down for all from a partition that cuts it alone, and a lease bounds both without
// an error or a wait. A call that failed otherwise
// (it timed out: the store is slow, not down) admits alone only while the node's own count of
// the client is under its share of the limit (Bounds.Share). A store that comes back empty is noticed (an
// epoch key each sync, a vanished push mark at each call) and every node pushes again what
// it admitted in the window.
//
// Rules other than sliding windows (fixed window, token bucket) are decided by a
// DelayedSync (the document's design) that this node holds beside.
type BoundedSync struct {
	store BoundedStore
	doc   *DelayedSync
	nodes int
	node  string
	call  func(ctx context.Context, op string, f func(context.Context) error) error
	obs   Observer

	mu      sync.Mutex
	clients map[stateKey]*bstate
	incs    int64
	// dirty lists the clients with store history and unpushed counts, for the next sync.
	dirty []stateKey
	epoch string

	syncMu  sync.Mutex
	touches atomic.Int64
	calls   atomic.Int64
	// reached is when (Unix µs, the node's clock) this node's last store call that succeeded
	// was made: the leases it decides alone on are taken from what it admitted before it.
	reached atomic.Int64
}

// BoundedStore is a store that BoundedSync can use: Settle pushes and decides atomically,
// Epoch names the store's life (it changes when the store comes back empty).
type BoundedStore interface {
	Store
	Settle(ctx context.Context, now time.Time, entries []SettleEntry) error
	Epoch(ctx context.Context) (string, error)
}

// SubCount is a count of a client's admissions decided at one instant (Index and Newest,
// Unix µs: the bounded design's sub-slice is one µs, so the store's log is exact).
type SubCount struct {
	Index, Count, Newest int64
}

// SettleEntry is one client's part of a Settle: the node's unpushed counts go in, with
// their mark; the store decides the requests of Decide in order; the store's counts of the
// client come back, as a few numbers whatever the client's traffic.
type SettleEntry struct {
	Client string
	Rule   *Rule
	Bounds Bounds
	Push   []SubCount
	// Mark is the node's push mark: Base and Total count what it pushed before and with
	// this call; the store adds the requests it admits to the mark too, so that a node
	// whose call failed after the store decided, and which then decided those requests
	// alone and pushes them, is not counted twice for them.
	Mark PushMark
	// Decide are the arrival times (Unix µs) of the requests the store decides, one after
	// the other, in order; At is the call's time: the last of them, or the sync's.
	Decide []int64
	At     int64

	// Filled by the store.
	Allowed []bool // one per Decide
	// DecidedAt are the decision times (Unix µs), one per Decide: the later of its arrival
	// and the client's store clock, the newest decision time before it.
	DecidedAt []int64
	// Reset: the store has lost this node's earlier pushes (it restarted empty); nothing
	// was applied, and the node must push again everything it admitted in the window.
	Reset bool
	// Count is the store's count of the client after the call, over the window-long
	// interval that ends at Clock, the client's store clock then (the later of At and its
	// newest decision time); FullUntil, when the client is full, is the first instant (Unix
	// µs) at which the count is under the limit again with no further admission (0: not
	// full); ResetAt is when its oldest counted admission leaves (Unix µs; 0: it holds none).
	Count, Clock, FullUntil, ResetAt int64
}

// admitted is how many requests of Decide the store admitted.
func (e *SettleEntry) admitted() int64 {
	var a int64
	for _, ok := range e.Allowed {
		if ok {
			a++
		}
	}
	return a
}

// Bounds are the figures a bounded decision runs on, in µs and requests.
type Bounds struct {
	Sub, Window int64 // the counts' resolution (1 µs: exact) and the window (µs)
	Limit       int64 // the store admits while a client's log holds fewer in the window
	Budget      int64 // each node's unsynced admissions per window
	// Share is ⌈limit / nodes⌉: what a node may admit of a client alone in a window while
	// the store is slow but not known down (ErrStoreDown).
	Share int64
	Subs  int // how many µs back a node keeps: a window's and one more
}

// Figures of the bound (docs/design-bound.md).
const (
	// unseenTwentieths is the share of the limit that all nodes together may admit without
	// the store: limit / 20, split over the nodes; the fleet's bound is limit + nodes × budget.
	unseenTwentieths = 1
)

// BoundsFor returns the figures for rule on a fleet of nodes.
func BoundsFor(r *Rule, nodes int) Bounds {
	nodes = max(nodes, 1)
	win := r.Window.Microseconds()
	b := Bounds{Sub: 1, Window: win, Limit: r.Limit}
	b.Share = (r.Limit + int64(nodes) - 1) / int64(nodes)
	b.Budget = r.Limit * unseenTwentieths / 20 / int64(nodes)
	b.Subs = int(win) + 2
	return b
}

// edge is the newest decision time (µs) that the counts at t no longer hold: they hold the
// half-open interval (t − window, t].
func (b Bounds) edge(t int64) int64 { return t - b.Window }

// BoundedOption adjusts a BoundedSync.
type BoundedOption func(*BoundedSync)

// BoundedNode names the node (its push marks) and gives the fleet's size, on which the
// budget and the cap depend.
func BoundedNode(id string, nodes int) BoundedOption {
	return func(n *BoundedSync) { n.node, n.nodes = id, nodes }
}

// BoundedObserve reports exchanges and decisions to o.
func BoundedObserve(o Observer) BoundedOption { return func(n *BoundedSync) { n.obs = o } }

// StoreCalls runs every store call through call (op "take" for a decision, "exchange"
// for a sync): the replica's timeout and circuit breaker.
func StoreCalls(call func(ctx context.Context, op string, f func(context.Context) error) error) BoundedOption {
	return func(n *BoundedSync) { n.call = call }
}

// NewBoundedSync returns a bounded delayed-sync node over store.
func NewBoundedSync(store BoundedStore, opts ...BoundedOption) *BoundedSync {
	n := &BoundedSync{store: store, nodes: 1, clients: make(map[stateKey]*bstate)}
	n.call = func(ctx context.Context, _ string, f func(context.Context) error) error { return f(ctx) }
	for _, o := range opts {
		o(n)
	}
	docOpts := []DelayedOption{}
	if n.node != "" {
		docOpts = append(docOpts, NodeID(n.node))
	}
	if n.obs != nil {
		docOpts = append(docOpts, Observe(n.obs))
	}
	n.doc = NewDelayedSync(store, docOpts...)
	return n
}

// bstate is what a node knows of one client.
type bstate struct {
	rule *Rule
	bd   Bounds
	// unpushed: admitted by this node alone, not yet pushed; local: admitted within the
	// budget (the budget's count); own: everything this node admitted (fallback, re-push).
	unpushed, local, own subRing
	// The store's last answer (SettleEntry): its count at viewT (Unix µs, the client's store
	// clock), when the client is full until, when its oldest counted admission leaves.
	viewCount, fullUntil, resetAt, viewT int64
	viewAt, seen                         int64 // Unix ns
	storeAt                              int64 // Unix µs of the last store contact: 0 never
	// counted is what this node's push mark stands at: what it pushed, and what the store
	// admitted of its requests; inc is the mark's incarnation; calls numbers its store
	// calls (PushMark.Call).
	inc, counted, calls int64
	// queue are the requests past the budget waiting for the store; busy says a store call
	// of this client is in flight (a batch of decisions or a push): one at a time, so that
	// the marks go in order and a burst costs the store one call a round trip, not one a
	// request.
	queue               []*waiter
	busy, repush, dirty bool
	// repushing: the incarnation is a re-push's that has not landed yet: every push of it
	// carries PushMark.Repush, so that one that landed after the node gave up on it, or a
	// mark written since the store forgot, makes the store adopt it instead of adding it.
	repushing bool
	// alone is the limit of the node's last decision alone after a failed call (its lease
	// or its share, fallbackLimit), for the retry time of a refusal it made.
	alone int64
	// lease is what the node may admit of the client alone in a window while the store is
	// known down, taken when leaseAt (the node's last store contact, BoundedSync.reached)
	// was the last store contact: lease.
	lease, leaseAt int64
	// epoch is the store's epoch this node last pushed the client again under (a store
	// that came back empty): the sync that finds the epoch changed pushes again only the
	// clients a call's vanished mark has not made it push again already.
	epoch string
}

// waiter is a request past its node's budget, waiting for the store's decision.
type waiter struct {
	at  int64     // arrival, Unix µs
	res chan bool // allowed
	// decided is the decision time (Unix µs): the store's (SettleEntry.DecidedAt) or, when
	// the node decided alone, the arrival. Written before res is sent.
	decided int64
}

// maxBatch bounds the requests of one client a store call decides.
const maxBatch = 256

func (n *BoundedSync) state(k stateKey, rule *Rule, nowNs int64) *bstate {
	s := n.clients[k]
	if s == nil || *s.rule != *rule {
		bd := BoundsFor(rule, n.nodes)
		s = &bstate{rule: rule, bd: bd, viewAt: nowNs}
		s.unpushed, s.local, s.own = newSubRing(bd.Subs), newSubRing(bd.Subs), newSubRing(bd.Subs)
		n.incs++
		s.inc = n.incs
		n.clients[k] = s
	}
	return s
}

// Allow implements Limiter. A decision waits for the store only when the client is past its
// node's budget and not known to be full, and then for one store call at most: the requests
// that arrive while a call of their client is in flight go together in the next one. It
// fails never: a store call that fails or times out turns into the node's own decision.
func (n *BoundedSync) Allow(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	if rule.Algorithm != SlidingWindow {
		return n.doc.Allow(ctx, client, rule, now)
	}
	nowNs := now.UnixNano()
	t := now.UnixMicro()
	k := stateKey{client, rule.Name}
	n.mu.Lock()
	s := n.state(k, rule, nowNs)
	s.seen = nowNs
	if n.obs != nil {
		n.obs.Decided(time.Duration(max(nowNs-s.viewAt, 0)))
	}
	bd := s.bd
	// The store said full until fullUntil, on its clock: refused here at the later of this
	// arrival and the store clock the node last saw, the instant the store's log held the limit
	// in the window before it (deciding at the arrival alone would refuse before admissions the
	// store had already ordered after it: a refusal the client's decided traffic does not earn).
	if tau := max(t, s.viewT); s.fullUntil > tau {
		dec := n.decision(s, tau, false)
		n.mu.Unlock()
		return dec, nil
	}
	if used := s.local.count(bd.edge(t)); used < bd.Budget {
		d := floorDiv(t, bd.Sub)
		s.unpushed.add(d, 1, t)
		s.local.add(d, 1, t)
		s.own.add(d, 1, t)
		s.counted++
		n.markDirty(k, s)
		dec := n.decision(s, t, true)
		n.mu.Unlock()
		return dec, nil
	}
	// Past the budget: the store decides, in this client's next call.
	w := &waiter{at: t, res: make(chan bool, 1)}
	s.queue = append(s.queue, w)
	lead := !s.busy
	s.busy = true
	n.mu.Unlock()
	if lead {
		n.decideQueued(ctx, k, s)
	}
	allowed := <-w.res
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.decision(s, max(w.decided, t), allowed), nil
}

// decideQueued sends the client's queued requests (at most maxBatch) to the store in one
// call, with the node's unpushed counts, and answers each; requests queued meanwhile go in
// the next call, made by another goroutine, so that no request waits for more than the
// call in flight when it arrived and its own. A call that fails or times out (StoreCalls:
// the replica's store wait and breaker) is decided by the node alone: a request is admitted
// while what this node admitted of the client in the window is under the limit when the
// store is known down (ErrStoreDown: at most one limit per node), under the node's share of
// it otherwise (Bounds.Share). Called with s.busy set by the caller.
func (n *BoundedSync) decideQueued(ctx context.Context, k stateKey, s *bstate) {
	n.mu.Lock()
	batch := s.queue[:min(len(s.queue), maxBatch)]
	s.queue = append([]*waiter(nil), s.queue[len(batch):]...)
	e := SettleEntry{Client: k.client, Rule: s.rule, Bounds: s.bd, At: batch[len(batch)-1].at}
	for _, w := range batch {
		e.Decide = append(e.Decide, w.at)
	}
	n.takePush(s, &e)
	n.mu.Unlock()

	n.calls.Add(1)
	one := []SettleEntry{e}
	err := n.call(ctx, "take", func(ctx context.Context) error {
		if err := n.store.Settle(ctx, time.UnixMicro(e.At), one); err != nil {
			return err
		}
		if one[0].Reset { // the store forgot us: push everything again, then decide
			n.mu.Lock()
			n.putBack(s, &one[0])
			n.takeRepush(s, &one[0])
			n.mu.Unlock()
			if err := n.store.Settle(ctx, time.UnixMicro(e.At), one); err != nil {
				return err
			}
			// Under which epoch: the sync that finds it new must not push this client again.
			ep, err := n.store.Epoch(ctx)
			if err == nil {
				n.mu.Lock()
				s.epoch = ep
				n.mu.Unlock()
			}
			return err
		}
		return nil
	})
	e = one[0]

	n.mu.Lock()
	bd := s.bd
	if err != nil || e.Reset {
		n.putBack(s, &e)
		alone := n.fallbackLimit(s, err)
		s.alone = alone
		for _, w := range batch {
			ownLen := s.own.count(bd.edge(w.at))
			ok := ownLen < alone
			if ok {
				d := floorDiv(w.at, bd.Sub)
				s.unpushed.add(d, 1, w.at)
				s.own.add(d, 1, w.at)
				s.counted++
				n.markDirty(k, s)
			}
			w.decided = w.at
			w.res <- ok
		}
	} else {
		n.reachedAt(e.At)
		n.settled(s, &e, time.Now().UnixNano())
		s.counted += e.admitted()
		for i, w := range batch {
			w.decided = e.DecidedAt[i]
			if e.Allowed[i] { // counted at its decision time, as the store counts it
				s.own.add(floorDiv(w.decided, bd.Sub), 1, w.decided)
			}
			w.res <- e.Allowed[i]
		}
	}
	more := len(s.queue) > 0
	s.busy = more
	n.mu.Unlock()
	if more {
		go n.decideQueued(context.WithoutCancel(ctx), k, s)
	}
}

// ErrStoreDown marks a store call's error as the store known to be down (its connections
// refused or reset, a circuit breaker open), not merely slow: only then does a bounded node
// decide a client alone up to a whole limit. A StoreCalls function wraps such errors with it.
var ErrStoreDown = errors.New("counter store down")

// fallbackLimit is how many of a client's requests in the window a node may have admitted
// and still admit alone after a store call failed with err: its lease of the client when
// the store is known down (lease), else (a timeout: the store is slow, the other nodes may
// be reaching it) the node's share of the limit. Caller holds n.mu.
func (n *BoundedSync) fallbackLimit(s *bstate, err error) int64 {
	if errors.Is(err, ErrStoreDown) {
		return n.lease(s)
	}
	return s.bd.Share
}

// lease is what a node cut from the store admits of a client alone in any window-long
// interval of its arrivals: its part of the limit as its part of the client's traffic, L ×
// (what it admitted of the client in the window before its last store contact) / (the
// store's count of the client it last read), at least its share s = ⌈L/N⌉ and at most the
// limit; s for a client it never asked the store about. So Doorman's clients keep the
// capacity their master leased them, in proportion to their demand, while it is unreachable. One node cannot tell
// a store down for everyone from a partition that cuts it alone; so in either it keeps
// deciding at once (fail-open: no error, no wait): a client that sent all its traffic here
// keeps its whole limit here, while the N nodes together give one spread over them, or a
// fresh one, about one limit (N s), not N limits. During a partition
// of C of the N nodes a client is admitted at most L + N b by the store and the budgets,
// and each cut node's lease alone (docs/design-bound.md). A node that never reached the
// store (started while it was down) knows nothing of the others: the whole limit. Caller
// holds n.mu.
func (n *BoundedSync) lease(s *bstate) int64 {
	bd := s.bd
	at := n.reached.Load()
	if at == 0 {
		return bd.Limit
	}
	if s.leaseAt != at {
		s.lease, s.leaseAt = bd.Share, at
		before := s.own.count(bd.edge(at)) - s.own.count(at) // admitted here in (at − W, at]
		if total := max(s.viewCount, before); s.viewT != 0 && total > 0 {
			part := (bd.Limit*before + total - 1) / total // ⌈L × before / total⌉
			s.lease = min(bd.Limit, max(bd.Share, part))
		}
	}
	return s.lease
}

// reachedAt records a store call made at t (Unix µs) that succeeded.
func (n *BoundedSync) reachedAt(t int64) {
	for {
		old := n.reached.Load()
		if t <= old || n.reached.CompareAndSwap(old, t) {
			return
		}
	}
}

// takePush moves the client's unpushed counts into e with their mark (everything it
// admitted in the window, under a new incarnation, when the store lost it). The caller
// holds n.mu and owns the client's store call (s.busy).
func (n *BoundedSync) takePush(s *bstate, e *SettleEntry) {
	if s.repush {
		n.takeRepush(s, e)
		return
	}
	e.Push = s.unpushed.appendPush(e.Push[:0], floorDiv(e.At, s.bd.Sub), s.bd.Subs)
	var pushed int64
	for _, c := range e.Push {
		pushed += c.Count
	}
	s.unpushed.reset()
	if n.node != "" {
		s.calls++
		e.Mark = PushMark{Node: n.node, Inc: s.inc, Base: s.counted - pushed, Total: s.counted, Call: s.calls, Repush: s.repushing}
	}
}

// takeRepush puts everything this node admitted in the window into e under a new
// incarnation: the store lost it. Caller holds n.mu and owns the client's store call.
func (n *BoundedSync) takeRepush(s *bstate, e *SettleEntry) {
	n.incs++
	s.inc = n.incs
	e.Push = s.own.appendPush(e.Push[:0], floorDiv(e.At, s.bd.Sub), s.bd.Subs)
	var total int64
	for _, c := range e.Push {
		total += c.Count
	}
	s.unpushed.reset() // own holds it
	s.counted = total
	if n.node != "" {
		s.calls++
		e.Mark = PushMark{Node: n.node, Inc: s.inc, Base: 0, Total: total, Call: s.calls, Repush: true}
	}
	s.repush, s.repushing = false, true
}

// putBack returns a push that did not land (or may not have) to unpushed; its mark's base
// is kept, so a push that landed all the same is counted once. Caller holds n.mu.
func (n *BoundedSync) putBack(s *bstate, e *SettleEntry) {
	for _, c := range e.Push {
		s.unpushed.add(c.Index, c.Count, c.Newest)
	}
	if e.Reset {
		s.repush = true
	}
}

// settled installs the store's answer after a successful Settle. Caller holds n.mu.
func (n *BoundedSync) settled(s *bstate, e *SettleEntry, nowNs int64) {
	s.viewCount, s.fullUntil, s.resetAt = e.Count, e.FullUntil, e.ResetAt
	s.viewT = e.Clock
	s.viewAt = nowNs
	s.storeAt = e.At
	s.repushing = false // the incarnation's mark is in the store
}

// decision builds the answer from what the node knows after deciding: the store's last
// counts and what this node admitted since that it has not pushed. Caller holds n.mu.
func (n *BoundedSync) decision(s *bstate, t int64, allowed bool) Decision {
	bd := s.bd
	e := bd.edge(t)
	count := s.unpushed.count(e)
	if s.viewT != 0 && s.viewT+bd.Window > t { // the store's count of a window ago has left
		count += s.viewCount
	}
	if s.fullUntil > t {
		count = max(count, bd.Limit)
	}
	dec := Decision{Allowed: allowed, Limit: bd.Limit, Remaining: max(bd.Limit-count, 0), At: time.UnixMicro(t)}
	// The oldest request counted leaves at the store's ResetAt, or, of those this node
	// admitted itself, at its oldest admission's time plus the window.
	reset := s.resetAt
	if o, ok := s.own.oldest(e); ok && (reset <= t || o.Newest+bd.Window < reset) {
		reset = o.Newest + bd.Window
	}
	dec.ResetAfter = time.Duration(bd.Sub) * time.Microsecond
	if reset > t {
		dec.ResetAfter = time.Duration(reset-t) * time.Microsecond
	}
	if !allowed {
		switch {
		case s.fullUntil > t:
			dec.RetryAfter = time.Duration(s.fullUntil-t) * time.Microsecond
		default: // the fallback refused: this node's own count leaves the limit (or its share)
			lim := bd.Limit
			if s.alone > 0 {
				lim = s.alone
			}
			dec.RetryAfter = time.Duration(max(s.own.until(e, lim, bd)-t, bd.Sub)) * time.Microsecond
		}
	}
	return dec
}

// markDirty puts a client with store history on the next sync's list. Caller holds n.mu.
func (n *BoundedSync) markDirty(k stateKey, s *bstate) {
	if s.storeAt != 0 && !s.dirty {
		s.dirty = true
		n.dirty = append(n.dirty, k)
	}
}

// syncChunk bounds the clients of one store call of a sync, so that no call grows with
// the node's backlog.
const syncChunk = 256

// Sync is the node's periodic work with the store: the document's exchange for its other
// rules' clients; then, while it tracks sliding-window clients, it reads the store's epoch (a
// changed epoch means the store came back empty: every client the node has store history of
// is pushed again whole) and pushes, in chunks of at most syncChunk clients, the unpushed
// counts of the clients near their limit (those the node has consulted the store about
// within a window). A node without sliding-window clients makes only the document's
// exchange. Clients that never went past a budget are never pushed. Each store call
// (the epoch read, each chunk) goes through StoreCalls on its own, with its own timeout; a
// failed chunk keeps its counts for the next sync, merged by sub-slice, so nothing grows
// but the counts themselves, and its push marks make a chunk that landed all the same
// count once. The node's lock is held for one client at a time, never for a whole chunk.
func (n *BoundedSync) Sync(ctx context.Context, now time.Time) error {
	return n.sync(ctx, now, n.call)
}

func (n *BoundedSync) sync(ctx context.Context, now time.Time, call func(ctx context.Context, op string, f func(context.Context) error) error) error {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	var errDoc error
	if n.doc.Clients() > 0 { // rules that are not sliding windows: the document's design
		errDoc = call(ctx, "exchange", func(ctx context.Context) error { return n.doc.Sync(ctx, now) })
	}
	n.mu.Lock()
	sliding := len(n.clients)
	n.mu.Unlock()
	if sliding == 0 { // the epoch matters only to sliding-window clients: no store call for it
		return errDoc
	}
	// One exchange a sync: the epoch read and the chunks it may need, reported as one
	// when the epoch read goes out, with the clients that have news.
	n.touches.Add(1)
	var ep string
	err := call(ctx, "exchange", func(ctx context.Context) error {
		if n.obs != nil {
			n.mu.Lock()
			news := len(n.dirty)
			n.mu.Unlock()
			n.obs.Exchanged(news)
		}
		var err error
		ep, err = n.store.Epoch(ctx)
		return err
	})
	if err != nil {
		return errors.Join(errDoc, fmt.Errorf("bounded sync: read the store's epoch: %w", err))
	}
	t := now.UnixMicro()
	n.reachedAt(t)
	n.mu.Lock()
	if n.epoch != "" && ep != n.epoch {
		for k, s := range n.clients {
			if s.storeAt != 0 && t-s.storeAt < s.bd.Window+s.bd.Sub && s.epoch != ep {
				s.repush, s.epoch = true, ep
				s.fullUntil = 0 // the store's counts are gone
				if !s.dirty {
					s.dirty = true
					n.dirty = append(n.dirty, k)
				}
			}
		}
	}
	n.epoch = ep
	dirty := n.dirty
	n.dirty = nil
	n.mu.Unlock()

	var errs []error
	for len(dirty) > 0 {
		chunk := dirty[:min(len(dirty), syncChunk)]
		dirty = dirty[len(chunk):]
		if err := n.syncChunk(ctx, now, chunk, call); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errDoc, errors.Join(errs...))
}

func (n *BoundedSync) syncChunk(ctx context.Context, now time.Time, keys []stateKey, call func(ctx context.Context, op string, f func(context.Context) error) error) error {
	t := now.UnixMicro()
	entries := make([]SettleEntry, 0, len(keys))
	states := make([]*bstate, 0, len(keys))
	for _, k := range keys {
		n.mu.Lock()
		s := n.clients[k]
		if s == nil || !s.dirty {
			n.mu.Unlock()
			continue
		}
		s.dirty = false
		if s.busy { // a decision's call is in flight, which carries the counts: next time
			n.markDirty(k, s)
			n.mu.Unlock()
			continue
		}
		e := SettleEntry{Client: k.client, Rule: s.rule, Bounds: s.bd, At: t}
		n.takePush(s, &e)
		if len(e.Push) > 0 {
			s.busy = true
			entries = append(entries, e)
			states = append(states, s)
		}
		n.mu.Unlock()
	}
	if len(entries) == 0 {
		return nil
	}
	n.touches.Add(1)
	err := call(ctx, "exchange", func(ctx context.Context) error { return n.store.Settle(ctx, now, entries) })
	failed := make([]bool, len(entries))
	var partial *PartialExchangeError
	switch {
	case errors.As(err, &partial):
		for _, i := range partial.Failed {
			failed[i] = true
		}
	case err != nil:
		for i := range failed {
			failed[i] = true
		}
	}
	nowNs := now.UnixNano()
	for i := range entries {
		s, e := states[i], &entries[i]
		k := stateKey{e.Client, e.Rule.Name}
		n.mu.Lock()
		if failed[i] || e.Reset {
			n.putBack(s, e)
			n.markDirty(k, s)
		} else {
			n.settled(s, e, nowNs)
		}
		more := len(s.queue) > 0 // decisions that arrived while the push was in flight
		s.busy = more
		n.mu.Unlock()
		if more {
			go n.decideQueued(context.WithoutCancel(ctx), k, s)
		}
	}
	if err != nil {
		return fmt.Errorf("bounded sync: push %d clients to the counter store: %w", len(entries), err)
	}
	return nil
}

// Flush pushes every count the node holds unpushed, those of clients within their budgets
// included, then syncs: a node that stops hands its counts to the store, so the node that
// replaces it, with a budget of its own, does not add to what the fleet let through unseen.
// Its store calls go straight to the store, around StoreCalls (the replica's breaker may
// still be open when the store is back): it is the last chance to deliver the counts.
func (n *BoundedSync) Flush(ctx context.Context, now time.Time) error {
	t := now.UnixMicro()
	n.mu.Lock()
	for k, s := range n.clients {
		if s.unpushed.count(s.bd.edge(t)) > 0 && !s.dirty {
			s.dirty = true
			n.dirty = append(n.dirty, k)
		}
	}
	n.mu.Unlock()
	return n.sync(ctx, now, func(ctx context.Context, _ string, f func(context.Context) error) error { return f(ctx) })
}

// Prune forgets clients that sent nothing for a window and have nothing in flight. It
// returns how many clients remain (both designs').
func (n *BoundedSync) Prune(now time.Time) int {
	docs := n.doc.Prune(now)
	n.mu.Lock()
	defer n.mu.Unlock()
	nowNs := now.UnixNano()
	for k, s := range n.clients {
		if !s.busy && !s.dirty && nowNs-s.seen > int64(s.rule.Window)+int64(s.bd.Sub)*1000 {
			delete(n.clients, k)
		}
	}
	return len(n.clients) + docs
}

// Clients is the number of clients this node tracks.
func (n *BoundedSync) Clients() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.clients) + n.doc.Clients()
}

// Touches is the number of store round trips of this node's syncs.
func (n *BoundedSync) Touches() int64 { return n.touches.Load() + n.doc.Touches() }

// Calls is the number of store calls this node made to decide (past a budget).
func (n *BoundedSync) Calls() int64 { return n.calls.Load() }

// subRing holds one client's counts by sub-slice with each sub-slice's newest arrival (µs):
// the non-empty sub-slices only, oldest first, so that a client far below its limit holds a
// few entries and one at its limit a few hundred; those older than a window go as new ones
// come.
type subRing struct {
	subs []SubCount
	// keep is how many sub-slices back from the newest one added an entry is kept.
	keep int64
}

func newSubRing(n int) subRing { return subRing{keep: int64(n)} }

// add adds c to sub-slice j, whose newest arrival is at least newest.
func (w *subRing) add(j, c, newest int64) {
	k := len(w.subs)
	for k > 0 && w.subs[k-1].Index > j {
		k--
	}
	if k > 0 && w.subs[k-1].Index == j {
		x := &w.subs[k-1]
		x.Count += c
		x.Newest = max(x.Newest, newest)
		return
	}
	if k < len(w.subs) && j <= w.subs[len(w.subs)-1].Index-w.keep {
		return // older than what the ring holds
	}
	w.subs = append(w.subs, SubCount{})
	copy(w.subs[k+1:], w.subs[k:])
	w.subs[k] = SubCount{Index: j, Count: c, Newest: newest}
	// Forget what left the window.
	drop := 0
	for drop < len(w.subs) && w.subs[drop].Index <= j-w.keep {
		drop++
	}
	if drop > 0 {
		w.subs = append(w.subs[:0], w.subs[drop:]...)
	}
}

// count is how many admissions the ring holds after edge.
func (w *subRing) count(edge int64) int64 {
	var n int64
	for _, x := range w.subs {
		if x.Newest > edge {
			n += x.Count
		}
	}
	return n
}

// at returns sub-slice j's count and newest arrival (0, 0 if it holds none).
func (w *subRing) at(j int64) (count, newest int64) {
	for _, x := range w.subs {
		if x.Index == j {
			return x.Count, x.Newest
		}
	}
	return 0, 0
}

// appendPush appends what a push taken at sub-slice d carries: the non-empty sub-slices
// among the n ending at d, or at the ring's newest when that is newer, oldest first. A
// call's time is its last request's arrival, and a request that arrived later in another
// sub-slice may have been admitted (within the budget) before that one took the lock: its
// count is pushed with the rest, not dropped with the ring's reset.
func (w *subRing) appendPush(dst []SubCount, d int64, n int) []SubCount {
	if k := len(w.subs); k > 0 {
		d = max(d, w.subs[k-1].Index)
	}
	for _, x := range w.subs {
		if x.Index > d-int64(n) && x.Index <= d && x.Count != 0 {
			dst = append(dst, x)
		}
	}
	return dst
}

func (w *subRing) reset() { w.subs = w.subs[:0] }

// oldest is the oldest admission the ring holds after edge.
func (w *subRing) oldest(edge int64) (SubCount, bool) {
	for _, x := range w.subs {
		if x.Count != 0 && x.Newest > edge {
			return x, true
		}
	}
	return SubCount{}, false
}

// until is the first instant (Unix µs) at which the ring's count after edge is under limit,
// with nothing added: an admission leaves it once it is a window old.
func (w *subRing) until(edge, limit int64, bd Bounds) int64 {
	n := w.count(edge)
	for _, x := range w.subs {
		if x.Count == 0 || x.Newest <= edge {
			continue
		}
		if n < limit {
			break
		}
		n -= x.Count
		if n < limit {
			return x.Newest + bd.Window
		}
	}
	return 0
}
