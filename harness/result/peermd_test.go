package result

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

func TestPeerTableMarkdown(t *testing.T) {
	rows := []PeerRow{
		{System: "replica sliding_window/delayed", Gated: true, Window: 12 * time.Second, BoundaryOvershoot: 1, MaxOvershoot: 1.05, WorstClient: "probe-boundary-burst",
			P99: 2345 * time.Microsecond, StorePerRequest: 0.1234, StoreOpsPerRequest: 0.5, Outcome: outcome.Pass,
			Stop:  &PeerFault{Accepted: 900, Rejected: 10, Errors: 0, Outcome: outcome.Pass, P99: 3 * time.Millisecond, Timed: 500, Overshoot: 1.2},
			Pause: &PeerFault{Accepted: 800, Rejected: 12, Errors: 3, Timeouts: 3, Outcome: outcome.Fail, P99: 5 * time.Second, Timed: 500, Overshoot: 1},
			Slow:  &PeerFault{Accepted: 910, Rejected: 11, Outcome: outcome.Pass, P99: 52 * time.Millisecond, Timed: 500, Overshoot: 1.1},
			Kill:  &PeerFault{Accepted: 950, Rejected: 9, RoutingErrors: 2, Outcome: outcome.Pass, P99: 702 * time.Microsecond, Timed: 500, Overshoot: 1.02}},
		{System: "gubernator-global", Window: 12 * time.Second, BoundaryOvershoot: 2, MaxOvershoot: 2.1, WorstClient: "probe-x", FalseRejects: 4, Errors: 25472,
			P99: time.Millisecond, NoStore: true, Outcome: outcome.Fail,
			Kill: &PeerFault{Accepted: 700, Rejected: 5, Errors: 329, Outcome: outcome.Fail, P99: 36 * time.Second, Timed: 500, Overshoot: 2}},
		{System: "ulule", Window: 12 * time.Second, Outcome: outcome.Pass, Stop: &PeerFault{Accepted: 10, Outcome: outcome.Pass}},
		// One node and no store: no fault it could have, each saying why.
		{System: "nginx-workers", Window: 12 * time.Second, NoStore: true, Nodes: 1, Outcome: outcome.Pass},
	}
	got := PeerTableMarkdown(rows)
	want := PeerTableHeader + "\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| replica sliding_window/delayed (gated) | 12s | x1.000 | probe-boundary-burst x1.050 | 0 | 0 | 2.35ms | 0.123 (0.500 ops) | PASS: 900 ok, 10 rejected, 0 errors (0 timeouts), p99 3ms, x1.200 | FAIL: 800 ok, 12 rejected, 3 errors (3 timeouts), p99 5s, x1.000 | " +
		"PASS: 910 ok, 11 rejected, 0 errors (0 timeouts), p99 52ms, x1.100 | not run | PASS: 950 ok, 9 rejected, 0 errors (0 timeouts, 2 routing errors apart), p99 702µs, x1.020 | PASS |\n" +
		"| gubernator-global | 12s | x2.000 | probe-x x2.100 | 4 | 25472 | 1ms | no store (peer traffic not measured) | no store: its fault is a node | no store: its fault is a node | " +
		"no store: its fault is a node | no store: its fault is a node | FAIL: 700 ok, 5 rejected, 329 errors (0 timeouts, 0 routing errors apart), p99 36s, x2.000 | FAIL |\n" +
		"| ulule | 12s | x0.000 |  x0.000 | 0 | 0 | 0s | 0.000 (0.000 ops) | PASS: 10 ok, 0 rejected, 0 errors (0 timeouts), p99 not measured (no request answered during the fault), x0.000 | not run | not run | not run | not run | PASS |\n" +
		"| nginx-workers | 12s | x0.000 |  x0.000 | 0 | 0 | 0s | no store (peer traffic not measured) | no store | no store | no store | no store | not run: one node, none left to take its traffic | PASS |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A fault's p99 keeps its significant digits: a node-killed scenario's 702µs was shown as
// "p99 0s" when every cell was rounded to the millisecond.
func TestSignificant(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{702 * time.Microsecond, "702µs"},
		{2345 * time.Microsecond, "2.35ms"},
		{3 * time.Millisecond, "3ms"},
		{52_400 * time.Microsecond, "52.4ms"},
		{1_614_850 * time.Microsecond, "1.61s"},
		{36 * time.Second, "36s"},
		{999, "999ns"},
		{0, "0s"},
	} {
		if got := Significant(tt.d, 3).String(); got != tt.want {
			t.Errorf("Significant(%v, 3) = %s, want %s", tt.d, got, tt.want)
		}
	}
}

// make results with one run made again: that run's systems get their new rows where the old
// ones stood (gated or not), the others' rows stay as they were, a new system comes last, and a
// kept row of another generator's columns is refused.
func TestKeepPeerRows(t *testing.T) {
	sep := strings.Split(PeerTableMarkdown(nil), "\n")[1]
	row := func(system, verdict string) string {
		return "| " + system + strings.Repeat(" | x", strings.Count(PeerTableHeader, "|")-3) + " | " + verdict + " |"
	}
	page := strings.Join([]string{"# Results", "prose", PeerTableBegin, PeerTableHeader, sep,
		row("replica sliding_window/delayed (gated)", "PASS"), row("traefik-redis", "FAIL"), row("nginx-workers", "GENERATOR-BOUND"),
		PeerTableEnd, ""}, "\n")
	fresh := PeerTableMarkdown(nil) + row("traefik-redis (gated)", "PASS") + "\n" + row("traefik-memory", "FAIL") + "\n"
	got, err := KeepPeerRows(page, fresh)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{PeerTableHeader, sep, row("replica sliding_window/delayed (gated)", "PASS"),
		row("traefik-redis (gated)", "PASS"), row("nginx-workers", "GENERATOR-BOUND"), row("traefik-memory", "FAIL")}, "\n") + "\n"
	if got != want {
		t.Errorf("kept:\n%s\nwant:\n%s", got, want)
	}

	old := strings.Replace(page, row("nginx-workers", "GENERATOR-BOUND"), "| nginx-workers | 12s | GENERATOR-BOUND |", 1)
	if _, err := KeepPeerRows(old, fresh); err == nil || !strings.Contains(err.Error(), "nginx-workers has 4 column bars") {
		t.Errorf("a kept row of other columns: err %v, want it refused", err)
	}
	if _, err := KeepPeerRows("# no table", fresh); err == nil {
		t.Error("a page without the markers: no error")
	}
}
