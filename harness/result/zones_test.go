package result

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/topology"
)

// A zone's line names what it waits to reach its counts: its store link, or, for a system
// without a store, its link to the nearest other zone's nodes, never a store it does not have.
func TestZoneLineSaysWhatTheZoneWaits(t *testing.T) {
	zones := []topology.Zone{
		{Name: "near", Replicas: 4, Latency: 500 * time.Microsecond},
		{Name: "far", Replicas: 4, Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond},
	}
	for _, tc := range []struct {
		name      string
		peerLinks int
		want      map[string]string // zone: what its line says it waits
		not       string
	}{
		{"a store", 0, map[string]string{"near": "(4 replicas, store 500µs each way)", "far": "(4 replicas, store 40ms±10ms each way)"}, "nodes"},
		{"no store, links between the zones' nodes", 32, map[string]string{
			"near": "(4 replicas, 40.5ms±10ms each way to zone far's nodes)",
			"far":  "(4 replicas, 40.5ms±10ms each way to zone near's nodes)"}, "store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs := []ZoneFigures{
				{Zone: "near", Replicas: []int{0, 1, 2, 3}, Link: LinkFigures{Latency: zones[0].Latency}},
				{Zone: "far", Replicas: []int{4, 5, 6, 7}, Link: LinkFigures{Latency: zones[1].Latency, Jitter: zones[1].Jitter}},
			}
			Conditions{Zones: zones, PeerLinks: tc.peerLinks}.ZonePeers(figs)
			for _, z := range figs {
				line := z.Line()
				if !strings.Contains(line, tc.want[z.Zone]) {
					t.Errorf("zone %s: %q, want it to say %q", z.Zone, line, tc.want[z.Zone])
				}
				if strings.Contains(line, tc.not) {
					t.Errorf("zone %s: %q says %q", z.Zone, line, tc.not)
				}
			}
		})
	}
}
