package reports

import (
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
		"<th>store slow</th><th>store restarted</th><th>node killed</th>",
		"0 timeouts, 3 routing errors apart",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
