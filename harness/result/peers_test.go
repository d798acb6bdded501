package result

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// A system's verdict in the peer table is over every scenario it ran: one fault scenario
// that failed on schedule fails the system even when its run without a fault passed, and a
// generator that fell behind hides a pass but not a failure (outcome.Combine).
func TestPeerTableVerdictIsOverEveryScenario(t *testing.T) {
	sc := func(fault string, pass, bound bool, err string) ScenarioResult {
		r := ScenarioResult{Scenario: Scenario{Name: "sys/" + fault, Target: "sys", Fault: fault}, Pass: pass, GeneratorBound: bound, Error: err}
		r.Outcome = ScenarioOutcome(r)
		return r
	}
	for _, tc := range []struct {
		name string
		scs  []ScenarioResult
		want string
	}{
		{"all pass", []ScenarioResult{sc("", true, false, ""), sc(FaultStop, true, false, ""), sc(FaultKill, true, false, "")}, "PASS"},
		{"a fault fails on schedule", []ScenarioResult{sc("", true, false, ""), sc(FaultStop, false, false, ""), sc(FaultKill, true, false, "")}, "FAIL"},
		{"the base fails", []ScenarioResult{sc("", false, false, ""), sc(FaultStop, true, false, "")}, "FAIL"},
		{"behind, none failed", []ScenarioResult{sc("", true, true, ""), sc(FaultKill, true, false, "")}, "GENERATOR-BOUND"},
		{"behind and failing reads behind", []ScenarioResult{sc("", false, true, ""), sc(FaultKill, true, false, "")}, "GENERATOR-BOUND"},
		{"behind beside a failure on schedule", []ScenarioResult{sc("", true, true, ""), sc(FaultKill, false, false, "")}, "FAIL"},
		{"one could not run beside a failure", []ScenarioResult{sc("", false, false, ""), sc(FaultPause, false, false, "docker")}, "FAIL"},
		{"one could not run beside a pass", []ScenarioResult{sc("", true, false, ""), sc(FaultPause, false, false, "docker")}, "NOT MADE"},
		{"one could not run beside one behind", []ScenarioResult{sc("", true, true, ""), sc(FaultPause, false, false, "docker")}, "NOT MADE"},
		{"only a fault scenario ran", []ScenarioResult{sc(FaultSlow, false, false, "")}, "FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := PeerTable(tc.scs)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			if got := rows[0].Verdict(); got != tc.want {
				t.Errorf("verdict %q (outcome %s), want %q", got, rows[0].Outcome, tc.want)
			}
		})
	}
}

// The side-by-side table names the gate's worst client: on the gated clock, the first of a
// tie, as accounting names it in the max overshoot check.
func TestPeerTableWorstClientIsTheGates(t *testing.T) {
	probe := func(id string, client, arrival, exact float64) ProbeResult {
		var p ProbeResult
		p.ID, p.Overshoot, p.OvershootArrival, p.OvershootExact = id, client, arrival, exact
		return p
	}
	for _, tc := range []struct {
		name   string
		clocks *Clocks
		over   float64
		want   string
	}{
		{"a tie on arrival: the first", &Clocks{Gate: ClockArrival}, 1.05, "probe-uniform2x"},
		{"the client clock's worst when gated on it", &Clocks{Gate: ClockClient}, 1.2, "probe-intermittent"},
		{"a background client worse than every probe: none named", &Clocks{Gate: ClockArrival}, 1.3, ""},
		{"the decision clock's worst when gated on it", &Clocks{Gate: ClockDecision}, 1.15, "probe-sync90"},
		{"the backend's worst when gated on it", &Clocks{Gate: ClockBackend}, 1.15, "probe-sync90"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ScenarioResult{Scenario: Scenario{Name: "sys", Target: "sys"}, MaxOvershoot: tc.over, Clocks: tc.clocks,
				Probes: []ProbeResult{probe("probe-uniform2x", 1.1, 1.05, 1.1), probe("probe-intermittent", 1.2, 1.05, 1.1), probe("probe-sync90", 0.9, 0.9, 1.15)}}
			if got := PeerTable([]ScenarioResult{s})[0].WorstClient; got != tc.want {
				t.Errorf("worst client %q, want %q", got, tc.want)
			}
		})
	}
}

// A system's scenarios on a topology fill the far-zone and partition columns, each with its
// own outcome and the far zone's figures (the farthest zone, wherever it stands in the list);
// a store fault run on the topology leaves the store columns, which are the system's without
// one, as they were; and the verdict is over every scenario.
func TestPeerTableZoneColumns(t *testing.T) {
	zones := []topology.Zone{{Name: "far", Replicas: 4, Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond},
		{Name: "near", Replicas: 4, Latency: 500 * time.Microsecond}}
	sc := func(fault string, zoned bool, o outcome.Outcome, accepted int) ScenarioResult {
		r := ScenarioResult{Scenario: Scenario{Name: "sys/" + fault, Target: "sys", Fault: fault}, Outcome: o, Accepted: accepted, MaxOvershoot: 1.5}
		if zoned {
			r.Conditions.Zones = zones
			r.Zones = []ZoneFigures{{Zone: "far", Overshoot: 0.9, Latency: Percentiles{P99: 210 * time.Millisecond, Max: 300 * time.Millisecond}},
				{Zone: "near", Overshoot: 0.6, Latency: Percentiles{P99: 2 * time.Millisecond}}}
		}
		return r
	}
	for _, tc := range []struct {
		name                    string
		scs                     []ScenarioResult
		far, partition, verdict string // the cells' leading words
		stopAccepted            int
	}{
		{"base and zones", []ScenarioResult{sc("", false, outcome.Pass, 1), sc(FaultStop, false, outcome.Pass, 7),
			sc("", true, outcome.Fail, 2), sc(FaultPartition, true, outcome.Pass, 3), sc(FaultStop, true, outcome.Fail, 99)}, "FAIL", "PASS", "FAIL", 7},
		{"zones pass", []ScenarioResult{sc("", false, outcome.Pass, 1), sc("", true, outcome.Pass, 2), sc(FaultPartition, true, outcome.GeneratorBound, 3)},
			"PASS", "GENERATOR-BOUND", "GENERATOR-BOUND", 0},
		{"no zones", []ScenarioResult{sc("", false, outcome.Pass, 1)}, "not run: its run had no topology", "not run: its run had no topology", "PASS", 0},
		{"far zone only", []ScenarioResult{sc("", true, outcome.Pass, 2)}, "PASS", "not run: not among its run's faults on the topology", "PASS", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := PeerTable(tc.scs)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			r := rows[0]
			cols := r.ZoneColumns()
			for i, want := range []string{tc.far, tc.partition} {
				if got := cols[i].Cell(r); !strings.HasPrefix(got, want) {
					t.Errorf("%s: %q, want it to begin %q", cols[i].Name, got, want)
				}
			}
			if r.Verdict() != tc.verdict {
				t.Errorf("verdict %s, want %s", r.Verdict(), tc.verdict)
			}
			stop := 0
			if r.Stop != nil {
				stop = r.Stop.Accepted
			}
			if stop != tc.stopAccepted {
				t.Errorf("store stopped %+v, want %d accepted (the run without a topology's)", r.Stop, tc.stopAccepted)
			}
			if f := r.FarZone; f != nil && (f.Zone != "far" || f.FarOvershoot != 0.9 || f.FarP99 != 210*time.Millisecond || f.Overshoot != 1.5) {
				t.Errorf("far zone %+v: want zone far's figures (x0.9, p99 210ms) and the gate's x1.5", f)
			}
		})
	}
	// A system without a store says why it was not run through zones.
	r := PeerRow{System: "gubernator-global", NoStore: true, Unzoned: true}
	if got := r.ZoneColumns()[0].Cell(r); got != notRunNoStoreZones {
		t.Errorf("no store: %q", got)
	}
}

// A system whose zones' nodes reach each other through links (HAProxy's peers) waits the
// link to the nearest other zone's nodes, both zones' latencies: its cell says that link,
// and a system with a store its own link to the store.
func TestPeerZoneLinkToThePeers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		zones     string
		peerLinks int
		want      string
	}{
		{"store", "near:4:0.5ms,far:4:40ms±10ms", 0, "PASS: zone far 40ms±10ms each way (near:4:500µs,far:4:40ms±10ms): "},
		{"peers", "near:4:0.5ms,far:4:40ms±10ms", 16, "PASS: zone far 40.5ms±10ms each way to zone near's nodes (near:4:500µs,far:4:40ms±10ms): "},
		{"peers, the nearest of two", "near:2:1ms±1ms,mid:2:10ms,far:4:40ms±10ms", 20, "PASS: zone far 41ms±11ms each way to zone near's nodes ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, err := topology.Parse(tc.zones)
			if err != nil {
				t.Fatal(err)
			}
			s := ScenarioResult{Scenario: Scenario{Name: "sys", Target: "sys"}, Outcome: outcome.Pass, NoStore: tc.peerLinks > 0}
			s.Conditions.Zones, s.Conditions.PeerLinks = top.Zones, tc.peerLinks
			rows := PeerTable([]ScenarioResult{s})
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			if got := rows[0].ZoneColumns()[0].Cell(rows[0]); !strings.HasPrefix(got, tc.want) {
				t.Errorf("far zone cell %q, want it to begin %q", got, tc.want)
			}
		})
	}
}

// make results of a system's run without zones and its run through them gives one row with
// both; two runs made the same way give two rows.
func TestMergePeerRows(t *testing.T) {
	base := PeerRow{System: "envoy", Unzoned: true, Outcome: outcome.Pass, MaxOvershoot: 2}
	zoned := PeerRow{System: "envoy", Zoned: true, Outcome: outcome.Fail, FarZone: &PeerZone{Outcome: outcome.Fail}}
	got := MergePeerRows([]PeerRow{base}, []PeerRow{zoned})
	if len(got) != 1 || got[0].FarZone == nil || got[0].MaxOvershoot != 2 || got[0].Outcome != outcome.Fail {
		t.Errorf("merged %+v: want one row with the base's x2 and the far zone, FAIL", got)
	}
	if got := MergePeerRows([]PeerRow{zoned}, []PeerRow{base}); len(got) != 1 || got[0].FarZone == nil || got[0].MaxOvershoot != 2 {
		t.Errorf("merged the other way %+v", got)
	}
	if got := MergePeerRows([]PeerRow{base}, []PeerRow{base}); len(got) != 2 {
		t.Errorf("two runs without zones: %d rows, want 2", len(got))
	}
}
