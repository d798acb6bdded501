package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/sony/gobreaker/v2"

	"github.com/edgeproof/rlharness/limiters"
)

// Circuit breaker settings. A hung store costs the store timeout to the calls already
// waiting when it hangs, then to one probe per breakerOpen, and to nothing else.
const (
	// breakerTrips is how many store calls in a row must fail before the breaker opens.
	breakerTrips = 3
	// breakerOpen is how long the breaker stays open before one probe may pass; it bounds
	// how soon a replica notices the store is back.
	breakerOpen = 500 * time.Millisecond
)

// newRedisClient opens a go-redis client for --redis (see ParseRedisAddrs: one Redis, or
// a Redis Cluster through its seed nodes) that never waits longer than timeout for
// anything: dialling, a free connection, a read or a write. It never retries: a decision
// that missed the store is decided fail-open, and a sync that missed it is retried at the
// next interval with its counts kept. A cluster client still follows MOVED and ASK
// (go-redis's default of 3 redirects), within the same timeout.
func newRedisClient(target string, timeout time.Duration) redis.UniversalClient {
	addrs, cluster, _ := ParseRedisAddrs(target) // Validate has refused a bad one
	if cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:                    addrs,
			DialTimeout:              timeout,
			DialerRetries:            1,
			ReadTimeout:              timeout,
			WriteTimeout:             timeout,
			PoolTimeout:              timeout,
			ContextTimeoutEnabled:    true,
			MaxRetries:               -1,
			DisableIdentity:          true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		})
	}
	return redis.NewClient(&redis.Options{
		Addr:                  addrs[0],
		DialTimeout:           timeout,
		DialerRetries:         1, // one dial attempt: the default retries five times with 100 ms pauses
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		PoolTimeout:           timeout,
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

// errStoreUnavailable is what a store call returns when the breaker did not let it through.
var errStoreUnavailable = errors.New("counter store unavailable (circuit breaker open)")

// storeGuard runs every call to the counter store under a timeout and a circuit breaker,
// and keeps the outage state: it logs when the store becomes unreachable and when it is
// back, with how many decisions were made degraded in between.
type storeGuard struct {
	timeout time.Duration
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

func newStoreGuard(timeout time.Duration, m *metrics, log *slog.Logger, now func() time.Time) *storeGuard {
	return &storeGuard{
		timeout: timeout,
		m:       m,
		log:     log,
		now:     now,
		cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "counter-store",
			MaxRequests: 1,
			Timeout:     breakerOpen,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= breakerTrips },
		}),
	}
}

// call runs f with a context that ends after the store timeout, unless the breaker is
// open. The context does not end with ctx's cancellation: a decision that reached the
// store is counted there whether or not its client is still waiting.
func (g *storeGuard) call(ctx context.Context, op string, f func(context.Context) error) error {
	done, err := g.cb.Allow()
	var partial *limiters.PartialExchangeError
	if err != nil {
		g.m.storeErrors.WithLabelValues(op, reasonBreakerOpen).Inc()
		g.failed(errStoreUnavailable)
		return errStoreUnavailable
	}
	g.m.roundTrips.WithLabelValues(op).Inc()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
	err = f(cctx)
	cancel()
	if errors.As(err, &partial) {
		// One shard of a cluster is down: its clients' counts wait for the next sync, and
		// every other client was synced. The store as a whole is up: the breaker stays shut.
		done(nil)
		g.m.storeErrors.WithLabelValues(op, reasonPartial).Inc()
		g.succeeded()
		return err
	}
	done(err)
	if err != nil {
		g.m.storeErrors.WithLabelValues(op, reason(err)).Inc()
		g.failed(err)
		return err
	}
	g.succeeded()
	return nil
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
