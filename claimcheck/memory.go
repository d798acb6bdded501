package claimcheck

import (
	"context"
	"time"
)

// MemoryQueue is the document's queue (kuyruk.mjs): a FIFO array. A message whose
// consumer crashed before the ack goes to the back, as an expired visibility timeout
// would hand it out again after everything already waiting. It counts every delivery and
// the bytes each one carries.
type MemoryQueue struct {
	pending    []Delivery
	head       int
	Deliveries int   // messages handed out, redeliveries included
	Bytes      int64 // bytes carried by those deliveries
}

// Append implements Queue.
func (q *MemoryQueue) Append(_ context.Context, m Message) error {
	q.pending = append(q.pending, Delivery{Message: m})
	return nil
}

// Next hands out the oldest message, false when the queue is empty.
func (q *MemoryQueue) Next() (Delivery, bool) {
	if q.head == len(q.pending) {
		return Delivery{}, false
	}
	d := q.pending[q.head]
	q.pending[q.head] = Delivery{}
	q.head++
	q.Deliveries++
	q.Bytes += int64(d.Message.Size())
	return d, true
}

// Redeliver puts an unacknowledged delivery at the back, one attempt later.
func (q *MemoryQueue) Redeliver(d Delivery) {
	d.Attempt++
	q.pending = append(q.pending, d)
}

// MemoryStore is the document's payload store: a set of keys with each proof's digest.
// It never expires anything; the model's runs are shorter than any TTL (DD11).
type MemoryStore struct {
	m map[string][digestLen]byte
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string][digestLen]byte{}} }

// Put implements Store.
func (s *MemoryStore) Put(_ context.Context, key string, p Proof, _ time.Duration) error {
	s.m[key] = p.Digest
	return nil
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, key string) (Proof, bool, error) {
	d, ok := s.m[key]
	return Proof{Digest: d}, ok, nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	delete(s.m, key)
	return nil
}

// Len is the number of payloads in the store.
func (s *MemoryStore) Len() int { return len(s.m) }

// Keys calls f for every key in the store.
func (s *MemoryStore) Keys(f func(key string)) {
	for k := range s.m {
		f(k)
	}
}

// MemoryLedger is an idempotency record in memory, for the model's prediction of the
// real pipeline.
type MemoryLedger struct{ seen map[uint64]bool }

// NewMemoryLedger returns an empty ledger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{seen: map[uint64]bool{}} }

// Seen implements Ledger.
func (l *MemoryLedger) Seen(_ context.Context, id uint64) (bool, error) { return l.seen[id], nil }

// Process implements Ledger.
func (l *MemoryLedger) Process(_ context.Context, id uint64) (bool, error) {
	if l.seen[id] {
		return false, nil
	}
	l.seen[id] = true
	return true, nil
}
