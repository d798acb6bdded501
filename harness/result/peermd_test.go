package result

import (
	"testing"
	"time"
)

func TestPeerTableMarkdown(t *testing.T) {
	rows := []PeerRow{
		{System: "replica sliding_window/delayed", Gated: true, Window: 12 * time.Second, BoundaryOvershoot: 1, MaxOvershoot: 1.05, WorstClient: "probe-boundary-burst",
			P99: 2345 * time.Microsecond, StorePerRequest: 0.1234, StoreOpsPerRequest: 0.5, Verdict: "PASS",
			Stop:  &PeerFault{Accepted: 900, Rejected: 10, Errors: 0, Verdict: "PASS", P99: 3 * time.Millisecond, Overshoot: 1.2},
			Pause: &PeerFault{Accepted: 800, Rejected: 12, Errors: 3, Timeouts: 3, Verdict: "FAIL", P99: 5 * time.Second, Overshoot: 1}},
		{System: "gubernator-global", Window: 12 * time.Second, BoundaryOvershoot: 2, MaxOvershoot: 2.1, WorstClient: "probe-x", FalseRejects: 4, Errors: 25472,
			P99: time.Millisecond, NoStore: true, Verdict: "FAIL"},
		{System: "ulule", Window: 12 * time.Second, Verdict: "PASS"},
	}
	got := PeerTableMarkdown(rows)
	want := PeerTableHeader + "\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| replica sliding_window/delayed (gated) | 12s | x1.000 | probe-boundary-burst x1.050 | 0 | 0 | 2.35ms | 0.123 (0.500 ops) | PASS: 900 ok, 10 rejected, 0 errors (0 timeouts), p99 3ms, x1.200 | FAIL: 800 ok, 12 rejected, 3 errors (3 timeouts), p99 5s, x1.000 | PASS |\n" +
		"| gubernator-global | 12s | x2.000 | probe-x x2.100 | 4 | 25472 | 1ms | no store (peer traffic not measured) | no store: its fault is a node | no store: its fault is a node | FAIL |\n" +
		"| ulule | 12s | x0.000 |  x0.000 | 0 | 0 | 0s | 0.000 (0.000 ops) | not run | not run | PASS |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
