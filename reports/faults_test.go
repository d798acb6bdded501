package reports

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// A fault's timing, as planned and as it happened, and the routing errors kept apart are in
// the scenario's section; the peers table has a column for every fault.
func TestReportShowsTheFaultTiming(t *testing.T) {
	html := generateEdited(t, func(sum *result.Summary) {
		sc := &sum.Scenarios[1]
		sc.Fault = result.FaultKill
		sc.FaultTiming = &result.FaultTiming{Fault: result.FaultKill, Member: "replica-7",
			Planned: result.Interval{From: 14400 * time.Millisecond, To: 20400 * time.Millisecond},
			Began:   14401 * time.Millisecond, Down: 14420 * time.Millisecond, Mending: 20401 * time.Millisecond, Back: 20950 * time.Millisecond,
			Routed: &result.Interval{From: 14300 * time.Millisecond, To: 22400 * time.Millisecond}}
		sc.Errors.Routing = 3
		sc.Target = "mine"
	})
	for _, want := range []string{
		"replica-kill on replica-7: planned from 14400.00 ms to 20400.00 ms; taken down from 14401.00 ms (down at 14420.00 ms), brought back from 20401.00 ms, answering again at 20950.00 ms",
		"the harness sent its requests to the other replicas from 14300.00 ms to 22400.00 ms",
		"3 requests sent to the killed replica are the harness's routing errors, in no other count.",
		"<th>store slow</th><th>store restarted</th><th>node killed</th><th>far zone</th><th>partition</th>",
		"0 timeouts, 3 routing errors apart",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// A system without a store (a target file that declares none) has no store chart of zeros: the
// page says there is no store where the chart and the figures would be.
func TestReportSaysNoStore(t *testing.T) {
	t.Run("no scenario has a store", func(t *testing.T) {
		html := generateEdited(t, func(sum *result.Summary) {
			for i := range sum.Scenarios {
				sum.Scenarios[i].NoStore, sum.Scenarios[i].StoreCmdPerSec = true, 0
				sum.Scenarios[i].Target = "mine"
			}
		})
		if peers := rows(html, "peer"); len(peers) == 0 || !strings.Contains(peers[0], "|no store|") {
			t.Errorf("peer rows %q: want the store column to say no store", peers)
		}
		if strings.Contains(html, ">Store commands per second</text>") {
			t.Error("a store chart for a run without a store")
		}
		for _, want := range []string{
			`<p class="nostore">Store commands per second: no store in sliding_window/delayed, sliding_window/delayed/store-stop, fixed_window/central`,
			`<p class="storecost">No store: the system keeps its counters among its own nodes`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("the report lacks %q", want)
			}
		}
		if n := strings.Count(html, "; no store; fleet"); n != 3 {
			t.Errorf("%d scenario lines say no store, want 3", n)
		}
	})
	t.Run("one scenario has none", func(t *testing.T) {
		html := generateEdited(t, func(sum *result.Summary) { sum.Scenarios[2].NoStore = true })
		chart := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(html, -1)
		var store string
		for _, c := range chart {
			if strings.Contains(c, ">Store commands per second</text>") {
				store = c
			}
		}
		if store == "" || strings.Contains(store, ">fixed_window/central</text>") || !strings.Contains(store, ">sliding_window/delayed</text>") {
			t.Errorf("the store chart should name the two scenarios with a store and not fixed_window/central")
		}
		if !strings.Contains(html, `no store in fixed_window/central (`) {
			t.Error("the store-less scenario is not named")
		}
	})
}
