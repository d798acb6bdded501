package synchealth

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edgeproof/rlharness/harness/result"
)

// full is one node's scrape with every sync metric the built-in replica exposes.
func full(ok, failed, timeout int, durCounts [3]int, durSum float64, blind, lag float64) string {
	return fmt.Sprintf(`# TYPE rlreplica_sync_exchanges_total counter
rlreplica_sync_exchanges_total{result="ok"} %d
rlreplica_sync_exchanges_total{result="failed"} %d
rlreplica_sync_exchanges_total{result="timeout"} %d
# TYPE rlreplica_sync_exchange_duration_seconds histogram
rlreplica_sync_exchange_duration_seconds_bucket{le="0.001"} %d
rlreplica_sync_exchange_duration_seconds_bucket{le="0.01"} %d
rlreplica_sync_exchange_duration_seconds_bucket{le="+Inf"} %d
rlreplica_sync_exchange_duration_seconds_sum %g
rlreplica_sync_exchange_duration_seconds_count %d
# TYPE rlreplica_sync_blind_seconds_total counter
rlreplica_sync_blind_seconds_total %g
# TYPE rlreplica_sync_lag_seconds gauge
rlreplica_sync_lag_seconds %g
`, ok, failed, timeout, durCounts[0], durCounts[1], durCounts[2], durSum, durCounts[2], blind, lag)
}

// mainReplica is the replica before the sync metrics: round trips and errors by op only.
func mainReplica(exchanges, timeouts, breaker, errs int, lag float64) string {
	return fmt.Sprintf(`# TYPE rlreplica_store_round_trips_total counter
rlreplica_store_round_trips_total{op="exchange"} %d
rlreplica_store_round_trips_total{op="take"} 0
# TYPE rlreplica_store_errors_total counter
rlreplica_store_errors_total{op="exchange",reason="timeout"} %d
rlreplica_store_errors_total{op="exchange",reason="breaker_open"} %d
rlreplica_store_errors_total{op="exchange",reason="error"} %d
rlreplica_store_errors_total{op="take",reason="timeout"} 7
# TYPE rlreplica_sync_lag_seconds gauge
rlreplica_sync_lag_seconds %g
`, exchanges, timeouts, breaker, errs, lag)
}

// takes is a bounded replica's decisions asked of the store, beside its exchanges.
func takes(exchanges, calls, timeouts, errs, breaker int) string {
	return fmt.Sprintf(`# TYPE rlreplica_sync_exchanges_total counter
rlreplica_sync_exchanges_total{result="ok"} %d
# TYPE rlreplica_store_round_trips_total counter
rlreplica_store_round_trips_total{op="exchange"} %d
rlreplica_store_round_trips_total{op="take"} %d
# TYPE rlreplica_store_errors_total counter
rlreplica_store_errors_total{op="take",reason="timeout"} %d
rlreplica_store_errors_total{op="take",reason="error"} %d
rlreplica_store_errors_total{op="take",reason="breaker_open"} %d
`, exchanges, exchanges, calls, timeouts, errs, breaker)
}

func series(t *testing.T, nodes int, every time.Duration, scrapes ...[]string) Series {
	t.Helper()
	s := Series{Names: Replica(), Nodes: nodes, Every: every}
	for i, tick := range scrapes {
		at := time.Duration(i) * every
		tk := Tick{At: at, Nodes: make([]*Sample, nodes)}
		for n, text := range tick {
			if text == "" {
				s.Errors++
				continue
			}
			smp, err := Parse(strings.NewReader(text), s.Names, at)
			if err != nil {
				t.Fatal(err)
			}
			tk.Nodes[n] = &smp
		}
		s.Ticks = append(s.Ticks, tk)
	}
	return s
}

func TestFigures(t *testing.T) {
	sec := time.Second
	tests := []struct {
		name      string
		s         Series
		available bool
		ex        *result.Exchanges
		from      string
		dur       *result.Distribution
		blind     *result.Blind
		lag       float64
		points    []result.SyncPoint
		ageSeries string
		decisions *result.StoreDecisions
	}{
		{
			name: "two nodes, every metric",
			s: series(t, 2, sec,
				[]string{full(10, 0, 0, [3]int{10, 10, 10}, 0.005, 0, 0.05), full(20, 1, 0, [3]int{21, 21, 21}, 0.01, 0, 0.1)},
				[]string{full(20, 0, 0, [3]int{20, 20, 20}, 0.01, 0, 0.04), full(25, 3, 2, [3]int{21, 23, 28}, 0.08, 0.4, 0.9)},
				[]string{full(30, 0, 0, [3]int{30, 30, 30}, 0.015, 0, 0.02), full(35, 3, 2, [3]int{31, 33, 38}, 0.09, 0.4, 0.1)}),
			available: true,
			// node 0: +20 ok; node 1: +15 ok, +2 failed, +2 timed out
			ex:   &result.Exchanges{Attempted: 39, OK: 35, Failed: 2, TimedOut: 2},
			from: "rlreplica_sync_exchanges_total",
			// 39 observations: 30 <= 1 ms, 2 in (1 ms, 10 ms], 7 above; sum 0.01+0.08
			dur: &result.Distribution{Count: 37, Mean: 0.09 / 37,
				P50: 0.001 * 18.5 / 30, P99: 0.01},
			blind: &result.Blind{Max: 0.4, Total: 0.4, PerNode: []float64{0, 0.4}},
			lag:   0.9,
			points: []result.SyncPoint{
				{At: sec, OKPerSec: 15, FailedPerSec: 4, Age: 0.9},
				{At: 2 * sec, OKPerSec: 20, FailedPerSec: 0, Age: 0.1},
			},
			ageSeries: "sync lag, the most of any node",
		},
		{
			// A node that restarted between scrapes counts from zero; one that did not
			// answer a scrape is bridged by the next.
			name: "a node restarts, another misses a scrape",
			s: series(t, 2, sec,
				[]string{full(100, 5, 0, [3]int{}, 0, 1, 0), full(50, 0, 0, [3]int{}, 0, 0, 0)},
				[]string{full(3, 1, 0, [3]int{}, 0, 0.5, 0), ""},
				[]string{full(8, 1, 0, [3]int{}, 0, 0.5, 0), full(60, 0, 0, [3]int{}, 0, 0, 0)}),
			available: true,
			ex:        &result.Exchanges{Attempted: 19, OK: 18, Failed: 1},
			from:      "rlreplica_sync_exchanges_total",
			blind:     &result.Blind{Max: 0.5, Total: 0.5, PerNode: []float64{0.5, 0}},
			points: []result.SyncPoint{
				{At: sec, OKPerSec: 3, FailedPerSec: 1, Age: 0},
				{At: 2 * sec, OKPerSec: 15, FailedPerSec: 0, Age: 0},
			},
			ageSeries: "sync lag, the most of any node",
		},
		{
			// The replica before the sync metrics: exchanges from its store calls.
			name: "round trips and errors only",
			s: series(t, 1, sec,
				[]string{mainReplica(10, 0, 0, 0, 0.01)},
				[]string{mainReplica(30, 3, 4, 1, 2.5)}),
			available: true,
			// 20 calls + 4 the breaker refused; 3 timed out, 1 error + 4 refused failed
			ex:        &result.Exchanges{Attempted: 24, OK: 16, Failed: 5, TimedOut: 3},
			from:      `rlreplica_store_round_trips_total and rlreplica_store_errors_total{op="exchange"}`,
			lag:       2.5,
			points:    []result.SyncPoint{{At: sec, OKPerSec: 16, FailedPerSec: 8, Age: 2.5}},
			ageSeries: "sync lag, the most of any node",
		},
		{
			// The bounded design's decisions past a budget: calls and those that failed
			// or timed out, not those the breaker refused (they never reached the store).
			name: "store decisions",
			s: series(t, 2, sec,
				[]string{takes(10, 100, 1, 0, 5), takes(10, 0, 0, 0, 0)},
				[]string{takes(15, 180, 3, 1, 9), takes(15, 40, 0, 2, 0)}),
			available: true,
			ex:        &result.Exchanges{Attempted: 10, OK: 10},
			from:      "rlreplica_sync_exchanges_total",
			points:    []result.SyncPoint{{At: sec, OKPerSec: 10, Age: -1}}, // no age exposed
			decisions: &result.StoreDecisions{Calls: 120, Failed: 5},
		},
		{
			name:      "metrics without a sync metric",
			s:         series(t, 1, sec, []string{"# TYPE go_goroutines gauge\ngo_goroutines 9\n"}, []string{"go_goroutines 9\n"}),
			available: false,
		},
		{
			name:      "no node answered",
			s:         series(t, 2, sec, []string{"", ""}),
			available: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.s.Figures()
			if h.Available != tt.available {
				t.Fatalf("available %v, want %v (%s)", h.Available, tt.available, h.Why)
			}
			if !h.Available {
				if h.Why == "" || h.Exchanges != nil || h.Series != nil {
					t.Errorf("void scrape must say why and give no figure: %+v", h)
				}
				return
			}
			if fmt.Sprint(h.Exchanges) != fmt.Sprint(tt.ex) || h.ExchangesFrom != tt.from {
				t.Errorf("exchanges %+v from %q, want %+v from %q", h.Exchanges, h.ExchangesFrom, tt.ex, tt.from)
			}
			if !closeDist(h.Duration, tt.dur) {
				t.Errorf("duration %+v, want %+v", h.Duration, tt.dur)
			}
			if h.Clients != nil || h.ViewAge != nil {
				t.Errorf("clients %+v, view age %+v: not exposed, want nil", h.Clients, h.ViewAge)
			}
			if fmt.Sprint(h.Blind) != fmt.Sprint(tt.blind) {
				t.Errorf("blind %+v, want %+v", h.Blind, tt.blind)
			}
			if tt.lag > 0 && (h.MaxSyncLag == nil || *h.MaxSyncLag != tt.lag) {
				t.Errorf("max sync lag %v, want %v", h.MaxSyncLag, tt.lag)
			}
			if fmt.Sprint(h.StoreDecisions) != fmt.Sprint(tt.decisions) {
				t.Errorf("store decisions %+v, want %+v", h.StoreDecisions, tt.decisions)
			}
			if fmt.Sprint(h.Series) != fmt.Sprint(tt.points) || h.AgeSeries != tt.ageSeries {
				t.Errorf("series %+v (%q), want %+v (%q)", h.Series, h.AgeSeries, tt.points, tt.ageSeries)
			}
		})
	}
}

func closeDist(a, b *result.Distribution) bool {
	if a == nil || b == nil {
		return a == b
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Count == b.Count && near(a.Mean, b.Mean) && near(a.P50, b.P50) && near(a.P99, b.P99)
}

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		h    Hist
		q    float64
		want float64
	}{
		{"inside the first bucket, from 0", Hist{Bounds: []float64{1, 2, inf}, Counts: []float64{10, 10, 10}}, 0.5, 0.5},
		{"interpolated in the second", Hist{Bounds: []float64{1, 2, inf}, Counts: []float64{10, 30, 30}}, 0.5, 1.25},
		{"p99 at a bucket's top", Hist{Bounds: []float64{1, 2, inf}, Counts: []float64{0, 100, 100}}, 0.99, 1.99},
		{"in +Inf: the highest finite bound", Hist{Bounds: []float64{1, 2, inf}, Counts: []float64{0, 0, 5}}, 0.99, 2},
		{"empty", Hist{Bounds: []float64{1, inf}, Counts: []float64{0, 0}}, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Quantile(tt.q, &tt.h)
			if !(math.Abs(got-tt.want) < 1e-9 || math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

// TestScrapeAReplicasRegistry scrapes the replica's metric names as client_golang serves
// them, while they change, and checks every figure against what was observed.
func TestScrapeAReplicasRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	ex := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rlreplica_sync_exchanges_total"}, []string{"result"})
	dur := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rlreplica_sync_exchange_duration_seconds", Buckets: []float64{0.001, 0.002, 0.005, 0.01, 0.05}})
	cli := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rlreplica_sync_exchange_clients", Buckets: []float64{1, 10, 100, 1000}})
	age := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rlreplica_decision_view_age_seconds", Buckets: []float64{0.01, 0.05, 0.1, 0.5}})
	blind := prometheus.NewCounter(prometheus.CounterOpts{Name: "rlreplica_sync_blind_seconds_total"})
	// The Go runtime's metrics beside them, as on a replica: left out of the parse.
	reg.MustRegister(ex, dur, cli, age, blind, collectors.NewGoCollector())
	// Before the scenario: counted, but not the scenario's.
	ex.WithLabelValues(ResultOK).Add(1000)
	dur.Observe(0.04)

	var served atomic.Int64
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		served.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx := context.Background()
	run := Scraper{URLs: []string{srv.URL}, Names: Replica(), Every: MinEvery, Interval: 20 * time.Millisecond}.Start(ctx, time.Now())
	for ticks := 0; ticks == 0; {
		time.Sleep(time.Millisecond)
		run.mu.Lock()
		ticks = len(run.series.Ticks)
		run.mu.Unlock()
	}
	// The scenario: 98 exchanges of 1.5 ms that succeed, one that fails, one that times out.
	for range 98 {
		ex.WithLabelValues(ResultOK).Inc()
		dur.Observe(0.0015)
		cli.Observe(50)
	}
	ex.WithLabelValues(ResultFailed).Inc()
	ex.WithLabelValues(ResultTimeout).Inc()
	dur.Observe(0.02)
	dur.Observe(0.05)
	for range 1000 {
		age.Observe(0.03)
	}
	blind.Add(0.25)
	s := run.Stop(ctx)
	f := s.Figures()

	if served.Load() < 2 || f.Exchanges == nil {
		t.Fatalf("%d scrapes served, figures %+v", served.Load(), f)
	}
	if got, want := *f.Exchanges, (result.Exchanges{Attempted: 100, OK: 98, Failed: 1, TimedOut: 1}); got != want {
		t.Errorf("exchanges %+v, want %+v", got, want)
	}
	// 98 of 100 durations in (1 ms, 2 ms]: p50 at 1 ms + 50/98 of the bucket; the 99th of
	// 100 is the first of two in (10 ms, 50 ms]: halfway.
	if f.Duration == nil || f.Duration.Count != 100 || math.Abs(f.Duration.P50-(0.001+0.001*50/98)) > 1e-9 || math.Abs(f.Duration.P99-0.03) > 1e-9 {
		t.Errorf("duration %+v, want 100 observations, p50 %.6f, p99 0.03", f.Duration, 0.001+0.001*50/98)
	}
	if f.Clients == nil || f.Clients.Count != 98 || f.Clients.Mean != 50 {
		t.Errorf("clients per exchange %+v, want 98 exchanges of 50", f.Clients)
	}
	if f.ViewAge == nil || math.Abs(f.ViewAge.P99-(0.01+0.04*0.99)) > 1e-9 {
		t.Errorf("view age %+v, want p99 %.4f", f.ViewAge, 0.01+0.04*0.99)
	}
	if f.Blind == nil || f.Blind.Max != 0.25 || f.Blind.Total != 0.25 {
		t.Errorf("blind %+v, want 0.25 s", f.Blind)
	}
	if f.Scrapes < 2 || f.ScrapeErrors != 0 || f.AgeSeries != "view age p99" {
		t.Errorf("%d scrapes, %d errors, age series %q", f.Scrapes, f.ScrapeErrors, f.AgeSeries)
	}
}

func TestEveryFor(t *testing.T) {
	for _, tt := range []struct{ interval, want time.Duration }{
		{0, time.Second}, {10 * time.Millisecond, MinEvery}, {40 * time.Millisecond, 200 * time.Millisecond}, {time.Second, MaxEvery},
	} {
		if got := EveryFor(tt.interval); got != tt.want {
			t.Errorf("EveryFor(%v) = %v, want %v", tt.interval, got, tt.want)
		}
	}
}

// central is a central replica's scrape: no sync, its decisions without the store and the
// decision path's store errors by reason.
func central(degraded, timeouts, breaker, errs int) string {
	return fmt.Sprintf(`# TYPE rlreplica_degraded_decisions_total counter
rlreplica_degraded_decisions_total %d
# TYPE rlreplica_store_errors_total counter
rlreplica_store_errors_total{op="take",reason="timeout"} %d
rlreplica_store_errors_total{op="take",reason="breaker_open"} %d
rlreplica_store_errors_total{op="take",reason="error"} %d
rlreplica_store_errors_total{op="exchange",reason="timeout"} 99
`, degraded, timeouts, breaker, errs)
}

// The decisions the replicas made without their store are the increase over the scenario,
// summed over nodes (a node that restarted counts from zero), in every mode; a replica that
// does not expose the counter reads nil, never zero.
func TestDegradedDecisions(t *testing.T) {
	s := series(t, 2, time.Second,
		[]string{central(5, 1, 4, 0), central(0, 0, 0, 0)},
		[]string{central(25, 3, 20, 1), central(40, 4, 30, 6)},
		[]string{central(30, 4, 24, 1), central(3, 1, 2, 0)}, // node 1 restarted
	)
	d := s.Figures().Degraded
	want := result.Degraded{Decisions: 25 + 40 + 3, TimedOut: 3 + 4 + 1, BreakerOpen: 20 + 30 + 2, Failed: 1 + 6, From: "rlreplica_degraded_decisions_total"}
	if d == nil || *d != want {
		t.Errorf("degraded %+v, want %+v", d, want)
	}
	if got := d.String(); got != "68 decisions without the store (store calls: 8 timed out, 7 failed, 52 skipped by the open breaker)" {
		t.Errorf("in words: %q", got)
	}
	none := series(t, 1, time.Second, []string{full(1, 0, 0, [3]int{1, 1, 1}, 0.001, 0, 0)}, []string{full(2, 0, 0, [3]int{2, 2, 2}, 0.002, 0, 0)})
	if d := none.Figures().Degraded; d != nil {
		t.Errorf("a replica without the counter: degraded %+v, want nil", d)
	}
}
