package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/sony/gobreaker/v2"

	"github.com/edgeproof/rlharness/limiters"
)

// Circuit breaker settings. A hung store costs the store timeout (a bounded decision: the
// store wait) to the calls already waiting when it hangs, then to one probe per breakerOpen,
// and to nothing else.
const (
	// breakerTrips is how many store calls in a row must fail, with none succeeding within
	// the store wait, before the breaker opens: a store that answers some calls under load
	// is slow, not down, and keeps the breaker shut.
	breakerTrips = 3
	// breakerOpen is how long the breaker stays open before one probe may pass; it bounds
	// how soon a replica notices the store is back.
	breakerOpen = 500 * time.Millisecond
	// breakerWaits is the breaker's rolling window in store waits, in buckets of a fifth of
	// one. gobreaker counts a call's outcome in the bucket it started in and drops it once
	// that bucket has left the window, so a window of one store wait would never see a
	// decision that waited it out; four hold the breakerTrips calls of one client, which has
	// one call in flight at a time.
	breakerWaits   = 4
	breakerBuckets = 5 * breakerWaits
	// boundedPoolSize is the bounded design's connections to its store: a burst of fresh
	// clients past their budgets has one call in flight per client and node, each waiting up
	// to the store wait, and none should wait for a connection instead of the store.
	boundedPoolSize = 128
	// followCeiling is how many store waits the bounded design's store timeout and wait may
	// grow to when they follow the link (storeGuard.follow).
	followCeiling = limiters.StoreFollowCeiling
)

// newRedisClient opens a go-redis client for --redis (see ParseRedisAddrs: one Redis, or
// a Redis Cluster through its seed nodes) that never waits longer than timeout for
// anything: dialling, a free connection, a read or a write. It never retries: a decision
// that missed the store is decided fail-open, and a sync that missed it is retried at the
// next interval with its counts kept. A cluster client still follows MOVED and ASK
// (go-redis's default of 3 redirects), within the same timeout. With wait > 0 (the bounded
// design's store wait) a dial, a read, a write or a free connection may take up to
// followCeiling times the longer of the two, each call's context setting its own deadline (a
// sync's the timeout, a decision's the wait, each as it follows the link: storeGuard.follow),
// and the pool holds boundedPoolSize connections.
func newRedisClient(target string, timeout, wait time.Duration) redis.UniversalClient {
	addrs, cluster, _ := ParseRedisAddrs(target) // Validate has refused a bad one
	rw, pool := timeout, 0                       // 0: go-redis's default pool
	dial := timeout
	if wait > 0 {
		// The bounded design's calls wait up to what follows the link (storeGuard.follow),
		// each call's context setting its own deadline, and so may a dial: a TCP handshake to
		// a store 80 ms away takes 80 ms.
		rw, pool = followCeiling*max(timeout, wait), boundedPoolSize
		dial = rw
	}
	if cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:                    addrs,
			DialTimeout:              dial,
			DialerRetries:            1,
			ReadTimeout:              rw,
			WriteTimeout:             rw,
			PoolTimeout:              rw,
			PoolSize:                 pool,
			ContextTimeoutEnabled:    true,
			MaxRetries:               -1,
			DisableIdentity:          true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		})
	}
	return redis.NewClient(&redis.Options{
		Addr:                  addrs[0],
		DialTimeout:           dial,
		DialerRetries:         1, // one dial attempt: the default retries five times with 100 ms pauses
		ReadTimeout:           rw,
		WriteTimeout:          rw,
		PoolTimeout:           rw,
		PoolSize:              pool,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1, // go-redis reads 0 as "the default, 3"; -1 means none
		// No extra round trips when a connection opens (CLIENT SETINFO, maintenance
		// notifications): each would be one more wait on a hung store.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// ClusterScheme prefixes a --redis value that names a Redis Cluster by its seed nodes.
const ClusterScheme = "redis-cluster://"

// ParseRedisAddrs reads a --redis value: "host:port" is one Redis; a comma-separated list
// "host:port,host:port,..." is the seed nodes of a Redis Cluster, and so is
// "redis-cluster://host:port[,host:port...]" (a cluster even with one seed).
func ParseRedisAddrs(s string) (addrs []string, cluster bool, err error) {
	rest, cluster := strings.CutPrefix(s, ClusterScheme)
	for a := range strings.SplitSeq(rest, ",") {
		a = strings.TrimSpace(a)
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, false, fmt.Errorf("--redis %q: %q is not host:port (give host:port, a comma-separated list of cluster seeds, or %shost:port,...)", s, a, ClusterScheme)
		}
		addrs = append(addrs, a)
	}
	return addrs, cluster || len(addrs) > 1, nil
}

// errStoreUnavailable is what a store call returns when the breaker did not let it through:
// the store is known down.
var errStoreUnavailable = fmt.Errorf("%w: circuit breaker open", limiters.ErrStoreDown)

// storeGuard runs every call to the counter store under a timeout and a circuit breaker,
// and keeps the outage state: it logs when the store becomes unreachable and when it is
// back, with how many decisions were made degraded in between. An error that says the
// store is down (refused or reset connections, the breaker open) wraps
// limiters.ErrStoreDown; a timeout does not: the store may only be slow.
type storeGuard struct {
	timeout time.Duration
	wait    time.Duration // a bounded decision's (bounded)
	// ceiling, when set, makes the timeout and the wait follow the link (follow): each
	// grows past its configured figure with the store's measured round trip, to ceiling.
	ceiling time.Duration
	rtt     roundTrips
	// backoff is what the next sync waits at least (ns): twice what the last one waited when
	// it timed out, until a call succeeds (a link longer than every timeout so far is
	// learnt from syncs alone; a hung store costs a sync more each time, never a decision).
	backoff atomic.Int64
	cb      *gobreaker.TwoStepCircuitBreaker[struct{}]
	m       *metrics
	log     *slog.Logger
	now     func() time.Time

	down      atomic.Bool
	decisions atomic.Int64 // degraded decisions since start
	mu        sync.Mutex   // orders outage start and end
	since     time.Time
	atStart   int64
}

// newStoreGuard returns a guard whose calls end after timeout, a bounded decision's after
// wait (0: timeout). The breaker's counts roll over breakerWaits store waits, and it opens only when breakerTrips calls in a
// row failed and none succeeded in that window; a sync exchange that timed out is not
// counted at all (a slow store delays syncs without being down).
func newStoreGuard(timeout, wait time.Duration, m *metrics, log *slog.Logger, now func() time.Time) *storeGuard {
	if wait <= 0 {
		wait = timeout
	}
	return &storeGuard{
		timeout: timeout,
		wait:    wait,
		m:       m,
		log:     log,
		now:     now,
		cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:         "counter-store",
			MaxRequests:  1,
			Timeout:      breakerOpen,
			Interval:     breakerWaits * wait,
			BucketPeriod: breakerWaits * wait / breakerBuckets,
			ReadyToTrip: func(c gobreaker.Counts) bool {
				return c.ConsecutiveFailures >= breakerTrips && c.TotalSuccesses == 0
			},
			IsExcluded: func(err error) bool {
				var st syncTimeout
				return errors.As(err, &st)
			},
		}),
	}
}

// syncTimeout is a sync exchange that timed out, as the breaker is told of it: excluded.
type syncTimeout struct{ error }

func (e syncTimeout) Unwrap() error { return e.error }

// call runs f with a context that ends after the store timeout, unless the breaker is
// open. The context does not end with ctx's cancellation: a decision that reached the
// store is counted there whether or not its client is still waiting.
func (g *storeGuard) call(ctx context.Context, op string, f func(context.Context) error) error {
	return g.run(ctx, op, g.syncTimeout(), f)
}

// bounded is the bounded design's StoreCalls: a decision (opTake) waits up to the store
// wait, a sync's exchange the store timeout, each as it follows the link.
func (g *storeGuard) bounded(ctx context.Context, op string, f func(context.Context) error) error {
	if op == opTake {
		return g.run(ctx, op, g.follow(g.wait), f)
	}
	return g.run(ctx, op, g.syncTimeout(), f)
}

// followLink makes the guard's timeout and wait follow the link to the store, up to
// followCeiling store waits (the bounded design's guard).
func (g *storeGuard) followLink() *storeGuard {
	g.ceiling = followCeiling * max(g.timeout, g.wait)
	return g
}

// follow is how long a call whose configured limit is base may wait: base, or, where the
// guard follows the link and its store's calls take longer, twice their smoothed time plus
// four times its mean deviation (RFC 6298's retransmission timeout with the smoothed round
// trip doubled: a call is given its usual time twice over, and the link's jitter), at most
// the ceiling. A replica 80 ms (round trip) from its store so waits about 200 ms for a sync
// where 50 ms would time every one of them out; one beside it keeps its 50 ms. Only calls
// that succeeded are measured: a store that stops answering does not lengthen the wait.
func (g *storeGuard) follow(base time.Duration) time.Duration {
	if g.ceiling <= 0 {
		return base
	}
	return min(max(base, g.rtt.timeout()), max(base, g.ceiling))
}

// syncTimeout is what a call other than a bounded decision waits now: the store timeout as
// it follows the link, and at least the backoff after syncs that timed out.
func (g *storeGuard) syncTimeout() time.Duration {
	d := g.follow(g.timeout)
	if g.ceiling > 0 {
		d = min(max(d, time.Duration(g.backoff.Load())), g.ceiling)
	}
	return d
}

// collectors are the guard's limits as they stand, for the replica's metrics: what a sync
// (and, outside the bounded design, every store call) waits now, and what a bounded
// decision waits now, each in seconds. Where the guard follows the link they move with the
// store's measured round trip; elsewhere they are the configured figures.
func (g *storeGuard) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rlreplica_store_timeout_seconds",
			Help: "How long a store call other than a bounded decision waits now before it counts as timed out: --store-timeout, or in the bounded design that timeout as it follows the link (2 x the smoothed call time + 4 x its deviation, at least the backoff after syncs that timed out, at most 4 store waits).",
		}, func() float64 { return g.syncTimeout().Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rlreplica_store_wait_seconds",
			Help: "How long a decision waits now for its store call before the replica decides alone: the bounded design's --store-wait as it follows the link; --store-timeout in the other modes.",
		}, func() float64 { return g.follow(g.wait).Seconds() }),
	}
}

// roundTrips follows the time of successful store calls: the smoothed time and its mean
// deviation (RFC 6298: gains 1/8 and 1/4).
type roundTrips struct {
	mu           sync.Mutex
	srtt, rttvar time.Duration
	n            int64
}

func (r *roundTrips) add(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.n == 1 {
		r.srtt, r.rttvar = d, d/2
		return
	}
	dev := r.srtt - d
	if dev < 0 {
		dev = -dev
	}
	r.rttvar += (dev - r.rttvar) / 4
	r.srtt += (d - r.srtt) / 8
}

// timeout is 2 × the smoothed time + 4 × its deviation (0 before any call succeeded).
func (r *roundTrips) timeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return 0
	}
	return 2*r.srtt + 4*r.rttvar
}

func (g *storeGuard) run(ctx context.Context, op string, timeout time.Duration, f func(context.Context) error) error {
	done, err := g.cb.Allow()
	var partial *limiters.PartialExchangeError
	if err != nil {
		g.m.storeErrors.WithLabelValues(op, reasonBreakerOpen).Inc()
		g.failed(errStoreUnavailable)
		return errStoreUnavailable
	}
	g.m.roundTrips.WithLabelValues(op).Inc()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	start := time.Now()
	err = f(cctx)
	took := time.Since(start)
	cancel()
	if err == nil {
		g.rtt.add(took)
		g.backoff.Store(0)
	} else if g.ceiling > 0 && op != opTake && reason(err) == reasonTimeout && !storeDown(err) {
		g.backoff.Store(int64(min(2*timeout, g.ceiling)))
	}
	if err != nil && storeDown(err) {
		err = fmt.Errorf("%w: %w", limiters.ErrStoreDown, err)
	}
	if errors.As(err, &partial) {
		// One shard of a cluster is down: its clients' counts wait for the next sync, and
		// every other client was synced. The store as a whole is up: the breaker stays shut.
		done(nil)
		g.m.storeErrors.WithLabelValues(op, reasonPartial).Inc()
		g.succeeded()
		return err
	}
	if err != nil && op == opExchange && reason(err) == reasonTimeout {
		done(syncTimeout{err})
	} else {
		done(err)
	}
	if err != nil {
		g.m.storeErrors.WithLabelValues(op, reason(err)).Inc()
		g.failed(err)
		return err
	}
	g.succeeded()
	return nil
}

// storeDown reports whether err says the store is down, not slow: its connections are
// refused, reset or closed under the call.
func storeDown(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func reason(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return reasonTimeout
	}
	return reasonError
}

// degraded reports whether the store is unreachable now.
func (g *storeGuard) degraded() bool { return g.down.Load() }

// countDegraded records one decision made without the store.
func (g *storeGuard) countDegraded() {
	g.decisions.Add(1)
	g.m.degradedDecisions.Inc()
}

func (g *storeGuard) failed(err error) {
	if g.down.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down.Load() {
		return
	}
	g.since = g.now()
	g.atStart = g.decisions.Load()
	g.down.Store(true)
	g.m.degraded.Set(1)
	g.log.Warn("counter store unreachable: outage starts, deciding fail-open", "err", err.Error())
}

func (g *storeGuard) succeeded() {
	if !g.down.Load() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.down.Load() {
		return
	}
	g.down.Store(false)
	g.m.degraded.Set(0)
	g.log.Info("counter store reachable again: outage ends",
		"outage_start", g.since.UTC().Format(time.RFC3339Nano),
		"outage_end", g.now().UTC().Format(time.RFC3339Nano),
		"outage", g.now().Sub(g.since).Round(time.Millisecond).String(),
		"degraded_decisions", g.decisions.Load()-g.atStart)
}
