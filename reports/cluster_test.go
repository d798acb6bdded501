package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// A master fault's slot ranges and node events are in the scenario's section.
func TestReportShowsTheClusterDuringAFault(t *testing.T) {
	html := generateEdited(t, func(sum *result.Summary) {
		sum.Scenarios[1].Cluster = &result.ClusterFault{Member: "redis-node-0", Node: "127.0.0.1:7000", Every: 100 * time.Millisecond, Polls: 40,
			Ranges: []result.ClusterRange{
				{Slots: "0-5460", MasterFrom: "127.0.0.1:7000", MasterTo: "127.0.0.1:7003", Down: 3900 * time.Millisecond, FirstDown: 14900 * time.Millisecond, Back: 18800 * time.Millisecond},
				{Slots: "5461-10922", MasterFrom: "127.0.0.1:7001", MasterTo: "127.0.0.1:7001", FirstDown: -1, Back: -1},
			},
			Events: []result.ClusterEvent{{At: 18800 * time.Millisecond, Node: "127.0.0.1:7003", From: "replica", To: "master"}}}
	})
	got := rows(html, "slotrange")
	want := []string{"0-5460|127.0.0.1:7000|127.0.0.1:7003|3900.00|14900.00|18800.00", "5461-10922|127.0.0.1:7001|127.0.0.1:7001|0.00|-|-"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slot range rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ev := rows(html, "node-event"); len(ev) != 1 || ev[0] != "18800.00|127.0.0.1:7003|replica|master" {
		t.Errorf("node events %q", ev)
	}
	if !strings.Contains(html, "redis-node-0 (127.0.0.1:7000)") {
		t.Error("the faulted member is not named")
	}
}
