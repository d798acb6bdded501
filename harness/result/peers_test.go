package result

import "testing"

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
