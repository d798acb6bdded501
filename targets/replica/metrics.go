package replica

import (
	"strconv"

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

func newMetrics(cfg Config, syncLag, tracked func() float64) *metrics {
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
		m.degradedDecisions, m.reloads, info,
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
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	return m
}
