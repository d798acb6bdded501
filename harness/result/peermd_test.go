package result

import (
	"slices"
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
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| replica sliding_window/delayed (gated) | 12s | x1.000 | probe-boundary-burst x1.050 | 0 | 0 | 2.35ms | 0.123 (0.500 ops) | PASS: 900 ok, 10 rejected, 0 errors (0 timeouts), p99 3ms, x1.200 | FAIL: 800 ok, 12 rejected, 3 errors (3 timeouts), p99 5s, x1.000 | " +
		"PASS: 910 ok, 11 rejected, 0 errors (0 timeouts), p99 52ms, x1.100 | not run | PASS: 950 ok, 9 rejected, 0 errors (0 timeouts, 2 routing errors apart), p99 702µs, x1.020 | not run: its run had no topology | not run: its run had no topology | PASS |\n" +
		"| gubernator-global | 12s | x2.000 | probe-x x2.100 | 4 | 25472 | 1ms | no store (peer traffic not measured) | no store: its fault is a node | no store: its fault is a node | " +
		"no store: its fault is a node | no store: its fault is a node | FAIL: 700 ok, 5 rejected, 329 errors (0 timeouts, 0 routing errors apart), p99 36s, x2.000 | not run: no store, and no zones given to its nodes (docs/zones.md#links-between-the-nodes-of-a-limiter-without-a-store) | not run: no store, and no zones given to its nodes (docs/zones.md#links-between-the-nodes-of-a-limiter-without-a-store) | FAIL |\n" +
		"| ulule | 12s | x0.000 |  x0.000 | 0 | 0 | 0s | 0.000 (0.000 ops) | PASS: 10 ok, 0 rejected, 0 errors (0 timeouts), p99 not measured (no request answered during the fault), x0.000 | not run | not run | not run | not run | not run: its run had no topology | not run: its run had no topology | PASS |\n" +
		"| nginx-workers | 12s | x0.000 |  x0.000 | 0 | 0 | 0s | no store (peer traffic not measured) | no store | no store | no store | no store | not run: one node, none left to take its traffic | not run: no store, and no zones given to its nodes (docs/zones.md#links-between-the-nodes-of-a-limiter-without-a-store) | not run: no store, and no zones given to its nodes (docs/zones.md#links-between-the-nodes-of-a-limiter-without-a-store) | PASS |\n"
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
// ones stood (gated or not), the others' rows stay as they were, a new system comes last, a
// row of the generator before the zone columns is kept with them not run, and a kept row of
// other columns is refused.
func TestKeepPeerRows(t *testing.T) {
	sep := strings.Split(PeerTableMarkdown(nil), "\n")[1]
	cells := func(system, verdict string) []string {
		return append(append([]string{system}, slices.Repeat([]string{"x"}, strings.Count(PeerTableHeader, "|")-3)...), verdict)
	}
	row := func(system, verdict string) string {
		return strings.TrimSuffix(joinCells(cells(system, verdict)), "\n")
	}
	before := func(system, store, verdict string) string { // the generator's row before the zone columns
		c := cells(system, verdict)
		c[7] = store
		return strings.TrimSuffix(joinCells(append(c[:len(c)-3:len(c)-3], verdict)), "\n")
	}
	page := strings.Join([]string{"# Results", "prose", PeerTableBegin, PeerTableHeader, sep,
		row("replica sliding_window/delayed (gated)", "PASS"), row("traefik-redis", "FAIL"),
		before("nginx-workers", "no store (peer traffic not measured)", "GENERATOR-BOUND"), before("ulule", "1.000 (3.000 ops)", "FAIL"),
		PeerTableEnd, ""}, "\n")
	fresh := []PeerRow{{System: "traefik-redis", Gated: true, Window: 12 * time.Second, Unzoned: true, Outcome: outcome.Pass},
		{System: "traefik-memory", Window: 12 * time.Second, NoStore: true, Unzoned: true, Outcome: outcome.Fail}}
	got, err := KeepPeerRows(page, fresh)
	if err != nil {
		t.Fatal(err)
	}
	nginx := cells("nginx-workers", "GENERATOR-BOUND")
	nginx[7], nginx[13], nginx[14] = "no store (peer traffic not measured)", notRunNoStoreZones, notRunNoStoreZones
	ulule := cells("ulule", "FAIL")
	ulule[7], ulule[13], ulule[14] = "1.000 (3.000 ops)", notRunNoTopology, notRunNoTopology
	traefik := fresh[0].cells() // run again without zones: the page's zone cells stay
	traefik[13], traefik[14] = "x", "x"
	want := strings.Join([]string{PeerTableHeader, sep, row("replica sliding_window/delayed (gated)", "PASS")}, "\n") + "\n" +
		joinCells(traefik) + joinCells(nginx) + joinCells(ulule) + joinCells(fresh[1].cells())
	if got != want {
		t.Errorf("kept:\n%s\nwant:\n%s", got, want)
	}

	old := strings.Replace(page, row("traefik-redis", "FAIL"), "| traefik-redis | 12s | FAIL |", 1)
	if _, err := KeepPeerRows(old, nil); err == nil || !strings.Contains(err.Error(), "traefik-redis has 4 column bars") {
		t.Errorf("a kept row of other columns: err %v, want it refused", err)
	}
	if _, err := KeepPeerRows("# no table", fresh); err == nil {
		t.Error("a page without the markers: no error")
	}
}

// A run made only through zones replaces the zone columns of its systems' rows on the page and
// keeps their other columns, the verdict over both; a run made again without a topology keeps
// the page's zone columns, its verdict over theirs and its own scenarios'.
func TestKeepPeerRowsZones(t *testing.T) {
	page := func(rows ...PeerRow) string {
		return strings.Join([]string{"# Results", PeerTableBegin, strings.TrimSuffix(PeerTableMarkdown(rows), "\n"), PeerTableEnd, ""}, "\n")
	}
	base := PeerRow{System: "envoy-ratelimit", Window: time.Minute, BoundaryOvershoot: 2, MaxOvershoot: 2, WorstClient: "probe-boundary-burst",
		Unzoned: true, Outcome: outcome.Pass, Stop: &PeerFault{Accepted: 10, Outcome: outcome.Pass}}
	far := &PeerZone{Zone: "far", Link: LinkFigures{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond}, Zones: "near:1:0.5ms,far:1:40ms±10ms",
		Overshoot: 1.5, FarOvershoot: 0.8, FarP99: 210 * time.Millisecond, FarMax: 300 * time.Millisecond, Outcome: outcome.Fail}
	zoned := PeerRow{System: "envoy-ratelimit", Zoned: true, FarZone: far, Outcome: outcome.Fail}

	got, err := KeepPeerRows(page(base), []PeerRow{zoned})
	if err != nil {
		t.Fatal(err)
	}
	both := base
	both.Zoned, both.FarZone, both.Outcome = true, far, outcome.Fail
	if want := PeerTableMarkdown([]PeerRow{both}); got != want {
		t.Errorf("zones over the page's row:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(got, "| PASS: 10 ok,") || !strings.Contains(got, "| FAIL: zone far 40ms±10ms each way") ||
		!strings.Contains(got, "| not run: not among its run's faults on the topology | FAIL |") {
		t.Errorf("the row lacks the page's store cell, the far zone's or the partition's reason:\n%s", got)
	}

	// The run without zones made again, passing: the far zone's FAIL stays in the verdict.
	got, err = KeepPeerRows(page(both), []PeerRow{base})
	if err != nil {
		t.Fatal(err)
	}
	if want := PeerTableMarkdown([]PeerRow{both}); got != want {
		t.Errorf("the page's zones kept:\n%s\nwant:\n%s", got, want)
	}
	// The far zone made again, passing, beside a page whose verdict was only its far zone's
	// FAIL: the verdict keeps the page's (a row's verdict covers scenarios no cell shows).
	far2 := *far
	far2.Outcome = outcome.Pass
	got, err = KeepPeerRows(page(both), []PeerRow{{System: "envoy-ratelimit", Zoned: true, FarZone: &far2, Outcome: outcome.Pass}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "| PASS: zone far") || !strings.HasSuffix(got, "| FAIL |\n") {
		t.Errorf("far zone made again:\n%s", got)
	}
}

// TestZoneCellReasons: a zone column not run says why, and a run on a topology that left
// the fault out says so whether the system has a store or not.
func TestZoneCellReasons(t *testing.T) {
	far := &PeerZone{Zone: "far", Link: LinkFigures{Latency: 40 * time.Millisecond}, Zones: "near:4:0.5ms,far:4:40ms", Outcome: outcome.Fail}
	for _, tc := range []struct {
		name string
		row  PeerRow
		want string
	}{
		{"store, no topology", PeerRow{System: "ulule", Unzoned: true}, notRunNoTopology},
		{"no store, no topology", PeerRow{System: "gubernator-global", NoStore: true, Unzoned: true}, notRunNoStoreZones},
		{"store, zoned, fault left out", PeerRow{System: "redis_rate", Zoned: true, FarZone: far}, notRunNotAmongFaults},
		{"no store, zoned, fault left out", PeerRow{System: "haproxy-peers", NoStore: true, Zoned: true, FarZone: far}, notRunNotAmongFaults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (PeerZoneColumn{}).Cell(tc.row); got != tc.want {
				t.Errorf("partition cell %q, want %q", got, tc.want)
			}
		})
	}
}
