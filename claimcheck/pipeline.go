package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Queue is where the producer appends messages. Delivery and acknowledgement belong to the
// queue's own consumer loop (the model's FIFO, a Redis consumer group), not to this
// interface.
type Queue interface {
	Append(ctx context.Context, m Message) error
}

// Store is the payload store of the claim placement.
type Store interface {
	// Put writes an event's proof under key; ttl 0 keeps it until it is deleted.
	Put(ctx context.Context, key string, p Proof, ttl time.Duration) error
	// Get returns the proof under key, with the digest of what the store returned, and
	// false when there is none.
	Get(ctx context.Context, key string) (Proof, bool, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Ledger is the idempotency record: the consumer's decision whether an event is a
// duplicate. It is kept apart from the payload store so that deduplication never depends
// on a deletion policy.
type Ledger interface {
	// Seen reports whether the event has been processed.
	Seen(ctx context.Context, id uint64) (bool, error)
	// Process applies the event's effect and records it in one step; false means it was
	// already recorded and nothing was applied.
	Process(ctx context.Context, id uint64) (bool, error)
}

// DeadLetter keeps the messages a consumer could not process, dangling claims apart from
// real errors.
type DeadLetter interface {
	// Dangling records a claim whose payload is not in the store.
	Dangling(ctx context.Context, m Message) error
	// Corrupt records a message whose payload does not match its digest.
	Corrupt(ctx context.Context, m Message, reason string) error
}

// ErrCrashed is a producer or consumer that crashed at its injected point. The model
// carries on; a real process exits.
var ErrCrashed = errors.New("crashed at the injected point")

// Producer writes events. Claim placement is two writes with no transaction between them:
// the payload first, then the message; a crash between them leaves an orphan payload.
// With the proof attached there is one write and the same crash loses the event.
type Producer struct {
	Placement Placement
	Queue     Queue
	Store     Store         // claim placement only
	TTL       time.Duration // time-to-live of a payload under the TTL policy; 0 keeps it
}

// Produce writes one event. crash is asked once, at the point between the two writes
// (before the single write of the attach placement); when it says true Produce stops
// there and returns ErrCrashed. The event is acknowledged to its sender only when
// Produce returns nil.
func (p *Producer) Produce(ctx context.Context, e Event, proof Proof, crash func() bool) error {
	m := Message{Event: e, Placement: p.Placement}
	switch p.Placement {
	case Attach:
		m.Proof = proof
	case Claim:
		key := ProofKey(e.ID)
		if err := p.Store.Put(ctx, key, proof, p.TTL); err != nil {
			return fmt.Errorf("event %d: write the payload: %w", e.ID, err)
		}
		m.Claim = ClaimCheck{Store: StoreName, Key: key, Digest: proof.Digest}
	default:
		return fmt.Errorf("unknown placement %q: use attach or claim", p.Placement)
	}
	if crash != nil && crash() {
		return ErrCrashed
	}
	if err := p.Queue.Append(ctx, m); err != nil {
		return fmt.Errorf("event %d: append the message: %w", e.ID, err)
	}
	return nil
}

// Outcome is what a consumer made of one delivery.
type Outcome int

// Outcomes of Consumer.Handle. Every outcome but Crashed is acknowledged by the caller.
const (
	Processed Outcome = iota // the effect was applied
	Duplicate                // the ledger had the event: nothing applied
	Dangling                 // the claim's payload is gone: dead-lettered
	Corrupt                  // the payload does not match the claim's digest: dead-lettered as an error
	Crashed                  // processed, then crashed before the ack: the queue redelivers it
)

var outcomeNames = [...]string{"processed", "duplicate", "dangling", "corrupt", "crashed"}

// String names the outcome.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Delivery is one delivery of a message; Attempt 0 is the first.
type Delivery struct {
	Message Message
	Attempt int
}

// Consumer processes deliveries.
type Consumer struct {
	Placement Placement
	Deletion  Deletion
	Store     Store // claim placement only
	// Ledger decides duplicates; nil is the document's model, where nothing does and a
	// redelivered event is processed again unless its payload is gone.
	Ledger     Ledger
	DeadLetter DeadLetter // nil drops dead letters (the model counts them only)
}

// Handle processes one delivery: the ledger's verdict first, then the payload fetched by
// its claim and checked against its digest, then the effect, then the deletion of the
// payload under the immediate policy. crash is asked once after all that, before the ack
// (the document's model draws its generator there for every processed delivery); true
// gives Crashed, and the caller must not acknowledge.
func (c *Consumer) Handle(ctx context.Context, d Delivery, crash func(Delivery) bool) (Outcome, error) {
	m := d.Message
	if m.Placement != c.Placement {
		return 0, fmt.Errorf("event %d: a %s message on a %s pipeline", m.Event.ID, m.Placement, c.Placement)
	}
	if c.Ledger != nil {
		seen, err := c.Ledger.Seen(ctx, m.Event.ID)
		if err != nil {
			return 0, fmt.Errorf("event %d: ask the ledger: %w", m.Event.ID, err)
		}
		if seen {
			return Duplicate, c.deletePayload(ctx, m)
		}
	}
	if m.Placement == Claim {
		p, ok, err := c.Store.Get(ctx, m.Claim.Key)
		if err != nil {
			return 0, fmt.Errorf("event %d: fetch the payload %s: %w", m.Event.ID, m.Claim.Key, err)
		}
		if !ok {
			if c.DeadLetter != nil {
				if err := c.DeadLetter.Dangling(ctx, m); err != nil {
					return 0, err
				}
			}
			return Dangling, nil
		}
		if p.Digest != m.Claim.Digest {
			if c.DeadLetter != nil {
				if err := c.DeadLetter.Corrupt(ctx, m, "payload digest does not match the claim"); err != nil {
					return 0, err
				}
			}
			return Corrupt, nil
		}
	}
	if c.Ledger != nil {
		first, err := c.Ledger.Process(ctx, m.Event.ID)
		if err != nil {
			return 0, fmt.Errorf("event %d: process: %w", m.Event.ID, err)
		}
		if !first {
			return Duplicate, c.deletePayload(ctx, m)
		}
	}
	if err := c.deletePayload(ctx, m); err != nil {
		return 0, err
	}
	if crash != nil && crash(d) {
		return Crashed, nil
	}
	return Processed, nil
}

// deletePayload applies the immediate policy; under TTL the store forgets by itself.
func (c *Consumer) deletePayload(ctx context.Context, m Message) error {
	if m.Placement != Claim || c.Deletion != Immediate {
		return nil
	}
	if err := c.Store.Delete(ctx, m.Claim.Key); err != nil {
		return fmt.Errorf("event %d: delete the payload: %w", m.Event.ID, err)
	}
	return nil
}
