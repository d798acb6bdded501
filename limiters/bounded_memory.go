package limiters

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// boundedMemory is MemoryStore's side for BoundedSync: per client, sub-slice counts with
// their newest arrival and the nodes' push marks, as the Redis script keeps them.
type boundedMemory struct {
	mu      sync.Mutex
	epoch   int
	clients map[stateKey]*boundedHash
}

type boundedHash struct {
	subs  map[int64]*SubCount
	marks map[string]PushMark // node → its mark (Inc, Total)
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
			h = &boundedHash{subs: map[int64]*SubCount{}, marks: map[string]PushMark{}}
			b.clients[k] = h
		}
		settleHash(h, e, now.UnixMicro())
	}
	return nil
}

// settleHash is one entry of a Settle on one client's hash.
func settleHash(h *boundedHash, e *SettleEntry, nowUs int64) {
	e.Allowed, e.Reset, e.View = false, false, e.View[:0]
	skip := int64(0)
	if mk := e.Mark; mk.Node != "" && mk.Total > mk.Base {
		have, ok := h.marks[mk.Node]
		if !ok || have.Inc != mk.Inc {
			if mk.Base > 0 {
				e.Reset = true
				return
			}
			have = PushMark{Inc: mk.Inc}
		}
		skip = min(max(have.Total-mk.Base, 0), mk.Total-mk.Base)
		h.marks[mk.Node] = PushMark{Inc: mk.Inc, Total: max(have.Total, mk.Total)}
	}
	for _, c := range e.Push {
		s := min(skip, c.Count)
		n := c.Count - s
		skip -= s
		x := h.subs[c.Index]
		if x == nil {
			x = &SubCount{Index: c.Index}
			h.subs[c.Index] = x
		}
		x.Count += n
		x.Newest = max(x.Newest, c.Newest)
	}
	bd := e.Bounds
	t := nowUs
	if e.Decide {
		t = e.At
	}
	edge := bd.edge(t)
	var lenient, strict int64
	for j, x := range h.subs {
		if x.Newest <= edge && (j+1)*bd.Sub <= edge {
			delete(h.subs, j)
			continue
		}
		if j*bd.Sub > edge {
			lenient += x.Count
		}
		if x.Newest > edge {
			strict += x.Count
		}
	}
	if e.Decide && lenient < bd.Limit && strict < bd.Cap {
		e.Allowed = true
		d := floorDiv(e.At, bd.Sub)
		x := h.subs[d]
		if x == nil {
			x = &SubCount{Index: d}
			h.subs[d] = x
		}
		x.Count++
		x.Newest = max(x.Newest, e.At)
	}
	for _, x := range h.subs {
		if x.Count != 0 {
			e.View = append(e.View, *x)
		}
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
