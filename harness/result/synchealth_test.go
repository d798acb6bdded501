package result

import (
	"strings"
	"testing"
)

func TestSyncRowsSayNotAvailableAndUnits(t *testing.T) {
	lag := 6.9
	tests := []struct {
		name string
		h    *SyncHealth
		want []string
	}{
		{"not scraped", nil, []string{"sync health=not available: not scraped in this run"}},
		{"nothing exposed", &SyncHealth{Why: "the replicas' /metrics exposes no sync metric"}, []string{"sync health=not available: the replicas' /metrics exposes no sync metric"}},
		{"lag in seconds, duration in µs", &SyncHealth{Available: true, MaxSyncLag: &lag, Duration: &Distribution{P50: 0.0004, P99: 0.0025}}, []string{
			"exchanges=not available", "exchange duration=p50 400 µs, p99 2.5 ms", "clients per exchange=not available",
			"view age at decision=not available", "blind time (no good exchange for > 2 intervals)=not available",
			"sync lag (most seen at a scrape)=6.90 s", "scrapes=0 of 0 nodes every 0s on , 0 failed"}},
		{"no exchange attempted", &SyncHealth{Available: true, Exchanges: &Exchanges{}, ExchangesFrom: "x_total"}, []string{
			"exchanges=0 attempted: 0 ok, 0 failed, 0 timed out [x_total]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range tt.h.Rows() {
				got = append(got, r.Name+"="+r.Value)
			}
			if len(got) < len(tt.want) || strings.Join(got[:len(tt.want)], "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rows:\n%s\nwant them to start:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
