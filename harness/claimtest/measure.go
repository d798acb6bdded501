package claimtest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/result"
)

// measure reads every figure from Redis: the stream and its group, the consumers'
// counters, the payload store scanned against the stream (orphans), the dead-letter and
// error streams, the effects and the fault logs.
func measure(ctx context.Context, rdb *redis.Client, cfg Config, m *result.ClaimMeasured) error {
	inStream := map[uint64]bool{}
	start := "-"
	for {
		xs, err := rdb.XRangeN(ctx, cc.StreamKey, start, "+", 200).Result()
		if err != nil {
			return fmt.Errorf("read the stream: %w", err)
		}
		for _, x := range xs {
			raw, _ := x.Values[cc.MessageField].(string)
			m.StreamEntries++
			m.EntryBytes += int64(len(raw))
			if msg, err := cc.Decode([]byte(raw)); err == nil {
				inStream[msg.Event.ID] = true
			}
		}
		if len(xs) < 200 {
			break
		}
		start = "(" + xs[len(xs)-1].ID
	}
	stats, err := rdb.HGetAll(ctx, cc.StatsKey).Result()
	if err != nil {
		return fmt.Errorf("read the consumers' counters: %w", err)
	}
	atoi := func(k string) int64 { n, _ := strconv.ParseInt(stats[k], 10, 64); return n }
	m.Deliveries = int(atoi(cc.StatDeliveries))
	m.Redeliveries = int(atoi(cc.StatRedeliveries))
	m.QueueBytes = atoi(cc.StatQueueBytes)
	m.Duplicates = int(atoi(cc.StatOutcome(cc.Duplicate)))

	var keys []string
	iter := rdb.Scan(ctx, 0, cc.ProofPattern, 500).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan the payload store: %w", err)
	}
	inStore := map[uint64]bool{}
	if len(keys) > 0 {
		pipe := rdb.Pipeline()
		lens := make([]*redis.IntCmd, len(keys))
		for i, k := range keys {
			lens[i] = pipe.StrLen(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("size the payload store: %w", err)
		}
		for i, k := range keys {
			m.StorePayloads++
			m.StoreBytes += lens[i].Val()
			if id, ok := cc.ParseProofKey(k); ok {
				inStore[id] = true
				if !inStream[id] {
					m.Orphans++
				}
			}
		}
	}
	for i := range cfg.Events {
		if id := uint64(i); !inStream[id] && !inStore[id] {
			m.Lost++
		}
	}
	if n, err := rdb.XLen(ctx, cc.DeadKey).Result(); err == nil {
		m.Dangling = int(n)
	} else {
		return err
	}
	if n, err := rdb.XLen(ctx, cc.ErrorsKey).Result(); err == nil {
		m.Errors = int(n)
	} else {
		return err
	}
	effects, err := rdb.HGetAll(ctx, cc.EffectKey).Result()
	if err != nil {
		return fmt.Errorf("read the effects: %w", err)
	}
	for _, v := range effects {
		n, _ := strconv.Atoi(v)
		m.Processed++
		m.Effects += n
	}
	if m.ProducerCrashes, err = scard(ctx, rdb, cc.ProducerCrash); err != nil {
		return err
	}
	if m.ConsumerCrashes, err = scard(ctx, rdb, cc.ConsumerCrash); err != nil {
		return err
	}
	gs, err := rdb.XInfoGroups(ctx, cc.StreamKey).Result()
	if err != nil {
		return fmt.Errorf("read the consumer group: %w", err)
	}
	for _, g := range gs {
		m.Pending += int(g.Pending)
		m.Lag += g.Lag
	}
	return nil
}

func scard(ctx context.Context, rdb *redis.Client, key string) (int, error) {
	n, err := rdb.SCard(ctx, key).Result()
	return int(n), err
}

// checks are the run's promises: everything acknowledged is processed exactly once,
// nothing is left unread or pending, and the faults are the plan's.
func checks(ctx context.Context, rdb *redis.Client, cfg Config, acked map[uint64]bool, r result.ClaimRun) ([]result.RunCheck, error) {
	effects, err := rdb.HGetAll(ctx, cc.EffectKey).Result()
	if err != nil {
		return nil, err
	}
	var notOnce []string
	for id := range acked {
		if n := effects[strconv.FormatUint(id, 10)]; n != "1" {
			if len(notOnce) < 10 {
				notOnce = append(notOnce, fmt.Sprintf("event %d processed %q times", id, n))
			}
		}
	}
	more := 0
	for _, v := range effects {
		if v != "1" {
			more++
		}
	}
	m := r.Measured
	out := []result.RunCheck{
		{Name: "every acknowledged event processed exactly once", Pass: len(notOnce) == 0 && more == 0,
			Detail: fmt.Sprintf("%d acknowledged, %d processed, %d effects; %d events applied more than once %v", len(acked), m.Processed, m.Effects, more, notOnce)},
		{Name: "the stream drained", Pass: m.Pending == 0 && m.Lag == 0,
			Detail: fmt.Sprintf("%d pending, %d unread", m.Pending, m.Lag)},
		{Name: "injected crashes are the model's plan", Pass: m.ProducerCrashes == r.Model.ProducerDied && m.ConsumerCrashes == r.Model.ConsumerDied,
			Detail: fmt.Sprintf("producer %d (model %d), consumer %d (model %d)", m.ProducerCrashes, r.Model.ProducerDied, m.ConsumerCrashes, r.Model.ConsumerDied)},
		{Name: "no corrupt payloads", Pass: m.Errors == 0, Detail: fmt.Sprintf("%d in %s", m.Errors, cc.ErrorsKey)},
		{Name: "every event accounted for", Pass: m.Processed+m.Orphans+m.Lost == cfg.Events,
			Detail: fmt.Sprintf("%d processed + %d orphans + %d lost = %d of %d", m.Processed, m.Orphans, m.Lost, m.Processed+m.Orphans+m.Lost, cfg.Events)},
	}
	return out, nil
}
