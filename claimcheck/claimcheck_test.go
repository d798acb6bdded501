package claimcheck

import (
	"context"
	"errors"
	"testing"
)

func TestMessageBytes(t *testing.T) {
	if a, c := MessageBytes(Attach), MessageBytes(Claim); a != 40220 || c != 284 {
		t.Errorf("message bytes = %d, %d; want 40220, 284", a, c)
	}
}

func TestEncodeDecode(t *testing.T) {
	p := NewProof(42)
	tests := []Message{
		{Event: Event{ID: 42}, Placement: Attach, Proof: p},
		{Event: Event{ID: 42}, Placement: Claim, Claim: ClaimCheck{Store: StoreName, Key: ProofKey(42), Digest: p.Digest}},
	}
	for _, m := range tests {
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != m.Size() {
			t.Errorf("%s: %d bytes encoded, Size says %d", m.Placement, len(b), m.Size())
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Event != m.Event || got.Placement != m.Placement || got.Claim != m.Claim || got.Proof.Digest != m.Proof.Digest {
			t.Errorf("%s: decoded %+v, want %+v", m.Placement, got.Claim, m.Claim)
		}
	}
	if _, err := Decode([]byte("not a message")); !errors.Is(err, ErrMalformed) {
		t.Errorf("Decode(garbage) = %v, want ErrMalformed", err)
	}
	if NewProof(1).Digest == NewProof(2).Digest || NewProof(1).Digest != NewProof(1).Digest {
		t.Error("proofs must be deterministic per event and differ between events")
	}
	if id, ok := ParseProofKey(ProofKey(123)); !ok || id != 123 || len(ProofKey(123)) != claimKeyLen {
		t.Errorf("ParseProofKey(ProofKey(123)) = %d, %v; key %q must be %d bytes", id, ok, ProofKey(123), claimKeyLen)
	}
}

type deadLetters struct{ dangling, corrupt int }

func (d *deadLetters) Dangling(context.Context, Message) error        { d.dangling++; return nil }
func (d *deadLetters) Corrupt(context.Context, Message, string) error { d.corrupt++; return nil }

// The two writes and their orders: payload before message; a crash between leaves an
// orphan; a consumer after an immediate delete finds a dangling claim unless the ledger
// already knows the event.
func TestProducerAndConsumerDecisions(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	q := &MemoryQueue{}
	prod := &Producer{Placement: Claim, Queue: q, Store: store}
	crash := func() bool { return true }
	if err := prod.Produce(ctx, Event{ID: 1}, NewProof(1), crash); !errors.Is(err, ErrCrashed) {
		t.Fatalf("crashing producer returned %v", err)
	}
	if store.Len() != 1 || q.Deliveries != 0 {
		t.Fatalf("after a crash between the writes: %d payloads, want the orphan only", store.Len())
	}
	if err := prod.Produce(ctx, Event{ID: 2}, NewProof(2), nil); err != nil {
		t.Fatal(err)
	}
	d, ok := q.Next()
	if !ok || d.Message.Claim.Key != ProofKey(2) {
		t.Fatalf("queue handed out %+v, %v", d, ok)
	}
	dl := &deadLetters{}
	noLedger := &Consumer{Placement: Claim, Deletion: Immediate, Store: store, DeadLetter: dl}
	o, err := noLedger.Handle(ctx, d, func(Delivery) bool { return true })
	if err != nil || o != Crashed {
		t.Fatalf("first delivery = %v, %v; want crashed", o, err)
	}
	d.Attempt++
	if o, _ := noLedger.Handle(ctx, d, nil); o != Dangling || dl.dangling != 1 {
		t.Errorf("redelivery after immediate delete, no ledger = %v; want dangling, dead-lettered", o)
	}
	// With a ledger the same redelivery is a duplicate: deduplication is the ledger's.
	store.Put(ctx, ProofKey(2), NewProof(2), 0)
	ledger := NewMemoryLedger()
	withLedger := &Consumer{Placement: Claim, Deletion: Immediate, Store: store, Ledger: ledger, DeadLetter: dl}
	d.Attempt = 0
	if o, _ := withLedger.Handle(ctx, d, nil); o != Processed {
		t.Fatalf("first delivery with a ledger = %v", o)
	}
	d.Attempt = 1
	if o, _ := withLedger.Handle(ctx, d, nil); o != Duplicate {
		t.Errorf("redelivery with a ledger = %v; want duplicate", o)
	}
	// A payload that is not the one the claim names is an error, not a dangling claim.
	store.Put(ctx, ProofKey(3), NewProof(4), 0)
	bad := Delivery{Message: Message{Event: Event{ID: 3}, Placement: Claim,
		Claim: ClaimCheck{Store: StoreName, Key: ProofKey(3), Digest: NewProof(3).Digest}}}
	if o, _ := withLedger.Handle(ctx, bad, nil); o != Corrupt || dl.corrupt != 1 {
		t.Errorf("wrong payload = %v; want corrupt", o)
	}
}

func TestParse(t *testing.T) {
	if _, err := ParsePlacement("inline"); err == nil {
		t.Error("unknown placement accepted")
	}
	if _, err := ParseDeletion("never"); err == nil {
		t.Error("unknown deletion accepted")
	}
	if p, _ := ParsePlacement("claim"); p != Claim {
		t.Error("claim not parsed")
	}
}
