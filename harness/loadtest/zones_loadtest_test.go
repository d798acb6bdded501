//go:build loadtest

package loadtest

import (
	"context"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/topology"
)

// quickZones is the quick load test's topology: half the replicas beside the store, half a
// coast away (an 80 ms ± 20 ms round trip).
const quickZones = "near:4:0.5ms,far:4:40ms±10ms"

// TestLoadtestZones runs the design on a far zone, without a fault and with the far zone
// partitioned from the store (refused) while the near one keeps it: the promises hold, and
// the figures are given per zone, the far zone's answers carrying its round trip.
func TestLoadtestZones(t *testing.T) {
	for _, f := range []string{result.FaultNone, result.FaultPartition} {
		name := "far-zone"
		if f != result.FaultNone {
			name = f
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cfg := quickConfig(t)
			var err error
			if cfg.Zones, err = topology.Parse(quickZones); err != nil {
				t.Fatal(err)
			}
			cfg.FailOpen = f != result.FaultNone
			cfg.Faults = []string{f}
			cfg.Only = "delayed"
			if f != result.FaultNone {
				cfg.Only = "delayed/" + f
			}
			sum := runMeasured(ctx, t, cfg)
			if len(sum.Scenarios) != 1 || len(sum.Config.Zones) != 2 {
				t.Fatalf("%d scenarios, zones %v: want one scenario on two zones", len(sum.Scenarios), sum.Config.Zones)
			}
			sc := sum.Scenarios[0]
			if f != result.FaultNone {
				checkFaultScenario(t, cfg, sc)
				if sc.FaultTiming.Member != "zone-far" || !hasCheck(sc, "overshoot during the outage") {
					t.Errorf("partition on %s, checks %v: want the far zone cut and judged with its bound", sc.FaultTiming.Member, sc.Checks)
				}
			}
			for _, c := range sc.Checks {
				if !c.Pass {
					t.Errorf("%s: %s", sc.Name, c)
				}
			}
			if len(sc.Zones) != 2 || len(sc.Conditions.ZoneLinks) != 2 {
				t.Fatalf("zone figures %+v, links %v: want two of each", sc.Zones, sc.Conditions.ZoneLinks)
			}
			near, far := sc.Zones[0], sc.Zones[1]
			for _, z := range sc.Zones {
				t.Log(z.Line())
				if z.Requests == 0 || z.Accepted == 0 {
					t.Errorf("zone %s answered %d requests, %d accepted", z.Zone, z.Requests, z.Accepted)
				}
			}
			// Past its budget a far replica's decision waits for the store, a round trip of
			// 60 to 100 ms: the far zone's slowest answers carry it, the near zone's do not.
			if far.Latency.Max < 60*time.Millisecond || near.Latency.P99 >= far.Latency.Max {
				t.Errorf("answer times: near p99 %v, far max %v: want the far zone's slowest to carry its round trip", near.Latency.P99, far.Latency.Max)
			}
			if !sum.Pass || sum.GeneratorBound {
				t.Errorf("verdict pass=%v generator-bound=%v failed=%v", sum.Pass, sum.GeneratorBound, sum.Failed)
			}
		})
	}
}
