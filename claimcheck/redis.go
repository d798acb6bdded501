package claimcheck

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis layout of the real pipeline. One Redis holds the queue (a stream and its consumer
// group), the payload store (one key per proof), the ledger and the dead letters; a run
// owns the whole database.
const (
	StreamKey     = "cc:events"           // the queue: one entry per message, field MessageField
	MessageField  = "m"                   // the entry's only field: the encoded message
	GroupName     = "cc:consumers"        // the consumer group
	DeadKey       = "cc:dead"             // dead-letter stream: dangling claims
	ErrorsKey     = "cc:errors"           // error stream: corrupt payloads, malformed messages
	LedgerKey     = "cc:ledger"           // idempotency record: event ID -> unix ms first processed
	EffectKey     = "cc:processed"        // the processing's effect: event ID -> times applied
	StatsKey      = "cc:stats"            // counters the consumers keep: deliveries, queue bytes, outcomes
	ProducerPlan  = "cc:plan:producer"    // bitmap: bit i set = the producer crashes on event i
	ConsumerPlan  = "cc:plan:consumer"    // bitmap: bit i set = a consumer crashes on event i's first delivery
	ProducerCrash = "cc:crashes:producer" // set of event IDs the producer crashed on
	ConsumerCrash = "cc:crashes:consumer" // set of event IDs a consumer crashed on
	ProofPattern  = keyPrefix + "*"       // SCAN pattern of the payload store
	statsMessages = "deliveries"          // StatsKey field: messages handed to a consumer
	statsBytes    = "queue_bytes"         // StatsKey field: bytes of those messages
	statsRedeliv  = "redeliveries"        // StatsKey field: deliveries reclaimed after a crash
	deadReasonKey = "reason"              // dead-letter entry field
	deadEventKey  = "event"               // dead-letter entry field
	deadClaimKey  = "claim"               // dead-letter entry field: the claim's key
	busyGroup     = "BUSYGROUP"           // XGROUP CREATE's answer for an existing group
	statsOutcome  = "outcome_"            // StatsKey field prefix: outcome_processed, …
)

// Stats field names the consumers count under StatsKey.
const (
	StatDeliveries   = statsMessages
	StatQueueBytes   = statsBytes
	StatRedeliveries = statsRedeliv
)

// StatOutcome is the StatsKey field that counts an outcome.
func StatOutcome(o Outcome) string { return statsOutcome + o.String() }

// RedisQueue appends messages to the stream.
type RedisQueue struct{ rdb redis.UniversalClient }

// NewRedisQueue returns the queue over rdb.
func NewRedisQueue(rdb redis.UniversalClient) *RedisQueue { return &RedisQueue{rdb: rdb} }

// Append implements Queue: XADD with the encoded message as the entry's only field.
func (q *RedisQueue) Append(ctx context.Context, m Message) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return q.rdb.XAdd(ctx, &redis.XAddArgs{Stream: StreamKey, Values: []any{MessageField, b}}).Err()
}

// CreateGroup creates the consumer group (and the stream) reading from the start; an
// existing group is left as it is.
func CreateGroup(ctx context.Context, rdb redis.UniversalClient) error {
	err := rdb.XGroupCreateMkStream(ctx, StreamKey, GroupName, "0").Err()
	if err != nil && strings.HasPrefix(err.Error(), busyGroup) {
		return nil
	}
	return err
}

// RedisStore is the payload store: one Redis string per proof.
type RedisStore struct{ rdb redis.UniversalClient }

// NewRedisStore returns the store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

// Put implements Store: SET with PX ttl.
func (s *RedisStore) Put(ctx context.Context, key string, p Proof, ttl time.Duration) error {
	return s.rdb.Set(ctx, key, p.Bytes, ttl).Err()
}

// Get implements Store; the digest is computed over the bytes Redis returned.
func (s *RedisStore) Get(ctx context.Context, key string) (Proof, bool, error) {
	b, err := s.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return Proof{}, false, nil
	}
	if err != nil {
		return Proof{}, false, err
	}
	return ProofOf(b), true, nil
}

// Delete implements Store.
func (s *RedisStore) Delete(ctx context.Context, key string) error {
	return s.rdb.Del(ctx, key).Err()
}

// RedisLedger is the idempotency record in Redis. Process applies the effect (one more
// under EffectKey) and records the event under LedgerKey in one script, so a consumer
// that dies after it has either done both or neither.
type RedisLedger struct {
	rdb redis.UniversalClient
	now func() time.Time
}

// NewRedisLedger returns the ledger over rdb.
func NewRedisLedger(rdb redis.UniversalClient) *RedisLedger {
	return &RedisLedger{rdb: rdb, now: time.Now}
}

var processScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  return 1
end
return 0`)

// Seen implements Ledger.
func (l *RedisLedger) Seen(ctx context.Context, id uint64) (bool, error) {
	return l.rdb.HExists(ctx, LedgerKey, strconv.FormatUint(id, 10)).Result()
}

// Process implements Ledger.
func (l *RedisLedger) Process(ctx context.Context, id uint64) (bool, error) {
	n, err := processScript.Run(ctx, l.rdb, []string{LedgerKey, EffectKey},
		strconv.FormatUint(id, 10), l.now().UnixMilli()).Int()
	return n == 1, err
}

// RedisDeadLetter writes dangling claims to DeadKey and real errors to ErrorsKey.
type RedisDeadLetter struct{ rdb redis.UniversalClient }

// NewRedisDeadLetter returns the dead letters over rdb.
func NewRedisDeadLetter(rdb redis.UniversalClient) *RedisDeadLetter {
	return &RedisDeadLetter{rdb: rdb}
}

// Dangling implements DeadLetter.
func (d *RedisDeadLetter) Dangling(ctx context.Context, m Message) error {
	return d.rdb.XAdd(ctx, &redis.XAddArgs{Stream: DeadKey, Values: []any{
		deadEventKey, m.Event.ID, deadClaimKey, m.Claim.Key, deadReasonKey, "payload not in the store"}}).Err()
}

// Corrupt implements DeadLetter.
func (d *RedisDeadLetter) Corrupt(ctx context.Context, m Message, reason string) error {
	return d.rdb.XAdd(ctx, &redis.XAddArgs{Stream: ErrorsKey, Values: []any{
		deadEventKey, m.Event.ID, deadClaimKey, m.Claim.Key, deadReasonKey, reason}}).Err()
}

// Malformed records a stream entry that is not a message of this pipeline.
func (d *RedisDeadLetter) Malformed(ctx context.Context, entryID string, err error) error {
	return d.rdb.XAdd(ctx, &redis.XAddArgs{Stream: ErrorsKey, Values: []any{
		"entry", entryID, deadReasonKey, err.Error()}}).Err()
}

// Plan is a crash plan read from Redis: bit i of a bitmap says whether to crash on event i.
type Plan []byte

// LoadPlan reads a plan bitmap; a missing key is a plan without crashes.
func LoadPlan(ctx context.Context, rdb redis.UniversalClient, key string) (Plan, error) {
	b, err := rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return Plan(b), err
}

// Crash reports whether the plan crashes on event id (Redis bitmap order: bit 0 is the
// high bit of byte 0).
func (p Plan) Crash(id uint64) bool {
	i := id / 8
	if i >= uint64(len(p)) {
		return false
	}
	return p[i]&(0x80>>(id%8)) != 0
}

// EncodePlan builds the bitmap of a plan from one bool per event.
func EncodePlan(crash []bool) []byte {
	b := make([]byte, (len(crash)+7)/8)
	for i, c := range crash {
		if c {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	return b
}
