// Package claimtest runs the claim-check pipeline (document 004) on real infrastructure:
// a producer and consumers on Redis Streams started by the fleet, delivery events with
// their 40,000-byte proofs sent by Vegeta, the model's crash plan injected by killing the
// processes for real, and every figure read back from Redis and set beside the model's
// for the same events.
package claimtest

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	ccproc "github.com/edgeproof/rlharness/targets/claimcheck"
)

// Defaults of a run, small enough for a 2-core machine: 40 kB per attached message makes
// 2,000 events 80 MB through the queue.
const (
	DefaultEvents     = 2000
	DefaultRate       = 200 // events/s asked of the producer
	DefaultConsumers  = 2
	DefaultTTL        = 5 * time.Minute // DD11's 7 days, scaled: outlives the run, as in the model
	DefaultVisibility = time.Second
	DefaultDrain      = 90 * time.Second
	maxEvents         = 20_000
	retryPasses       = 5
)

// Config is one run.
type Config struct {
	Events        int
	Rate          float64
	Placement     cc.Placement
	Deletion      cc.Deletion
	ProducerCrash float64
	ConsumerCrash float64
	Seed          uint32
	Consumers     int
	TTL           time.Duration
	Visibility    time.Duration
	Drain         time.Duration // how long to wait for the consumers to finish the stream
	Network       string        // Docker provider only
	Binary        string        // local provider: a built targets/cmd/claimcheck; built if empty
	Logger        *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Events == 0 {
		c.Events = DefaultEvents
	}
	if c.Events < 0 || c.Events > maxEvents {
		return c, fmt.Errorf("events must be in 1…%d on this harness (got %d)", maxEvents, c.Events)
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Rate < 0 {
		return c, fmt.Errorf("rate must be > 0 events/s (got %g)", c.Rate)
	}
	if c.Consumers == 0 {
		c.Consumers = DefaultConsumers
	}
	if c.Placement == "" {
		c.Placement = cc.Claim
	}
	if c.Placement == cc.Claim && c.Deletion == "" {
		c.Deletion = cc.Immediate
	}
	if c.Placement == cc.Attach {
		c.Deletion = ""
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Visibility == 0 {
		c.Visibility = DefaultVisibility
	}
	if c.Drain == 0 {
		c.Drain = DefaultDrain
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// Run starts a fleet of one producer and cfg.Consumers consumers, sends cfg.Events
// events, waits for the stream to drain and measures.
func Run(ctx context.Context, p fleet.Provider, cfg Config) (result.ClaimRun, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return result.ClaimRun{}, err
	}
	res := result.ClaimRun{Placement: string(cfg.Placement), Deletion: string(cfg.Deletion), Events: cfg.Events, Rate: cfg.Rate,
		Seed: cfg.Seed, TTL: cfg.TTL, Visibility: cfg.Visibility}
	settings := result.ClaimSettings{N: cfg.Events, Placement: cfg.Placement, Deletion: cfg.Deletion,
		ProducerCrash: cfg.ProducerCrash, ConsumerCrash: cfg.ConsumerCrash, Seed: cfg.Seed}
	doc, err := model.RunClaim(settings)
	if err != nil {
		return res, err
	}
	settings.Ledger = true
	led, err := model.RunClaim(settings)
	if err != nil {
		return res, err
	}
	res.Model, res.Predicted = doc, led

	env := map[string]string{
		"CLAIMCHECK_PLACEMENT":  string(cfg.Placement),
		"CLAIMCHECK_TTL":        cfg.TTL.String(),
		"CLAIMCHECK_VISIBILITY": cfg.Visibility.String(),
	}
	if cfg.Deletion != "" {
		env["CLAIMCHECK_DELETION"] = string(cfg.Deletion)
	}
	f, err := p.Start(ctx, fleet.Spec{Target: fleet.TargetClaimCheck, Replicas: 1 + cfg.Consumers,
		ExtraEnv: env, Binary: cfg.Binary, Network: cfg.Network})
	if err != nil {
		return res, fmt.Errorf("start the claim-check fleet: %w", err)
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if terr := f.Terminate(tctx); terr != nil {
			cfg.Logger.Error("could not terminate the claim-check fleet", "err", terr)
		}
	}()
	res.Conditions = f.Conditions()
	rdb := redis.NewClient(&redis.Options{Addr: f.RedisAddr()})
	defer rdb.Close()

	// The crash plan is the model's own draws, so the real run crashes on the same events.
	plan := model.NewClaimCrashPlan(cfg.Events, cfg.ProducerCrash, cfg.ConsumerCrash, cfg.Seed)
	if err := cc.CreateGroup(ctx, rdb); err != nil {
		return res, err
	}
	if err := rdb.MSet(ctx, cc.ProducerPlan, cc.EncodePlan(plan.Producer), cc.ConsumerPlan, cc.EncodePlan(plan.Consumer)).Err(); err != nil {
		return res, fmt.Errorf("write the crash plan: %w", err)
	}

	// A crashed member exits for real; the watchdog starts it again, as an orchestrator
	// would, on the same address.
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { watchdog(wctx, f, 1+cfg.Consumers, cfg.Logger) })
	defer func() { stopWatch(); wg.Wait() }()

	begin := time.Now()
	acked, sent, resent, err := send(ctx, f, rdb, cfg)
	res.Measured.Sent, res.Measured.Acknowledged, res.Measured.Resent = sent, len(acked), resent
	if err != nil {
		return res, err
	}
	if err := drain(ctx, rdb, cfg.Drain); err != nil {
		cfg.Logger.Warn("the stream did not drain", "err", err)
	}
	res.Measured.Seconds = time.Since(begin).Seconds()
	stopWatch()
	wg.Wait()
	if err := measure(ctx, rdb, cfg, &res.Measured); err != nil {
		return res, err
	}
	res.Checks, err = checks(ctx, rdb, cfg, acked, res)
	if err != nil {
		return res, err
	}
	res.Pass = true
	for _, c := range res.Checks {
		res.Pass = res.Pass && c.Pass
	}
	return res, nil
}

// watchdog starts every member that is not running, until ctx ends.
func watchdog(ctx context.Context, f fleet.Fleet, members int, log *slog.Logger) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i := range members {
			if err := f.Start(ctx, fleet.ReplicaMember(i)); err != nil && ctx.Err() == nil {
				log.Warn("could not restart a claim-check process", "member", fleet.ReplicaMember(i), "err", err)
			}
		}
	}
}

// send posts every event once at cfg.Rate, then again those whose connection was refused
// or broken, except the events the producer crashed on (its fault log says which): the
// model loses or orphans those, and so does the run. It returns the acknowledged events.
func send(ctx context.Context, f fleet.Fleet, rdb *redis.Client, cfg Config) (map[uint64]bool, int, int, error) {
	acked := map[uint64]bool{}
	todo := make([]uint64, cfg.Events)
	for i := range todo {
		todo[i] = uint64(i)
	}
	sent, resent := 0, 0
	url := f.ReplicaURLs()[0]
	for pass := 0; len(todo) > 0 && pass < retryPasses; pass++ {
		if pass > 0 {
			resent += len(todo)
			// Let a producer that crashed come back before the next pass.
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			for fleet.Healthz(hctx, url) != nil && hctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
			cancel()
		}
		ids := todo
		s := eventSchedule(len(ids), cfg.Rate)
		var failed []uint64
		_, err := traffic.Run(ctx, s, []string{url}, traffic.Options{
			Path:    "/events",
			Workers: 8,
			Timeout: 5 * time.Second,
			Body:    func(i int) []byte { return ccproc.EventBody(ids[i]) },
		}, func(o traffic.Outcome) error {
			id := ids[o.Index]
			if o.Code == 204 {
				acked[id] = true
			} else {
				failed = append(failed, id)
			}
			return nil
		})
		sent += len(ids)
		if err != nil {
			return acked, sent, resent, fmt.Errorf("send pass %d: %w", pass+1, err)
		}
		crashed, err := crashLog(ctx, rdb, cc.ProducerCrash)
		if err != nil {
			return acked, sent, resent, err
		}
		todo = todo[:0:0]
		for _, id := range failed {
			if !crashed[id] && !acked[id] {
				todo = append(todo, id)
			}
		}
		sort.Slice(todo, func(a, b int) bool { return todo[a] < todo[b] })
	}
	return acked, sent, resent, nil
}

// eventSchedule is n events at rate per second to the producer, as one client.
func eventSchedule(n int, rate float64) *schedule.Schedule {
	step := time.Duration(float64(time.Second) / rate)
	d := time.Duration(n)*step + step
	s := &schedule.Schedule{Duration: d,
		Clients: []schedule.Client{{ID: "delivery-events", Limit: n + 1, Window: d, Pattern: "claimcheck"}}}
	s.Requests = make([]schedule.Request, n)
	for i := range s.Requests {
		s.Requests[i] = schedule.Request{At: time.Duration(i) * step}
	}
	return s
}

func crashLog(ctx context.Context, rdb *redis.Client, key string) (map[uint64]bool, error) {
	ms, err := rdb.SMembers(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("read the fault log %s: %w", key, err)
	}
	out := make(map[uint64]bool, len(ms))
	for _, m := range ms {
		id, err := strconv.ParseUint(m, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fault log %s holds %q, not an event ID", key, m)
		}
		out[id] = true
	}
	return out, nil
}

// drain waits until the group has read every entry and nothing is pending, stably.
func drain(ctx context.Context, rdb *redis.Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	quiet := 0
	for {
		gs, err := rdb.XInfoGroups(ctx, cc.StreamKey).Result()
		if err != nil {
			return err
		}
		done := len(gs) == 1 && gs[0].Pending == 0 && gs[0].Lag == 0
		if done {
			quiet++
		} else {
			quiet = 0
		}
		if quiet >= 5 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %+v", limit, gs)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
