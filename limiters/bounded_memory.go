package limiters

import (
	"context"
	"slices"
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

// settleHash is one entry of a Settle on one client's hash: what the Redis script does
// (luaSettle), on every sub-slice at once instead of its moving pointer.
func settleHash(h *boundedHash, e *SettleEntry, nowUs int64) {
	e.Allowed, e.Reset = make([]bool, len(e.Decide)), false
	e.Lenient, e.Strict, e.FullUntil, e.ResetAt = 0, 0, 0, 0
	bd := e.Bounds
	at := e.At
	if at == 0 {
		at = nowUs
	}
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
	advance := func(edge int64) {
		for j, x := range h.subs {
			if j < floorDiv(edge, bd.Sub) || x.Newest <= edge {
				delete(h.subs, j)
			}
		}
	}
	counts := func(edge int64) (lenient, strict int64) {
		for j, x := range h.subs {
			strict += x.Count
			if j*bd.Sub > edge {
				lenient += x.Count
			}
		}
		return lenient, strict
	}
	add := func(j, c, newest int64) {
		x := h.subs[j]
		if x == nil {
			x = &SubCount{Index: j}
			h.subs[j] = x
		}
		x.Count += c
		x.Newest = max(x.Newest, newest)
	}
	t0 := at
	if len(e.Decide) > 0 {
		t0 = e.Decide[0]
	}
	edge := bd.edge(t0)
	advance(edge)
	for _, c := range e.Push {
		s := min(skip, c.Count)
		n := c.Count - s
		skip -= s
		if n > 0 && c.Index >= floorDiv(edge, bd.Sub) && c.Newest > edge { // else out of both counts already
			add(c.Index, n, c.Newest)
		}
	}
	var admitted int64
	for i, ti := range e.Decide {
		advance(bd.edge(ti))
		if lenient, strict := counts(bd.edge(ti)); !stale && lenient < bd.Limit && strict < bd.Cap {
			add(floorDiv(ti, bd.Sub), 1, ti)
			e.Allowed[i] = true
			admitted++
		}
	}
	if marked {
		h.marks[e.Mark.Node] = PushMark{Inc: e.Mark.Inc, Total: mark + admitted, Call: call}
	}
	edge = bd.edge(at)
	advance(edge)
	lenient, strict := counts(edge)
	e.Lenient, e.Strict = lenient, strict
	idx := make([]int64, 0, len(h.subs))
	for j := range h.subs {
		idx = append(idx, j)
	}
	slices.Sort(idx)
	if len(idx) > 0 {
		e.ResetAt = h.subs[idx[0]].Newest + bd.Window - bd.Margin
	}
	e.FullUntil = fullUntil(idx, func(j int64) (int64, int64) { return h.subs[j].Count, h.subs[j].Newest }, lenient, strict, bd)
}

// fullUntil is when a client whose counts are lenient and strict is under both bounds again
// with nothing added (0: it is now): the lenient count loses a sub-slice once its start is
// a window (less the margin) old, the strict one once its newest request is. idx are the
// client's sub-slices, oldest first; at gives each one's count and newest arrival.
func fullUntil(idx []int64, at func(int64) (count, newest int64), lenient, strict int64, bd Bounds) int64 {
	if lenient < bd.Limit && strict < bd.Cap {
		return 0
	}
	var tl, tc int64
	total := strict // every sub-slice held is in the strict count
	for _, j := range idx {
		c, nw := at(j)
		total -= c
		if tl == 0 && lenient >= bd.Limit && total < bd.Limit {
			tl = j*bd.Sub + bd.Window - bd.Margin
		}
		if tc == 0 && strict >= bd.Cap && total < bd.Cap {
			tc = nw + bd.Window - bd.Margin
		}
		if (tl != 0 || lenient < bd.Limit) && (tc != 0 || strict < bd.Cap) {
			break
		}
	}
	return max(tl, tc)
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
