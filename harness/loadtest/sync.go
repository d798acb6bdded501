package loadtest

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/limiters"
)

// syncScraper is the scraper of a scenario's replicas' sync metrics, or why there is none:
// the built-in replica syncs in delayed mode only; a target file names its metrics. The
// built-in replica is scraped in every mode for its decisions made without the store (a
// central replica whose store calls time out decides alone): in the modes that do not sync,
// the scraper reads those alone and why says there is no sync.
func (s sut) syncScraper(cfg Config, sc result.Scenario, urls []string) (synchealth.Scraper, string) {
	if s.t == nil {
		if limiters.Mode(sc.Mode) != limiters.ModeDelayed {
			r := synchealth.Replica()
			names := synchealth.Names{Path: r.Path, StoreErrors: r.StoreErrors, Degraded: r.Degraded}
			return synchealth.Scraper{URLs: urls, Names: names, Every: synchealth.EveryFor(0)},
				fmt.Sprintf("%s mode does not sync with the store", sc.Mode)
		}
		iv := cfg.scaled(cfg.SyncInterval)
		return synchealth.Scraper{URLs: urls, Names: synchealth.Replica(), Interval: iv, Every: synchealth.EveryFor(iv)}, ""
	}
	m := s.t.Metrics
	if m == nil {
		return synchealth.Scraper{}, fmt.Sprintf("the target file %s names no metrics (see its metrics: field)", s.t.Name)
	}
	names := synchealth.Names{Path: m.Path, Exchanges: m.Exchanges, Duration: m.ExchangeDuration, Clients: m.ExchangeClients,
		ViewAge: m.ViewAge, Blind: m.Blind, SyncLag: m.SyncLag}
	return synchealth.Scraper{URLs: urls, Names: names, Interval: m.SyncInterval, Every: synchealth.EveryFor(m.SyncInterval)}, ""
}

// cpuMeter reads the store's CPU at the traffic's start and end.
type cpuMeter struct {
	rdb    *redis.Client
	before commandstats.CPU
	at     time.Time
	err    error
}

func (m *cpuMeter) start(ctx context.Context, now time.Time) {
	if m.rdb == nil {
		return
	}
	m.before, m.err = commandstats.ReadCPU(ctx, m.rdb)
	m.at = now
}

// result is the store's CPU between start and now, or why it was not measured.
func (m *cpuMeter) result(ctx context.Context, now time.Time, requests int, why string) (*result.StoreCPU, string) {
	if m.rdb == nil {
		return nil, why
	}
	if m.at.IsZero() {
		return nil, "the traffic did not start"
	}
	if m.err != nil {
		return nil, m.err.Error()
	}
	after, err := commandstats.ReadCPU(ctx, m.rdb)
	if err != nil {
		return nil, err.Error()
	}
	sec, pct, err := commandstats.CPUUse(m.before, after, now.Sub(m.at))
	if err != nil {
		return nil, err.Error()
	}
	c := &result.StoreCPU{Seconds: sec, Percent: pct}
	if requests > 0 {
		c.MsPerKiloRequest = 1000 * sec / float64(requests) * 1000
	}
	return c, ""
}
