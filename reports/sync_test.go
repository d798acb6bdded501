package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// TestReportSyncHealthPanel: a scenario whose replicas exposed their sync gets its figures,
// "not available" for what they did not expose, and the two charts over time; one without
// sync metrics says why; a run written before the scrape says it was not scraped.
func TestReportSyncHealthPanel(t *testing.T) {
	lag := 0.125
	html := generateEdited(t, func(s *result.Summary) {
		s.Scenarios[0].Sync = &result.SyncHealth{Available: true, Path: "/metrics", Nodes: 4, Scrapes: 40, Every: 200 * time.Millisecond,
			Interval:      40 * time.Millisecond,
			Exchanges:     &result.Exchanges{Attempted: 200, OK: 190, Failed: 6, TimedOut: 4},
			ExchangesFrom: "rlreplica_sync_exchanges_total",
			Duration:      &result.Distribution{Count: 200, P50: 0.0012, P99: 0.0081},
			ViewAge:       &result.Distribution{Count: 900, P99: 0.061},
			Blind:         &result.Blind{Max: 0.5, Total: 0.75, PerNode: []float64{0.5, 0.25, 0, 0}},
			MaxSyncLag:    &lag,
			Series:        []result.SyncPoint{{At: time.Second, OKPerSec: 95, FailedPerSec: 5, Age: 0.05}, {At: 2 * time.Second, OKPerSec: 100, Age: 0.061}},
			AgeSeries:     "view age p99"}
		s.Scenarios[0].StoreCommands, s.Scenarios[0].StoreOps, s.Scenarios[0].Requests = 100, 400, 1000
		s.Scenarios[0].StoreCPU = &result.StoreCPU{Seconds: 0.3, Percent: 2.5, MsPerKiloRequest: 0.3}
		s.Scenarios[1].Sync = &result.SyncHealth{Why: "central mode does not sync with the store"}
		s.Scenarios[1].StoreCPUWhy = "the store started again between its CPU readings"
		s.Scenarios[2].Sync = nil
		s.Scenarios[0].Claims = []result.Claim{
			{Text: "cost", Figure: "14 store commands/s", Why: "sync failing (750 of 800 exchanges failed)"},
			{Text: "cost", Figure: "200 store commands/s", NotMeasured: true, Why: "no sync metrics"},
		}
	})
	if claims := rows(html, "claim"); len(claims) < 2 || claims[0] != "cost|14 store commands/s|not confirmed: sync failing (750 of 800 exchanges failed)" ||
		claims[1] != "cost|200 store commands/s|not measured: no sync metrics" {
		t.Errorf("claims %q", claims)
	}
	got := rows(html, "syncrow")
	want := []string{
		"exchanges|200 attempted: 190 ok, 6 failed, 4 timed out (95.0 % ok) [rlreplica_sync_exchanges_total]",
		"exchange duration|p50 1.2 ms, p99 8.1 ms",
		"clients per exchange|not available",
		"view age at decision|p99 61.0 ms",
		"blind time (no good exchange for &gt; 2 intervals)|worst node 0.50 s, all nodes 0.75 s",
		"sync lag (most seen at a scrape)|125.0 ms",
		"scrapes|40 of 4 nodes every 200ms on /metrics, 0 failed",
		"sync health|not available: central mode does not sync with the store",
		"sync health|not available: not scraped in this run",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sync rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{
		"Sync exchanges per second, every node: " + "sliding_window/delayed",
		"The view&#39;s age (view age p99): sliding_window/delayed",
		"per request 0.100 round trips and 0.300 commands run inside scripts;\nRedis CPU 2.5 % of a core (0.30 ms per 1,000 requests)",
		"Redis CPU not measured: the store started again between its CPU readings",
	} {
		if !strings.Contains(html, s) {
			t.Errorf("%q missing", s)
		}
	}
	if n := strings.Count(html, `class="chart sync-chart"`); n != 2 {
		t.Errorf("%d sync charts, want 2 (exchanges, view age) for the one scenario with a series", n)
	}
}
