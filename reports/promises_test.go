package reports

import (
	"regexp"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// testRun is the committed run's summary: sliding_window/delayed (gated), its store-stop
// scenario (gated, overshoot after recovery failed at 1.3) and fixed_window/central (a
// comparison, max overshoot 2).
func testRun(t *testing.T) result.Summary {
	t.Helper()
	s, err := result.Read[result.Summary]("testdata/run", result.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addCheck(s *result.Summary, scenario string, c result.Check) {
	for i := range s.Scenarios {
		if s.Scenarios[i].Name == scenario {
			s.Scenarios[i].Checks = append(s.Scenarios[i].Checks, c)
		}
	}
}

// promiseWant is what a promise's line says: its result, why, how many scenarios and checks it
// was judged over and failed in, and its worst check (scenario, check, figure, client, anchor).
type promiseWant struct {
	result, why               string
	scenarios, checks, failed int
	worstScenario, worstCheck string
	figure                    float64
	tie                       bool
	client, anchor            string
	probe                     bool
}

func TestPromises(t *testing.T) {
	const delayed, stop = "sliding_window/delayed", "sliding_window/delayed/store-stop"
	notJudged := promiseWant{result: promiseNotMeasured, why: beforeJudged}
	tests := []struct {
		name   string
		change func(*result.Summary)
		want   map[string]promiseWant
	}{
		{"the committed run", func(*result.Summary) {}, map[string]promiseWant{
			// The comparison's x2 is not a gate; the fail-open scenario's recovery is.
			PromiseOvershoot: {result: promiseFail, scenarios: 2, checks: 2, failed: 1, worstScenario: stop, worstCheck: "overshoot after recovery",
				figure: 1.3, client: "probe-uniform2x", probe: true, anchor: "client-sliding_window_delayed_store-stop--probe-uniform2x"},
			PromiseFalseRejects: {result: promisePass, scenarios: 2, checks: 2, worstScenario: delayed, worstCheck: "false rejects", tie: true},
			// Its worst names no client: the link goes to the scenario.
			PromiseFailOpen: {result: promisePass, scenarios: 1, checks: 2, worstScenario: stop, worstCheck: "overshoot during the outage",
				figure: 1.4, anchor: "scenario-sliding_window_delayed_store-stop"},
			PromiseNoLockout: notJudged,
		}},
		{"no fault scenario", func(s *result.Summary) { s.Scenarios = append(s.Scenarios[:1], s.Scenarios[2:]...) }, map[string]promiseWant{
			PromiseOvershoot: {result: promisePass, scenarios: 1, checks: 1, worstScenario: delayed, worstCheck: "max overshoot", figure: 1,
				anchor: "scenario-sliding_window_delayed"},
			PromiseFailOpen: {result: promiseNotMeasured, why: "this run has no store fault scenario (harness loadtest --faults store-stop,...; --fail-open=false leaves them out)"},
		}},
		{"a system without a store, its node killed", func(s *result.Summary) {
			s.Scenarios[1].Fault = result.FaultKill
			for i := range s.Scenarios {
				s.Scenarios[i].NoStore = true
			}
			for i, c := range s.Scenarios[1].Checks {
				if PromiseOf(c.Name) == PromiseFailOpen {
					s.Scenarios[1].Checks[i].Name = "errors while a node is down"
				}
			}
		}, map[string]promiseWant{
			PromiseFailOpen: {result: promiseNotMeasured, why: "the system has no store to take away (it keeps its counters among its own nodes)"},
		}},
		{"the checks the harness adds", func(s *result.Summary) {
			addCheck(s, delayed, result.Check{Name: "locked-out clients", Figure: 1, Op: "==", Threshold: 0,
				Detail: "probe-uniform2x: admitted 300 of 600 in a window while it sent 1200"})
			addCheck(s, stop, result.Check{Name: "locked-out clients", Figure: 0, Op: "==", Threshold: 0, Pass: true})
			addCheck(s, stop, result.Check{Name: "false rejects (client clock)", Figure: 4, Op: "==", Threshold: 0,
				Detail: "4 rejections of 1 clients within their limit at that moment; first: probe-intermittent, 4 rejected, busiest 600 of 600"})
			addCheck(s, delayed, result.Check{Name: "max overshoot (arrival bounds)", Figure: 1.02, Op: "<=", Threshold: 1.1, Pass: true,
				Detail: "client probe-boundary-burst: 612 accepted"})
		}, map[string]promiseWant{
			PromiseNoLockout: {result: promiseFail, scenarios: 2, checks: 2, failed: 1, worstScenario: delayed, worstCheck: "locked-out clients", figure: 1,
				client: "probe-uniform2x", probe: true, anchor: "client-sliding_window_delayed--probe-uniform2x"},
			PromiseFalseRejects: {result: promiseFail, scenarios: 2, checks: 3, failed: 1, worstScenario: stop, worstCheck: "false rejects (client clock)", figure: 4,
				client: "probe-intermittent", probe: true, anchor: "client-sliding_window_delayed_store-stop--probe-intermittent"},
			PromiseOvershoot: {result: promiseFail, scenarios: 2, checks: 3, failed: 1, worstScenario: stop, worstCheck: "overshoot after recovery", figure: 1.3,
				client: "probe-uniform2x", probe: true, anchor: "client-sliding_window_delayed_store-stop--probe-uniform2x"},
		}},
		{"no client sent steadily over its limit", func(s *result.Summary) {
			addCheck(s, delayed, result.Check{Name: "locked-out clients", Op: "==", Pass: true, NotMeasured: true,
				Detail: "not measured: no client sent steadily over its limit"})
		}, map[string]promiseWant{
			PromiseNoLockout: {result: promiseNotMeasured, why: "no client sent steadily over its limit"},
		}},
		{"a background client locked out", func(s *result.Summary) {
			addCheck(s, delayed, result.Check{Name: "locked-out clients", Figure: 1, Op: "==",
				Detail: "1 of 40 clients sending steadily over their limit admitted less than 0.9x it in a window; worst: client bg-0042, 10 admitted in the 6s window from 12s, limit 60 (x0.167; counted by send time)"})
		}, map[string]promiseWant{
			PromiseNoLockout: {result: promiseFail, scenarios: 1, checks: 1, failed: 1, worstScenario: delayed, worstCheck: "locked-out clients", figure: 1,
				client: "bg-0042", anchor: "peaks-sliding_window_delayed"},
		}},
		{"a background client over its limit", func(s *result.Summary) {
			s.Scenarios[0].Checks[0] = result.Check{Name: "max overshoot", Figure: 1.5, Op: "<=", Threshold: 1.1,
				Detail: "client bg-0042: 900 accepted in one 1s interval, limit 600"}
		}, map[string]promiseWant{
			// A background client has no chart of its own: the link is to every background
			// client's peak.
			PromiseOvershoot: {result: promiseFail, scenarios: 2, checks: 2, failed: 2, worstScenario: delayed, worstCheck: "max overshoot", figure: 1.5,
				client: "bg-0042", anchor: "peaks-sliding_window_delayed"},
		}},
		{"broken only where the generator fell behind", func(s *result.Summary) { s.Scenarios[1].GeneratorBound = true }, map[string]promiseWant{
			PromiseOvershoot: {result: promiseInconclusive, why: "generator-bound in 1 of 2: not evidence either way (a check failed in 1 of them)",
				scenarios: 2, checks: 2, worstScenario: stop, worstCheck: "overshoot after recovery", figure: 1.3,
				client: "probe-uniform2x", probe: true, anchor: "client-sliding_window_delayed_store-stop--probe-uniform2x"},
			PromiseFalseRejects: {result: promiseInconclusive, why: "generator-bound in 1 of 2: not evidence either way",
				scenarios: 2, checks: 2, worstScenario: delayed, worstCheck: "false rejects", tie: true},
		}},
		{"no gated scenario", func(s *result.Summary) {
			for i := range s.Scenarios {
				s.Scenarios[i].Gated = false
			}
		}, map[string]promiseWant{
			PromiseOvershoot: {result: promiseNotMeasured, why: "this run has no gated scenario"},
			PromiseFailOpen:  {result: promiseNotMeasured, why: "this run has no gated scenario"},
		}},
		{"every gated scenario failed to run", func(s *result.Summary) {
			for i := range s.Scenarios[:2] {
				s.Scenarios[i].Error, s.Scenarios[i].Checks = "start the fleet: no redis-server", nil
			}
		}, map[string]promiseWant{
			PromiseOvershoot: {result: promiseNotMeasured, why: "no gated scenario ran: each failed to run (see Failed)"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testRun(t)
			tt.change(&s)
			lines, _ := judgePromises(s)
			if len(lines) != 4 {
				t.Fatalf("%d promise lines, want 4", len(lines))
			}
			for _, l := range lines {
				want, ok := tt.want[l.ID]
				if !ok {
					continue
				}
				if l.Result != want.result || l.Why != want.why || l.Scenarios != want.scenarios || l.Checks != want.checks || l.Failed != want.failed {
					t.Errorf("%s: %s (%q) over %d scenarios, %d checks, %d failed; want %s (%q), %d, %d, %d",
						l.ID, l.Result, l.Why, l.Scenarios, l.Checks, l.Failed, want.result, want.why, want.scenarios, want.checks, want.failed)
				}
				if want.worstCheck == "" {
					if l.Worst != nil {
						t.Errorf("%s: worst %+v, want none", l.ID, *l.Worst)
					}
					continue
				}
				w := l.Worst
				if w == nil {
					t.Errorf("%s: no worst check, want %s in %s", l.ID, want.worstCheck, want.worstScenario)
					continue
				}
				if w.Scenario != want.worstScenario || w.Name != want.worstCheck || w.Tie != want.tie || (!want.tie && w.Figure != want.figure) ||
					w.Client != want.client || w.Probe != want.probe || w.Anchor != want.anchor {
					t.Errorf("%s: worst %s / %s %g tie %v, client %q probe %v, anchor %q;\nwant %s / %s %g tie %v, client %q probe %v, anchor %q",
						l.ID, w.Scenario, w.Name, w.Figure, w.Tie, w.Client, w.Probe, w.Anchor,
						want.worstScenario, want.worstCheck, want.figure, want.tie, want.client, want.probe, want.anchor)
				}
			}
		})
	}
}

// The first screen: a line per promise, each naming its worst client with a link to its chart
// in the scenario's section, and the other gates summed up under them.
func TestReportFirstScreenIsThePromises(t *testing.T) {
	_, html := generate(t, Options{})
	got := rows(html, "promise")
	want := []string{
		"No overshoot: no client gets more than 1.1x its limit in any window-long interval|FAIL: broken in 1 of 2 scenarios (2 checks)|sliding_window/delayed/store-stop, client probe-uniform2x|overshoot after recovery 1.3 (&lt;= 1.1)|its chart",
		"No false rejects: a client under its limit is never refused|pass (2 scenarios, 2 checks)|every scenario|false rejects 0 (== 0)|",
		"Fail open: with the store away: no 5xx, every request answered, at most one limit per node|pass (1 scenario, 2 checks)|sliding_window/delayed/store-stop|overshoot during the outage 1.4 (&lt;= 4)|the scenario",
		"No lock-out: a client over its limit still gets its limit|not measured: " + beforeJudged + "|||",
	}
	if len(got) != len(want) {
		t.Fatalf("%d promise rows, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("promise row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if strings.Index(html, `id="promises"`) > strings.Index(html, `id="gates"`) {
		t.Error("the promises come after the gates table: they are the first screen")
	}
	for _, s := range []string{
		`<a href="#client-sliding_window_delayed_store-stop--probe-uniform2x">its chart</a>`,
		`<div class="chart named" id="client-sliding_window_delayed_store-stop--probe-uniform2x"><p>Named by No overshoot (overshoot after recovery).</p><svg`,
		`<a href="#scenario-sliding_window_delayed_store-stop">the scenario</a>`,
		`<p id="other-gates">The other gates (the generator's schedule, errors outside fault windows, a killed node's answers): <span class="pass">3 of 3 passed</span>.`,
	} {
		if !strings.Contains(html, s) {
			t.Errorf("the report lacks %q", s)
		}
	}
	if !strings.Contains(html, `<section class="scenario" id="scenario-sliding_window_delayed_store-stop">`) {
		t.Error("the scenario's section lacks the anchor the link goes to")
	}
}

func TestNamedClient(t *testing.T) {
	sc := result.ScenarioResult{Probes: []result.ProbeResult{
		{ClientReport: result.ClientReport{ID: "probe-sync9"}}, {ClientReport: result.ClientReport{ID: "probe-sync90"}},
	}}
	tests := []struct {
		detail, id string
		probe      bool
	}{
		{"client probe-sync90: 623 accepted in one 6s interval, limit 600", "probe-sync90", true},
		{"probe-sync9: 13 accepted in one window after the store returned", "probe-sync9", true},
		{"client bg-000042: 700 accepted in one 6s interval, limit 600", "bg-000042", false},
		{"4 rejections of 2 clients within their limit at that moment; first: bg-17, 3 rejected, busiest 600 of 600", "bg-17", false},
		{"3 clients over their limit; every rejection was earned by the client's own traffic", "", false},
		{"at most one limit per node (4 nodes) while the store is away", "", false},
		{"p50 557µs, p99 64.415ms, max 98.406233ms over 16800 sends", "", false},
	}
	for _, tt := range tests {
		if id, probe := namedClient(sc, result.Check{Detail: tt.detail}); id != tt.id || probe != tt.probe {
			t.Errorf("%q: client %q probe %v, want %q %v", tt.detail, id, probe, tt.id, tt.probe)
		}
	}
}

// A probe two promises name has one chart, named by both; the no lock-out promise's client has
// the floor drawn beneath its limit.
func TestReportChartsAClientOnceWhateverNamesIt(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		addCheck(s, "sliding_window/delayed/store-stop", result.Check{Name: "locked-out clients", Figure: 1, Op: "==", Threshold: 0,
			Detail: "probe-uniform2x: admitted 300 of 600 in a window while it sent 1200"})
	})
	named := regexp.MustCompile(`(?s)<div class="chart named" id="([^"]+)"><p>Named by ([^<]*)\.</p>(.*?)</svg>`).FindAllStringSubmatch(html, -1)
	if len(named) != 1 {
		t.Fatalf("%d charts of named clients, want 1", len(named))
	}
	if id, by := named[0][1], named[0][2]; id != "client-sliding_window_delayed_store-stop--probe-uniform2x" ||
		by != "No overshoot (overshoot after recovery), No lock-out (locked-out clients)" {
		t.Errorf("chart %s named by %q", id, by)
	}
	if !strings.Contains(named[0][3], ">0.9x limit (floor)</text>") {
		t.Error("the locked-out client's chart has no floor")
	}
	if n := strings.Count(html, `<a href="#client-sliding_window_delayed_store-stop--probe-uniform2x">its chart</a>`); n != 2 {
		t.Errorf("%d links to the chart, want 2 (both promises)", n)
	}
}
