package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	cc "github.com/edgeproof/rlharness/claimcheck"
)

// consumer reads the stream in the group, one entry at a time (a crash then leaves one
// entry unacknowledged, as in the model): first what others left unacknowledged for longer
// than the visibility timeout (XAUTOCLAIM), then new entries (XREADGROUP).
type consumer struct {
	cfg   Config
	rdb   redis.UniversalClient
	log   *slog.Logger
	name  string
	pipe  *cc.Consumer
	dead  *cc.RedisDeadLetter
	plan  lazyPlan
	crash func()
}

func newConsumer(cfg Config, rdb redis.UniversalClient, log *slog.Logger, crash func()) *consumer {
	dead := cc.NewRedisDeadLetter(rdb)
	return &consumer{
		cfg: cfg, rdb: rdb, log: log, crash: crash, dead: dead,
		name: "consumer-" + strconv.Itoa(cfg.NodeIndex),
		plan: lazyPlan{key: cc.ConsumerPlan},
		pipe: &cc.Consumer{Placement: cfg.Placement, Deletion: cfg.Deletion, Store: cc.NewRedisStore(rdb),
			Ledger: cc.NewRedisLedger(rdb), DeadLetter: dead},
	}
}

const readBlock = 200 * time.Millisecond

func (c *consumer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		msgs, _, err := c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: cc.StreamKey, Group: cc.GroupName, Consumer: c.name,
			MinIdle: c.cfg.Visibility, Start: "0-0", Count: 1,
		}).Result()
		if err == nil && len(msgs) > 0 {
			err = c.handle(ctx, msgs[0], 1)
		} else if err == nil {
			var streams []redis.XStream
			streams, err = c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
				Group: cc.GroupName, Consumer: c.name, Streams: []string{cc.StreamKey, ">"},
				Count: 1, Block: readBlock,
			}).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err == nil {
				for _, s := range streams {
					for _, m := range s.Messages {
						if err = c.handle(ctx, m, 0); err != nil {
							break
						}
					}
				}
			}
		}
		if err != nil && ctx.Err() == nil {
			c.log.Error("consumer step failed; retrying", "consumer", c.name, "err", err)
			time.Sleep(100 * time.Millisecond)
		}
	}
	return ctx.Err()
}

// handle processes one delivery and acknowledges it unless the consumer crashed.
func (c *consumer) handle(ctx context.Context, x redis.XMessage, attempt int) error {
	raw, _ := x.Values[cc.MessageField].(string)
	pipe := c.rdb.Pipeline()
	pipe.HIncrBy(ctx, cc.StatsKey, cc.StatDeliveries, 1)
	pipe.HIncrBy(ctx, cc.StatsKey, cc.StatQueueBytes, int64(len(raw)))
	if attempt > 0 {
		pipe.HIncrBy(ctx, cc.StatsKey, cc.StatRedeliveries, 1)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("count the delivery: %w", err)
	}
	m, err := cc.Decode([]byte(raw))
	if err != nil {
		if derr := c.dead.Malformed(ctx, x.ID, err); derr != nil {
			return derr
		}
		return c.ack(ctx, x.ID, "malformed")
	}
	plan, err := c.plan.get(ctx, c.rdb)
	if err != nil {
		return fmt.Errorf("load the crash plan: %w", err)
	}
	crashed := false
	o, err := c.pipe.Handle(ctx, cc.Delivery{Message: m, Attempt: attempt}, func(d cc.Delivery) bool {
		if d.Attempt != 0 || !plan.Crash(m.Event.ID) {
			return false
		}
		if err := c.rdb.SAdd(ctx, cc.ConsumerCrash, m.Event.ID).Err(); err != nil {
			c.log.Error("could not log an injected crash", "event", m.Event.ID, "err", err)
		}
		c.log.Warn("injected crash before the ack", "consumer", c.name, "event", m.Event.ID, "entry", x.ID)
		c.crash()
		crashed = true
		return true
	})
	if err != nil {
		return err
	}
	if crashed {
		return nil // no ack: the entry waits out the visibility timeout
	}
	return c.ack(ctx, x.ID, o.String())
}

// ack acknowledges an entry and counts its outcome in one round trip.
func (c *consumer) ack(ctx context.Context, id, outcome string) error {
	pipe := c.rdb.TxPipeline()
	pipe.XAck(ctx, cc.StreamKey, cc.GroupName, id)
	pipe.HIncrBy(ctx, cc.StatsKey, "outcome_"+outcome, 1)
	_, err := pipe.Exec(ctx)
	return err
}
