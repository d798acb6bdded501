// Package claimcheck is the claim-check pipeline of document 004: a delivery event that
// carries a 40,000-byte proof either with the proof attached to the queue message or with
// the proof moved into a payload store and a 64-byte claim in the message.
//
// The producer and consumer here make every decision of the pipeline (what is written
// where and in which order, when a claim dangles, when an event is a duplicate, when a
// payload is deleted) against small interfaces: a Queue, a Store, a Ledger and a
// DeadLetter. The document's model runs them on an in-memory queue and set (memory.go);
// the real pipeline runs the same code on Redis Streams and Redis keys (redis.go).
//
// The package imports nothing of ours.
package claimcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The document's sizes (004), in one place.
const (
	EventBytes = 220    // K01 V6: the delivery status event
	ProofBytes = 40_000 // DD8: the delivery proof (a compressed signature image)
	ClaimBytes = 64     // DD9: the claim-check record: store, key, digest
)

// DD10: the fault window's crash probabilities, and DD11: the proof's time-to-live.
const (
	ProducerCrashP = 0.005               // DD10: producer crashes between the two writes
	ConsumerCrashP = 0.01                // DD10: consumer crashes after processing, before ack
	ProofTTL       = 7 * 24 * time.Hour  // DD11
	StoreName      = "proofs"            // the store a claim names
	claimStoreLen  = 8                   // bytes of the store name in a claim
	claimKeyLen    = 24                  // bytes of the key in a claim
	digestLen      = sha256.Size         // bytes of the digest in a claim
	keyPrefix      = "cc:proof:"         // payload keys: cc:proof:<15-digit event id>
	recordMagic    = "claimcheck-event " // first bytes of every event record
)

// Placement says where the proof travels.
type Placement string

// Placements, as olc.mjs names them: ilistir (attach) and fis (claim).
const (
	Attach Placement = "attach" // the proof rides inside the queue message
	Claim  Placement = "claim"  // the proof is in the store, the message carries a claim
)

// Deletion says who removes a payload from the store.
type Deletion string

// Deletion policies, as olc.mjs names them: hemen (immediate) and sure (TTL).
const (
	Immediate Deletion = "immediate" // the consumer deletes the payload once it has processed it
	TTL       Deletion = "ttl"       // the store's time-to-live removes it (DD11)
)

// ParsePlacement reads a placement from a flag.
func ParsePlacement(s string) (Placement, error) {
	switch p := Placement(s); p {
	case Attach, Claim:
		return p, nil
	}
	return "", fmt.Errorf("placement %q: use attach or claim", s)
}

// ParseDeletion reads a deletion policy from a flag.
func ParseDeletion(s string) (Deletion, error) {
	switch d := Deletion(s); d {
	case Immediate, TTL:
		return d, nil
	}
	return "", fmt.Errorf("deletion %q: use immediate or ttl", s)
}

// MessageBytes is the size of one queue message under a placement: the event plus the
// proof (40220) or plus the claim (284). Every delivery carries the whole message again.
func MessageBytes(p Placement) int {
	if p == Attach {
		return EventBytes + ProofBytes
	}
	return EventBytes + ClaimBytes
}

// Event is one delivery event; ID numbers it within a run.
type Event struct {
	ID uint64
}

// ProofKey is the store key of an event's proof.
func ProofKey(id uint64) string { return fmt.Sprintf("%s%015d", keyPrefix, id) }

// ParseProofKey returns the event ID of a store key made by ProofKey.
func ParseProofKey(key string) (uint64, bool) {
	if len(key) != len(keyPrefix)+15 || key[:len(keyPrefix)] != keyPrefix {
		return 0, false
	}
	id, err := strconv.ParseUint(key[len(keyPrefix):], 10, 64)
	return id, err == nil
}

// Proof is a delivery proof as the pipeline handles it: its bytes, where they exist, and
// the SHA-256 digest of those bytes. The model keeps digests only (100,000 proofs of
// 40 kB would be 4 GB); a real store computes the digest of what it read.
type Proof struct {
	Bytes  []byte
	Digest [digestLen]byte
}

// NewProof is event id's proof: ProofBytes deterministic bytes, so that anyone holding the
// event ID can check a proof end to end.
func NewProof(id uint64) Proof {
	b := make([]byte, ProofBytes)
	x := id*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	for i := 0; i < len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return Proof{Bytes: b, Digest: sha256.Sum256(b)}
}

// ProofOf is the Proof of bytes read from a store or a message.
func ProofOf(b []byte) Proof { return Proof{Bytes: b, Digest: sha256.Sum256(b)} }

// ClaimCheck is the DD9 record a claim-placed message carries instead of the proof.
type ClaimCheck struct {
	Store  string
	Key    string
	Digest [digestLen]byte
}

// Message is one queue message: the event and either the proof or a claim.
type Message struct {
	Event     Event
	Placement Placement
	Proof     Proof      // Attach
	Claim     ClaimCheck // Claim
}

// Size is the message's size on the queue.
func (m Message) Size() int { return MessageBytes(m.Placement) }

// Encode writes the message as the bytes a queue entry carries: the 220-byte event
// record, then the 40,000-byte proof or the 64-byte claim.
func (m Message) Encode() ([]byte, error) {
	out := make([]byte, 0, m.Size())
	out = append(out, eventRecord(m.Event, m.Placement)...)
	switch m.Placement {
	case Attach:
		if len(m.Proof.Bytes) != ProofBytes {
			return nil, fmt.Errorf("event %d: an attached proof must be %d bytes (got %d)", m.Event.ID, ProofBytes, len(m.Proof.Bytes))
		}
		out = append(out, m.Proof.Bytes...)
	case Claim:
		c := m.Claim
		if len(c.Store) > claimStoreLen || len(c.Key) > claimKeyLen {
			return nil, fmt.Errorf("event %d: claim store %q or key %q too long for a %d-byte claim", m.Event.ID, c.Store, c.Key, ClaimBytes)
		}
		out = append(out, pad(c.Store, claimStoreLen)...)
		out = append(out, pad(c.Key, claimKeyLen)...)
		out = append(out, c.Digest[:]...)
	default:
		return nil, fmt.Errorf("event %d: unknown placement %q", m.Event.ID, m.Placement)
	}
	return out, nil
}

// ErrMalformed is a queue entry that is not a message of this pipeline.
var ErrMalformed = errors.New("malformed claim-check message")

// Decode reads a message written by Encode; an attached proof's digest is computed here.
func Decode(b []byte) (Message, error) {
	if len(b) < EventBytes || string(b[:len(recordMagic)]) != recordMagic {
		return Message{}, fmt.Errorf("%w: %d bytes without an event record", ErrMalformed, len(b))
	}
	id, err := strconv.ParseUint(string(b[len(recordMagic):len(recordMagic)+15]), 10, 64)
	if err != nil {
		return Message{}, fmt.Errorf("%w: event id: %v", ErrMalformed, err)
	}
	m := Message{Event: Event{ID: id}}
	switch rest := b[EventBytes:]; len(rest) {
	case ProofBytes:
		m.Placement, m.Proof = Attach, ProofOf(rest)
	case ClaimBytes:
		m.Placement = Claim
		m.Claim.Store = unpad(rest[:claimStoreLen])
		m.Claim.Key = unpad(rest[claimStoreLen : claimStoreLen+claimKeyLen])
		copy(m.Claim.Digest[:], rest[claimStoreLen+claimKeyLen:])
	default:
		return Message{}, fmt.Errorf("%w: %d bytes after the event record (want %d or %d)", ErrMalformed, len(rest), ProofBytes, ClaimBytes)
	}
	return m, nil
}

// eventRecord is the K01 V6 status event, EventBytes long.
func eventRecord(e Event, p Placement) []byte {
	s := fmt.Sprintf("%s%015d shipment=SHP%012d status=DELIVERED placement=%s", recordMagic, e.ID, e.ID, p)
	return pad(s, EventBytes)
}

func pad(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	for i := len(s); i < n; i++ {
		b[i] = ' '
	}
	return b
}

func unpad(b []byte) string {
	end := len(b)
	for end > 0 && b[end-1] == ' ' {
		end--
	}
	return string(b[:end])
}
