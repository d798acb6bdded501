package replica

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are a replica's Prometheus series, on its own registry so that two replicas in
// one test process do not collide.
type metrics struct {
	reg               *prometheus.Registry
	decisions         *prometheus.CounterVec // rule, outcome
	badRequests       prometheus.Counter
	roundTrips        *prometheus.CounterVec // op
	storeErrors       *prometheus.CounterVec // op, reason
	degraded          prometheus.Gauge
	degradedDecisions prometheus.Counter
	reloads           *prometheus.CounterVec // result

	// Sync health (delayed mode); the names and meanings are documented in docs/DESIGN.md
	// and read by the harness's sync-health checks: keep them stable.
	syncExchanges *prometheus.CounterVec // result: ok, failed, timeout
	syncDuration  prometheus.Histogram
	syncClients   prometheus.Histogram
	viewAge       prometheus.Histogram
	// exchanged counts the exchanges the limiter reported (Exchanged), so that a sync with
	// nothing to send, which makes no round trip, is not counted as an exchange.
	exchanged atomic.Int64
}

// Results of an exchange (rlreplica_sync_exchanges_total's label).
const (
	exchangeOK      = "ok"
	exchangeFailed  = "failed"
	exchangeTimeout = "timeout"
)

// Exchanged implements limiters.Observer.
func (m *metrics) Exchanged(clients int) {
	m.exchanged.Add(1)
	m.syncClients.Observe(float64(clients))
}

// Decided implements limiters.Observer.
func (m *metrics) Decided(viewAge time.Duration) { m.viewAge.Observe(viewAge.Seconds()) }

// blindness keeps rlreplica_sync_blind_seconds_total: the time a node went without a
// successful exchange for more than two sync intervals, only the part beyond the two. Closed
// gaps are summed in acc; the open one is added at each scrape, so the counter never
// decreases.
type blindness struct {
	mu       sync.Mutex
	interval time.Duration
	now      func() time.Time
	lastOK   time.Time
	acc      time.Duration
}

func newBlindness(interval time.Duration, now func() time.Time) *blindness {
	return &blindness{interval: interval, now: now, lastOK: now()}
}

// ok records a successful exchange (or ping) that completed now.
func (b *blindness) ok() {
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.now()
	if gap := at.Sub(b.lastOK) - 2*b.interval; gap > 0 {
		b.acc += gap
	}
	if at.After(b.lastOK) {
		b.lastOK = at
	}
}

// seconds is the counter's value now.
func (b *blindness) seconds() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	open := max(b.now().Sub(b.lastOK)-2*b.interval, 0)
	return (b.acc + open).Seconds()
}

// Label values of the metrics.
const (
	outcomeAllowed  = "allowed"
	outcomeRejected = "rejected"

	opTake     = "take"     // central: one decision
	opExchange = "exchange" // delayed: one sync
	opPing     = "ping"     // delayed: liveness check while no client is tracked

	reasonTimeout     = "timeout"
	reasonBreakerOpen = "breaker_open"
	reasonError       = "error"
	// reasonPartial: an exchange reached some shards of a cluster but not all.
	reasonPartial = "partial"
)

func newMetrics(cfg Config, syncLag, tracked, blind func() float64) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		reg: reg,
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlreplica_decisions_total",
			Help: "Decisions made, by rule and outcome (allowed = 200, rejected = 429).",
		}, []string{"rule", "outcome"}),
		badRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rlreplica_bad_requests_total",
			Help: "Requests answered 400 for a missing, empty, repeated or oversized client ID; nothing was counted for them.",
		}),
		roundTrips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlreplica_store_round_trips_total",
			Help: "Calls made to the counter store, by operation (take: central decision, exchange: delayed sync, ping).",
		}, []string{"op"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlreplica_store_errors_total",
			Help: "Store calls that failed or were not made, by operation and reason (timeout, breaker_open, error, partial: some shards of a cluster only).",
		}, []string{"op", "reason"}),
		degraded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rlreplica_degraded",
			Help: "1 while the counter store is unreachable and the replica decides fail-open, else 0.",
		}),
		degradedDecisions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rlreplica_degraded_decisions_total",
			Help: "Decisions made without the counter store (central: by the local fallback; delayed: while syncs fail).",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlreplica_rule_reloads_total",
			Help: "Rule file reloads (SIGHUP), by result; on error the old rules stay.",
		}, []string{"result"}),
		syncExchanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlreplica_sync_exchanges_total",
			Help: "Delayed mode: exchanges with the counter store attempted, by result (ok, failed, timeout: past --store-timeout); attempted is the sum. A sync skipped by the open circuit breaker is not an attempt (see rlreplica_store_errors_total{reason=\"breaker_open\"}), nor a sync with nothing to send.",
		}, []string{"result"}),
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rlreplica_sync_exchange_duration_seconds",
			Help:    "Delayed mode: wall time of each exchange with the counter store, whatever its result.",
			Buckets: []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2},
		}),
		syncClients: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rlreplica_sync_exchange_clients",
			Help:    "Delayed mode: clients carried by each exchange with the counter store.",
			Buckets: []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536},
		}),
		viewAge: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rlreplica_decision_view_age_seconds",
			Help:    "Delayed mode: at each decision, the age of the shared view of the client the replica decided with (time since it was last refreshed from the store); for a client the replica has never synced, the time since it first saw the client, 0 at its first request.",
			Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 5, 15, 60},
		}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rlreplica_info",
		Help: "Always 1; the labels describe the replica.",
		ConstLabels: prometheus.Labels{
			"mode":       string(cfg.Mode),
			"node_index": strconv.Itoa(cfg.NodeIndex),
			"node_count": strconv.Itoa(cfg.NodeCount),
		},
	})
	info.Set(1)
	reg.MustRegister(m.decisions, m.badRequests, m.roundTrips, m.storeErrors, m.degraded,
		m.degradedDecisions, m.reloads, info, m.syncExchanges, m.syncDuration, m.syncClients, m.viewAge,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "rlreplica_sync_blind_seconds_total",
			Help: "Delayed mode: cumulative time this replica went without a successful exchange (or, with no client to sync, ping) for more than two sync intervals; only the part beyond two intervals counts.",
		}, blind),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rlreplica_sync_lag_seconds",
			Help: "Delayed mode: time since the last successful exchange with the store (0 in other modes).",
		}, syncLag),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rlreplica_tracked_clients",
			Help: "Clients this replica holds counters for (those active within about a window).",
		}, tracked),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Pre-create the series a dashboard expects even before the first event.
	m.roundTrips.WithLabelValues(opTake)
	m.roundTrips.WithLabelValues(opExchange)
	for _, reason := range []string{reasonTimeout, reasonBreakerOpen, reasonError} {
		m.storeErrors.WithLabelValues(opTake, reason)
		m.storeErrors.WithLabelValues(opExchange, reason)
	}
	for _, res := range []string{exchangeOK, exchangeFailed, exchangeTimeout} {
		m.syncExchanges.WithLabelValues(res)
	}
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	return m
}
