package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// runDir copies the committed run (testdata/run) where the report may be written.
func runDir(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/run", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/run", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func generate(t *testing.T, opt Options) (Written, string) {
	t.Helper()
	dir := runDir(t)
	w, err := Generate(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	return w, string(b)
}

// rows are the table rows of class cls, their cells' text joined by "|".
func rows(html, cls string) []string {
	re := regexp.MustCompile(`(?s)<tr class="` + cls + `">(.*?)</tr>`)
	tag := regexp.MustCompile(`<[^>]+>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(html, -1) {
		cells := strings.Split(m[1], "</td>")
		for i := range cells {
			cells[i] = strings.TrimSpace(tag.ReplaceAllString(cells[i], ""))
		}
		out = append(out, strings.Join(cells[:len(cells)-1], "|"))
	}
	return out
}

func TestReportVerdictGatesAndConditions(t *testing.T) {
	_, html := generate(t, Options{})
	if !strings.Contains(html, `<p class="verdict fail" id="verdict">FAIL</p>`) {
		t.Error("verdict FAIL missing")
	}
	got := rows(html, "gate")
	// 5 checks of the gated scenario + 4 of the fail-open one; the comparison's are not gates.
	if len(got) != 9 {
		t.Fatalf("%d gate rows, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
	want := "sliding_window/delayed/store-stop|overshoot after recovery|1.3|&lt;= 1.1|FAIL|probe-uniform2x: 13 accepted in one window after the store returned"
	if got[6] != want {
		t.Errorf("gate row 7:\n got %s\nwant %s", got[6], want)
	}
	for _, s := range []string{"<th>provider</th><td>local</td>", "<th>networking</th><td>loopback</td>", "<th>replicas</th><td>4</td>",
		"sliding_window / delayed", "<td>300 req/s</td>", "<td>297 req/s</td>", "<th>seed</th><td>20260730</td>",
		"<th>commit</th><td>f875eed0a1b2</td>", "<th>machine cores</th><td>2</td>", "<th>time scale</th><td>0.016666666666666666"} {
		if !strings.Contains(html, s) {
			t.Errorf("conditions: %q missing", s)
		}
	}
	if strings.Contains(html, "http://") && regexp.MustCompile(`(src|href)="http`).MatchString(html) {
		t.Error("the report fetches something from the network")
	}
}

// generateEdited renders a copy of the test run directory whose summary change edited.
func generateEdited(t *testing.T, change func(*result.Summary)) string {
	t.Helper()
	dir := runDir(t)
	s, err := result.Read[result.Summary](dir, result.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	change(&s)
	if err := result.Write(dir, result.SummaryFile, s); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReportGeneratorBound(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) { s.Outcome = outcome.GeneratorBound })
	if !strings.Contains(html, `<p class="verdict bound" id="verdict">GENERATOR-BOUND`) {
		t.Error("a generator-bound run is not shown as such")
	}
}

func TestReportInterrupted(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		for i := range s.Scenarios {
			s.Scenarios[i].Outcome = outcome.GeneratorBound
		}
		s.Interrupted = true
		s.Settle()
	})
	if !strings.Contains(html, `<p class="verdict fail" id="verdict">INTERRUPTED`) {
		t.Error("an interrupted run is not shown as such")
	}
}

func TestReportSideBySide(t *testing.T) {
	_, html := generate(t, Options{})
	got := rows(html, "window")
	// Three scenarios × three patterns, the model's row for the scenario's algorithm.
	if len(got) != 9 {
		t.Fatalf("%d window rows, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
	want := map[string]bool{
		// sliding window: the model keeps the boundary burst at 600; so did the fleet (10 of 10).
		"boundary-burst|2400|1200|600|1.000|20|20|10|1.000|yes": false,
		// fixed window: the model lets 1200 through at the boundary; the fleet 2x its limit.
		"boundary-burst|2400|1800|1200|2.000|20|20|20|2.000|yes": false,
	}
	for _, r := range got {
		if _, ok := want[r]; ok {
			want[r] = true
		}
	}
	for r, seen := range want {
		if !seen {
			t.Errorf("window row %q missing; rows:\n%s", r, strings.Join(got, "\n"))
		}
	}
	if d := rows(html, "distrow"); len(d) != 6 { // two client rates per scenario's mode
		t.Errorf("%d distributed model rows, want 6: %v", len(d), d)
	}
	claims := rows(html, "claim")
	if len(claims) != 3 {
		t.Fatalf("%d claims, want 3: %v", len(claims), claims)
	}
	if !strings.HasSuffix(claims[1], "|boundary burst: 20 accepted in one window, x2.000|confirmed") {
		t.Errorf("claim row: %s", claims[1])
	}
}

// The report shows the model the run saved, whatever the model of the code rendering it
// says; a run that saved none says so instead of borrowing today's.
func TestReportModelFromRunDirectory(t *testing.T) {
	t.Run("saved figures", func(t *testing.T) {
		html := generateEdited(t, func(s *result.Summary) {
			for i, w := range s.Model.Windows {
				if w.Pattern == "boundary-burst" && w.Algorithm == "sliding_window" {
					// Not what today's model computes (1200 accepted, busiest 600).
					s.Model.Windows[i].Accepted, s.Model.Windows[i].Busiest, s.Model.Windows[i].Ratio = 1234, 777, 1.295
				}
			}
			for i, d := range s.Model.Distributed {
				if d.Mode == "delayed" && d.ClientRate == 90 {
					s.Model.Distributed[i].Accepted, s.Model.Distributed[i].TouchesPerSec = 4321, 99
				}
			}
		})
		var window []string
		for _, r := range rows(html, "window") {
			if strings.HasPrefix(r, "boundary-burst|2400|1234|") {
				window = append(window, r)
			}
		}
		// Two sliding-window scenarios, each showing the saved row; 1.295 > 1.1, so the model
		// side now disagrees with the fleet's 1.000.
		want := "boundary-burst|2400|1234|777|1.295|20|20|10|1.000|no"
		if len(window) != 2 || window[0] != want || window[1] != want {
			t.Errorf("saved window rows %q, want two of %q", window, want)
		}
		var dist int
		for _, r := range rows(html, "distrow") {
			if strings.HasPrefix(r, "90/s|4321|") && strings.HasSuffix(r, "|99") {
				dist++
			}
		}
		if dist != 2 {
			t.Errorf("%d distributed rows show the saved figures (4321 accepted, 99 touches/s), want 2: %v", dist, rows(html, "distrow"))
		}
		if strings.Contains(html, `class="nomodel"`) {
			t.Error("a run with saved model figures says it has none")
		}
	})
	t.Run("no saved figures", func(t *testing.T) {
		html := generateEdited(t, func(s *result.Summary) { s.Model = nil })
		if n := len(rows(html, "window")) + len(rows(html, "distrow")); n != 0 {
			t.Errorf("%d model rows for a run that saved no model, want 0", n)
		}
		if got := strings.Count(html, `<p class="nomodel">`); got != 3 {
			t.Errorf("%d scenarios say the run saved no model figures, want 3", got)
		}
	})
}

func TestReportCharts(t *testing.T) {
	_, html := generate(t, Options{})
	for _, title := range []string{
		"Accepted per sliding window, probe clients: sliding_window/delayed",
		"Accepted per sliding window, probe clients: sliding_window/delayed/store-stop",
		"Accepted per sliding window, probe clients: fixed_window/central",
		"Responses per second: sliding_window/delayed",
		"Responses per second: sliding_window/delayed/store-stop",
		"Latency percentiles (ms): fixed_window/central", // short enough for one line
		"Store commands per second", "Rate asked and achieved", "Generator lateness, p99",
	} {
		if !strings.Contains(html, title) {
			t.Errorf("chart %q missing", title)
		}
	}
	// The half-width charts' titles are too long for one line: the scenario is on the second.
	for _, title := range [][2]string{
		{"Latency percentiles (ms)", "sliding_window/delayed"},
		{"Background clients by peak/limit", "sliding_window/delayed"},
	} {
		re := regexp.MustCompile(`>` + regexp.QuoteMeta(title[0]) + `</text>\s*<text [^>]*>` + regexp.QuoteMeta(title[1]) + `</text>`)
		if !re.MatchString(html) {
			t.Errorf("chart %q over %q missing", title[0], title[1])
		}
	}
	if n := strings.Count(html, "<svg"); n != 13 {
		t.Errorf("%d charts, want 13 (3 probe, 2 traffic, 3 latency, 1 peak distribution, 3 across scenarios, 1 client the promises name)", n)
	}
	// The fail-open scenario's time charts are shaded (its probes, its traffic, and the client
	// the first screen names in it); the others are not.
	if n := strings.Count(html, ">fault window<"); n != 3 {
		t.Errorf("%d fault legends, want 3 (the time charts of the fail-open scenario)", n)
	}
	if !strings.Contains(html, "no outcomes.csv") {
		t.Error("the scenario without outcomes does not say why it has no traffic chart")
	}
	if strings.Contains(html, "<?xml") {
		t.Error("an XML prolog inside the HTML")
	}
}

func TestJUnitOneCasePerGatedCheck(t *testing.T) {
	w, _ := generate(t, Options{})
	b, err := os.ReadFile(w.JUnit)
	if err != nil {
		t.Fatal(err)
	}
	var doc JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cases, failures := 0, 0
	var msg string
	outcomes := map[string]string{}
	for _, s := range doc.Suites {
		for _, p := range s.Properties {
			outcomes[s.Name+" "+p.Name] = p.Value
		}
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				failures++
				msg = c.Failure.Message
			}
		}
	}
	if cases != 9 || failures != 1 || doc.Tests != 9 || doc.Failures != 1 || len(doc.Suites) != 2 {
		t.Errorf("%d cases, %d failures (doc: %d, %d) in %d suites; want 9, 1 in 2", cases, failures, doc.Tests, doc.Failures, len(doc.Suites))
	}
	if want := "overshoot after recovery: figure 1.3, want <= 1.1"; msg != want {
		t.Errorf("failure message %q, want %q", msg, want)
	}
	// The suites carry the outcomes summary.json stores: the failing scenario's and the run's.
	if n := len(outcomes); n != 4 || outcomes[doc.Suites[1].Name+" outcome"] != "fail" || outcomes[doc.Suites[0].Name+" run outcome"] != "fail" {
		t.Errorf("suite properties %v: want each suite's outcome and the run's, fail for the failing one", outcomes)
	}
}

func TestBaseline(t *testing.T) {
	base, err := result.Read[result.Summary]("testdata/run", result.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*result.ScenarioResult)
		want   []string // metrics regressed, of sliding_window/delayed
	}{
		{"same run", func(*result.ScenarioResult) {}, nil},
		{"within tolerance", func(s *result.ScenarioResult) {
			s.Latency.P99 = s.Latency.P99 * 14 / 10 // +40 %
			s.AchievedRate = s.AchievedRate * 0.92  // −8 %
			s.MaxOvershoot += 0.04
		}, nil},
		{"p99 latency +60 %", func(s *result.ScenarioResult) { s.Latency.P99 = s.Latency.P99 * 16 / 10 }, []string{MetricLatencyP99}},
		{"rate −20 %", func(s *result.ScenarioResult) { s.AchievedRate *= 0.8 }, []string{MetricRateRatio}},
		{"overshoot +0.1", func(s *result.ScenarioResult) { s.MaxOvershoot += 0.1 }, []string{MetricOvershoot}},
		{"false rejects 0 -> 3", func(s *result.ScenarioResult) { s.FalseRejects = 3 }, []string{MetricFalseRejects}},
		// A small runner: the generator fell behind, latency and rate are the runner's.
		{"generator-bound runner, limiter unchanged", func(s *result.ScenarioResult) {
			s.GeneratorBound = true
			s.Latency.P99 *= 4
			s.AchievedRate *= 0.3
		}, nil},
		{"generator-bound runner, limiter regressed", func(s *result.ScenarioResult) {
			s.GeneratorBound = true
			s.AchievedRate *= 0.3
			s.MaxOvershoot += 0.1
			s.FalseRejects = 1
		}, []string{MetricOvershoot, MetricFalseRejects}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, _ := result.Read[result.Summary]("testdata/run", result.SummaryFile)
			tt.change(&cur.Scenarios[0])
			ds := Compare(base, cur, DefaultTolerance())
			if len(ds) != 11 {
				t.Fatalf("%d deltas, want 11 (3 figures × 3 scenarios, false rejects × 2 gated)", len(ds))
			}
			for _, d := range ds {
				runner := d.Metric == MetricLatencyP99 || d.Metric == MetricRateRatio
				if bound := cur.Scenarios[0].GeneratorBound && d.Scenario == "sliding_window/delayed" && runner; bound != (d.Ungated != "") {
					t.Errorf("%s: ungated %q; want it ungated exactly when generator-bound and a runner's figure", d, d.Ungated)
				}
			}
			var got []string
			for _, d := range Regressions(ds) {
				if d.Scenario != "sliding_window/delayed" {
					t.Errorf("regression in an unchanged scenario: %s", d)
				}
				got = append(got, d.Metric)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("regressions %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReportShowsBaselineDeltas(t *testing.T) {
	base, err := result.Read[result.Summary]("testdata/run", result.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	base.Scenarios[0].Latency.P99 /= 2 // now is twice the baseline: +100 %
	w, html := generate(t, Options{Baseline: &base, BaselinePath: "base/summary.json"})
	if len(w.Regressions) != 1 || w.Regressions[0].Metric != MetricLatencyP99 {
		t.Fatalf("regressions %v, want one of p99 latency", w.Regressions)
	}
	if n := len(rows(html, "delta")); n != 11 {
		t.Errorf("%d delta rows, want 11", n)
	}
	if !strings.Contains(html, "1 regression(s)") || !strings.Contains(html, "sliding_window/delayed</td><td>p99 latency (ms)</td><td class=\"n\">2</td><td class=\"n\">4</td>") {
		t.Error("the report does not show the latency regression")
	}
}

// A scenario's clocks line shows both clocks of both promises, the gated one named; a run
// written before they were counted shows none.
func TestReportClocksLine(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		s.Scenarios[0].Clocks = &result.Clocks{Gate: result.ClockArrival, OvershootClient: 1.05, OvershootArrival: 1.0, FalseRejectsClient: 2,
			ExcusedSkew: result.Percentiles{Count: 2, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond}}
	})
	want := `<p class="clocks">clocks: gated on arrival bounds; overshoot x1.000 (arrival ±0s p99) x1.050 (client); false rejects 0 (arrival ±0s p99) 2 (client); no exact clock: the target gives no decision time and runs behind no recording backend; 2 rejections excused only by arrival skew: p99 3ms, max 4ms.`
	if !strings.Contains(html, want) {
		t.Errorf("report lacks the clocks line %q", want)
	}
	if n := strings.Count(html, `class="clocks"`); n != 1 {
		t.Errorf("%d clocks lines, want the one scenario's that has clocks", n)
	}
}

// The window table's "same verdict" agrees with the lock-out gate: a client the fleet locked
// out is not the model's verdict, whatever its overshoot; a scenario with no claim says so
// instead of an empty table.
func TestReportWindowVerdictAndNoClaims(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		sc := &s.Scenarios[0]
		for i := range sc.Probes {
			if strings.HasSuffix(sc.Probes[i].ID, "uniform2x") {
				sc.Probes[i].SteadyWindows, sc.Probes[i].SteadyShareArrival, sc.Probes[i].SteadyShare = 3, 0.523, 0.523
			}
		}
		sc.Claims = nil
	})
	if !strings.Contains(html, "no: the fleet locked the client out (x0.523 of its limit in a window)") {
		t.Error("a locked-out client's window row does not say the verdicts differ")
	}
	if !strings.Contains(html, `<p class="noclaims">The document makes no claim about this scenario`) {
		t.Error("a scenario without claims shows no note")
	}
}

// In a run of several systems the side-by-side answer comes first, before the gated
// system's promises and gates.
func TestReportSystemsSideBySideFirst(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		for i := range s.Scenarios {
			s.Scenarios[i].Target = "envoy"
		}
	})
	peers, promises := strings.Index(html, `<table id="peers">`), strings.Index(html, `<table id="promises">`)
	if peers < 0 || promises < 0 || peers > promises {
		t.Errorf("systems side by side at %d, promises at %d: want the systems first", peers, promises)
	}
}

// A target's scenario whose algorithm the document's model has no window of (none named, or
// gcra) says so instead of an empty window table headed "model (, one node)"; one it models
// keeps its rows. Its distributed-counter heading names the target, never an empty "()".
func TestReportTargetWindowModel(t *testing.T) {
	for _, tc := range []struct {
		algorithm string
		rows      int
		note      string
	}{
		{"", 0, "The document models no window for this system: its target file names no algorithm."},
		{"gcra", 0, "The document models no gcra window: nothing of its model to set beside this fleet."},
		{"token_bucket", 3, ""},
	} {
		t.Run(tc.algorithm, func(t *testing.T) {
			html := generateEdited(t, func(s *result.Summary) {
				sc := &s.Scenarios[0]
				sc.Target, sc.Algorithm, sc.Mode = "my-gateway", tc.algorithm, ""
			})
			sec := html[strings.Index(html, `<section class="scenario"`):]
			sec = sec[:strings.Index(sec, "</section>")]
			tables, rows := strings.Count(sec, `<table class="windows">`), strings.Count(sec, `<tr class="window">`)
			if wantTables := min(tc.rows, 1); tables != wantTables || rows != tc.rows {
				t.Errorf("%d window tables with %d rows, want %d with %d", tables, rows, wantTables, tc.rows)
			}
			if has := strings.Contains(sec, `<p class="nowindows">`+tc.note+`</p>`); has != (tc.note != "") || strings.Count(sec, `class="nowindows"`) != min(len(tc.note), 1) {
				t.Errorf("the note that the model has no window: shown %t, want %q", has, tc.note)
			}
			for _, bad := range []string{"(, one node)", "()"} {
				if strings.Contains(sec, bad) {
					t.Errorf("the scenario's section holds %q", bad)
				}
			}
			if !strings.Contains(sec, "<h3>Distributed counter: the fleet (my-gateway) beside no model") {
				t.Error("the distributed-counter heading does not name the target")
			}
			// Beside no model, the measured row's columns are not headed "model ...".
			dist := sec[strings.Index(sec, `<table class="dist">`):]
			dist = dist[:strings.Index(dist, "</table>")]
			if n := strings.Count(dist, "model"); n != 0 || !strings.Contains(dist, "<th>accepted</th><th>x limit</th>") {
				t.Errorf("the distributed-counter table beside no model says model %d times: %s", n, dist)
			}
			if !strings.Contains(html, "<th>client rate</th><th>model accepted</th>") {
				t.Error("the other scenarios, each beside its mode's model, lost the model's headings")
			}
		})
	}
}
