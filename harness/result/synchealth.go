package result

import (
	"fmt"
	"time"
)

// SyncHealth is what a scenario's replicas said of their sync with the store, scraped from
// their metrics during the run: why a delayed-sync limiter kept or broke its promises.
// A figure the replicas do not expose is nil, and the report says "not available": it is
// never a zero presented as measured.
type SyncHealth struct {
	// Available says the scrape found at least one sync figure; when false, Why says why.
	Available bool   `json:"available"`
	Why       string `json:"why,omitempty"`
	// Path is the metrics path scraped on every replica; Nodes how many were scraped.
	Path  string `json:"path,omitempty"`
	Nodes int    `json:"nodes"`
	// Scrapes counts the scrapes that answered and ScrapeErrors those that did not (a
	// replica stopped, a timeout), every node together.
	Scrapes      int `json:"scrapes"`
	ScrapeErrors int `json:"scrape_errors"`
	// Every is the time between two scrapes of a node.
	Every time.Duration `json:"every_ns"`
	// Interval is the sync interval the replicas were given; 0 when unknown.
	Interval time.Duration `json:"sync_interval_ns,omitempty"`
	// Exchanges are the syncs attempted over the scenario, by result; ExchangesFrom names
	// the metrics they were read from.
	Exchanges     *Exchanges `json:"exchanges,omitempty"`
	ExchangesFrom string     `json:"exchanges_from,omitempty"`
	// Duration is how long an exchange took, in seconds (p50, p99).
	Duration *Distribution `json:"exchange_duration_s,omitempty"`
	// Clients is how many clients one exchange carried (mean, p99).
	Clients *Distribution `json:"clients_per_exchange,omitempty"`
	// ViewAge is the age of the store's view when a decision was made, in seconds (p99).
	ViewAge *Distribution `json:"view_age_s,omitempty"`
	// Blind is the time each node went without a successful exchange for more than two
	// intervals.
	Blind *Blind `json:"blind,omitempty"`
	// MaxSyncLag is the most any node's time since its last good exchange was seen at a
	// scrape, in seconds (the replica's sync lag gauge).
	MaxSyncLag *float64 `json:"max_sync_lag_s,omitempty"`
	// Series is the sync over time, one point per scrape; AgeSeries names what its Age is.
	Series    []SyncPoint `json:"series,omitempty"`
	AgeSeries string      `json:"age_series,omitempty"`
	// StoreDecisions are the decisions a node asked the store for (the bounded design: a
	// client past its node's unsynced budget; central and peer: every one); nil where the
	// replicas made none or do not expose them.
	StoreDecisions *StoreDecisions `json:"store_decisions,omitempty"`
	// Degraded is what the replicas decided without their store, in every mode (a central
	// replica whose store calls time out decides alone too); nil where they do not say.
	Degraded *Degraded `json:"degraded,omitempty"`
}

// StoreDecisions count the decision path's store calls over a scenario, and those that
// failed or timed out (the node then decided alone; the store may have counted the request
// all the same). Calls the circuit breaker refused are in neither.
type StoreDecisions struct {
	Calls  int64 `json:"calls"`
	Failed int64 `json:"failed"`
}

// Degraded counts a scenario's decisions made without the counter store: the fail-open
// fallback, one limit per node, after a store call failed or timed out or while the circuit
// breaker was open. Such decisions are not the algorithm's over the shared store, so no
// claim about the algorithm rests on a scenario that made them.
type Degraded struct {
	Decisions int64 `json:"decisions"`
	// The decision path's store calls (op "take": the central and peer modes) that timed
	// out, failed otherwise, or were not made because the circuit breaker was open.
	TimedOut    int64  `json:"take_timed_out"`
	Failed      int64  `json:"take_failed"`
	BreakerOpen int64  `json:"take_breaker_open"`
	From        string `json:"from"` // the metric read
}

// String is the figure in words: "23 decisions without the store (store calls: 3 timed out, 20 skipped by the open breaker)".
func (d *Degraded) String() string {
	return fmt.Sprintf("%d decisions without the store", d.Decisions) + d.calls()
}

// calls is why, in the decision path's store calls: " (store calls: 3 timed out, ...)".
func (d *Degraded) calls() string {
	if d.TimedOut+d.Failed+d.BreakerOpen == 0 {
		return ""
	}
	return fmt.Sprintf(" (store calls: %d timed out, %d failed, %d skipped by the open breaker)", d.TimedOut, d.Failed, d.BreakerOpen)
}

// Exchanges count a scenario's syncs by result. Attempted is their sum.
type Exchanges struct {
	Attempted int64 `json:"attempted"`
	OK        int64 `json:"ok"`
	Failed    int64 `json:"failed"`
	TimedOut  int64 `json:"timed_out"`
}

// Unsuccessful is every exchange that did not succeed, failed or timed out.
func (e Exchanges) Unsuccessful() int64 { return e.Failed + e.TimedOut }

// OKShare is the share of attempted exchanges that succeeded; 0 when none was attempted.
func (e Exchanges) OKShare() float64 {
	if e.Attempted <= 0 {
		return 0
	}
	return float64(e.OK) / float64(e.Attempted)
}

// Distribution summarises a histogram the replicas exposed: Count observations, their
// Mean, and P50 and P99 interpolated within the buckets as Prometheus's
// histogram_quantile does.
type Distribution struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
}

// Blind is the time nodes went without a successful exchange for more than two intervals,
// in seconds: the worst node's, the sum over nodes, and each node's by node index.
type Blind struct {
	Max     float64   `json:"max_s"`
	Total   float64   `json:"total_s"`
	PerNode []float64 `json:"per_node_s"`
}

// SyncPoint is the sync between two scrapes, every node together: exchanges that
// succeeded and that did not, per second, and the view's age at the later scrape (see
// SyncHealth.AgeSeries), in seconds; Age is negative where nothing was measured.
type SyncPoint struct {
	At       time.Duration `json:"at_ns"`
	OKPerSec float64       `json:"ok_per_s"`
	// FailedPerSec counts the exchanges that failed or timed out.
	FailedPerSec float64 `json:"failed_per_s"`
	Age          float64 `json:"age_s"`
}

// StoreCPU is the counter store's CPU over a scenario, from INFO cpu: the main thread's
// system and user seconds between the traffic's start and its end.
type StoreCPU struct {
	Seconds float64 `json:"cpu_s"`
	// Percent is Seconds over the wall time between the two readings, as % of one core.
	Percent float64 `json:"percent_of_core"`
	// MsPerKiloRequest is CPU milliseconds per 1,000 requests sent.
	MsPerKiloRequest float64 `json:"cpu_ms_per_1000_requests"`
}

// NotAvailable is what a sync figure the replicas did not expose reads as.
const NotAvailable = "not available"

// SyncRow is one sync health figure in words, for the terminal and the report.
type SyncRow struct {
	Name, Value string
}

// Rows are the sync health figures in words, "not available" where the replicas exposed
// nothing; a SyncHealth that is not available is one row saying why.
func (h *SyncHealth) Rows() []SyncRow {
	if h == nil {
		return []SyncRow{{"sync health", NotAvailable + ": not scraped in this run"}}
	}
	var degraded []SyncRow
	if h.Degraded != nil {
		degraded = []SyncRow{{"decisions without the store", fmt.Sprintf("%d%s [%s]", h.Degraded.Decisions, h.Degraded.calls(), h.Degraded.From)}}
	}
	if !h.Available {
		return append([]SyncRow{{"sync health", NotAvailable + ": " + h.Why}}, degraded...)
	}
	na := func(ok bool, f func() string) string {
		if !ok {
			return NotAvailable
		}
		return f()
	}
	ms := func(s float64) string {
		switch {
		case s < 0.001:
			return fmt.Sprintf("%.0f µs", s*1e6)
		case s < 1:
			return fmt.Sprintf("%.1f ms", s*1000)
		}
		return fmt.Sprintf("%.2f s", s)
	}
	rows := []SyncRow{
		{"exchanges", na(h.Exchanges != nil, func() string {
			e := h.Exchanges
			s := fmt.Sprintf("%d attempted: %d ok, %d failed, %d timed out", e.Attempted, e.OK, e.Failed, e.TimedOut)
			if e.Attempted > 0 {
				s += fmt.Sprintf(" (%.1f %% ok)", 100*e.OKShare())
			}
			return s + " [" + h.ExchangesFrom + "]"
		})},
		{"exchange duration", na(h.Duration != nil, func() string {
			return fmt.Sprintf("p50 %s, p99 %s", ms(h.Duration.P50), ms(h.Duration.P99))
		})},
		{"clients per exchange", na(h.Clients != nil, func() string {
			return fmt.Sprintf("mean %.1f, p99 %.0f", h.Clients.Mean, h.Clients.P99)
		})},
		{"view age at decision", na(h.ViewAge != nil, func() string { return "p99 " + ms(h.ViewAge.P99) })},
		{"blind time (no good exchange for > 2 intervals)", na(h.Blind != nil, func() string {
			return fmt.Sprintf("worst node %.2f s, all nodes %.2f s", h.Blind.Max, h.Blind.Total)
		})},
		{"sync lag (most seen at a scrape)", na(h.MaxSyncLag != nil, func() string { return ms(*h.MaxSyncLag) })},
	}
	if d := h.StoreDecisions; d != nil {
		rows = append(rows, SyncRow{"decisions asked of the store", fmt.Sprintf("%d calls, %d failed or timed out", d.Calls, d.Failed)})
	}
	rows = append(rows, []SyncRow{
		{"scrapes", fmt.Sprintf("%d of %d nodes every %v on %s, %d failed", h.Scrapes, h.Nodes, h.Every, h.Path, h.ScrapeErrors)},
	}...)
	return append(rows, degraded...)
}
