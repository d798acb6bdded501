package limiters

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"
)

// boundedMemory is MemoryStore's side for BoundedSync: per client, the log of its
// admissions' decision times, its store clock and the nodes' push marks, as the Redis script
// keeps them.
type boundedMemory struct {
	mu      sync.Mutex
	epoch   int
	clients map[stateKey]*boundedHash
}

type boundedHash struct {
	log   []int64 // decision times (Unix µs), ascending
	clock int64   // the newest decision time (Unix µs; 0: none yet)
	marks map[string]PushMark
}

// Settle implements BoundedStore: what the Redis script does, under one lock.
func (m *MemoryStore) Settle(_ context.Context, now time.Time, entries []SettleEntry) error {
	m.touches.Add(1)
	b := &m.bounded
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clients == nil {
		b.clients = make(map[stateKey]*boundedHash)
	}
	for i := range entries {
		e := &entries[i]
		k := stateKey{e.Client, e.Rule.Name}
		h := b.clients[k]
		if h == nil {
			h = &boundedHash{marks: map[string]PushMark{}}
			b.clients[k] = h
		}
		settleHash(h, e)
	}
	return nil
}

// settleHash is one entry of a Settle on one client's log: what the Redis script does
// (luaSettle).
func settleHash(h *boundedHash, e *SettleEntry) {
	e.Allowed, e.DecidedAt, e.Reset = make([]bool, len(e.Decide)), make([]int64, len(e.Decide)), false
	e.Count, e.Clock, e.FullUntil, e.ResetAt = 0, 0, 0, 0
	bd := e.Bounds
	skip, mark, marked, stale, call := int64(0), int64(0), false, false, e.Mark.Call
	if mk := e.Mark; mk.Node != "" && (mk.Total > mk.Base || len(e.Decide) > 0) {
		have, ok := h.marks[mk.Node]
		adopt := ok && have.Inc != mk.Inc && mk.Repush
		if adopt { // the store holds have.Total of the node's counts already (PushMark.Repush)
			have = PushMark{Inc: mk.Inc, Total: have.Total, Call: mk.Call}
		}
		if !ok || have.Inc != mk.Inc {
			if mk.Base > 0 {
				e.Reset = true
				return
			}
			have = PushMark{Inc: mk.Inc}
		}
		skip = min(max(have.Total-mk.Base, 0), mk.Total-mk.Base)
		mark, marked = max(have.Total, mk.Total), true
		if adopt {
			mark = mk.Total
		}
		// A later call of this node has landed before this one: the node gave up on this
		// call at its timeout and decided its requests alone, so the store admits none.
		stale, call = have.Call > mk.Call, max(have.Call, mk.Call)
	}
	trim := func(edge int64) { // what no decision from now on counts: at or before edge
		k, _ := slices.BinarySearch(h.log, edge+1)
		h.log = append(h.log[:0], h.log[k:]...)
	}
	add := func(t int64, c int64) {
		k, _ := slices.BinarySearch(h.log, t+1)
		h.log = slices.Insert(h.log, k, slices.Repeat([]int64{t}, int(c))...)
	}
	trim(bd.edge(h.clock))
	for _, c := range e.Push {
		sk := min(skip, c.Count)
		n := c.Count - sk
		skip -= sk
		if n > 0 && c.Newest > bd.edge(h.clock) { // else out of every count from now on
			add(c.Newest, n)
		}
	}
	var admitted int64
	for i, ti := range e.Decide {
		h.clock = max(h.clock, ti)
		e.DecidedAt[i] = h.clock
		trim(bd.edge(h.clock))
		if !stale && int64(len(h.log)) < bd.Limit {
			add(h.clock, 1)
			e.Allowed[i] = true
			admitted++
		}
	}
	if marked {
		h.marks[e.Mark.Node] = PushMark{Inc: e.Mark.Inc, Total: mark + admitted, Call: call}
	}
	e.Count, e.Clock = int64(len(h.log)), h.clock
	if len(h.log) > 0 {
		e.ResetAt = h.log[0] + bd.Window
	}
	if e.Count >= bd.Limit {
		e.FullUntil = h.log[e.Count-bd.Limit] + bd.Window
	}
}

// Epoch implements BoundedStore.
func (m *MemoryStore) Epoch(context.Context) (string, error) {
	m.bounded.mu.Lock()
	defer m.bounded.mu.Unlock()
	return strconv.Itoa(m.bounded.epoch), nil
}

// Forget empties the bounded side of the store and starts a new epoch: a store that
// restarted without persistence, for tests.
func (m *MemoryStore) Forget() {
	m.bounded.mu.Lock()
	defer m.bounded.mu.Unlock()
	m.bounded.clients = nil
	m.bounded.epoch++
}
