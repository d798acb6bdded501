package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// nights writes one run directory per night from the committed run, the fail-open scenario's
// overshoot after recovery set as each night says, and returns the directories in the order
// given (not the nights' order).
type night struct {
	day      int
	commit   string
	recovery float64 // overshoot after recovery, gate <= 1.1
	bound    bool    // the fail-open scenario was generator-bound
}

func writeNights(t *testing.T, nights []night) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for _, n := range nights {
		s := testRun(t)
		s.StartedAt = time.Date(2026, 7, n.day, 2, 17, 0, 0, time.UTC)
		s.Commit = n.commit
		sc := &s.Scenarios[1]
		sc.GeneratorBound = n.bound
		for i, c := range sc.Checks {
			if c.Name == "overshoot after recovery" {
				sc.Checks[i].Figure, sc.Checks[i].Pass = n.recovery, n.recovery <= 1.1
			}
		}
		dir := filepath.Join(root, fmt.Sprintf("night-%02d", n.day))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Write(dir, result.SummaryFile, s); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestHistoryFindsTheFirstCrossing(t *testing.T) {
	dirs := writeNights(t, []night{
		{day: 4, commit: "dddddddddddddddddddd", recovery: 1.3},
		{day: 1, commit: "aaaaaaaaaaaaaaaaaaaa", recovery: 1.0},
		{day: 3, commit: "cccccccccccccccccccc", recovery: 1.6, bound: true},
		{day: 2, commit: "bbbbbbbbbbbbbbbbbbbb+dirty", recovery: 1.05},
		{day: 5, commit: "", recovery: 1.35},
	})
	empty := t.TempDir()
	runs, missing, err := ReadHistory(append(dirs, empty))
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	for _, r := range runs {
		commits = append(commits, r.Commit())
	}
	if got := strings.Join(commits, " "); got != "aaaaaaaaaaaa bbbbbbbbbbbb+dirty cccccccccccc dddddddddddd unknown" {
		t.Errorf("runs in the order %s: want them by started_at, each commit cut to 12", got)
	}
	if len(missing) != 1 || !strings.HasPrefix(missing[0], empty+": no summary.json") {
		t.Errorf("missing %q, want the empty directory", missing)
	}
	if _, _, err := ReadHistory([]string{filepath.Join(empty, "not-there")}); err == nil {
		t.Error("a path that is not there read as a run")
	}

	h := BuildHistory(runs, missing, time.Now())
	// Two gated scenarios: 5 checks of the design, 4 of its fail-open scenario; the
	// comparison's checks are not gates.
	if len(h.Series) != 9 {
		t.Fatalf("%d series, want 9", len(h.Series))
	}
	var recovery Series
	for _, s := range h.Series {
		if s.Scenario == "fixed_window/central" {
			t.Errorf("a series of the comparison scenario: %s", s.Check)
		}
		if len(s.Points) != 5 {
			t.Errorf("%s %s: %d points, want one per run", s.Scenario, s.Check, len(s.Points))
		}
		if s.Check == "overshoot after recovery" {
			recovery = s
		} else if s.Crossing != nil {
			t.Errorf("%s %s crossed its gate: %+v", s.Scenario, s.Check, *s.Crossing)
		}
	}
	c := recovery.Crossing
	if c == nil {
		t.Fatal("the overshoot after recovery never crossed its gate")
	}
	// Within on days 1 and 2, past it on day 3 while generator-bound (not counted), then past it
	// on days 4 and 5: the first crossing is day 4's, after day 2's.
	if c.First != 3 || c.LastWithin != 1 || c.Past != 2 || len(c.BoundPast) != 1 || c.BoundPast[0] != 2 {
		t.Errorf("crossing %+v, want first 3, last within 1, 2 past, bound past [2]", *c)
	}
	if p := recovery.Points[c.First]; p.Figure != 1.3 || runs[p.Run].Commit() != "dddddddddddd" {
		t.Errorf("first crossing %g in %s, want 1.3 in dddddddddddd", p.Figure, runs[p.Run].Commit())
	}
	if v := h.Newest().Verdict(); v != "FAIL" {
		t.Errorf("newest verdict %s, want FAIL", v)
	}

	page := filepath.Join(t.TempDir(), HistoryFile)
	if err := WriteHistory(page, h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	got := rows(html, "crossing")
	want := "overshoot after recovery|sliding_window/delayed/store-stop|run 4, 2026-07-04 02:17Z, dddddddddddd|1.3 (&lt;= 1.1)|run 2, bbbbbbbbbbbb&#43;dirty|2 of 5|run 5: 1.35 past|run 3"
	if len(got) != 1 || got[0] != want {
		t.Errorf("crossing rows %q,\nwant [%s]", got, want)
	}
	if n := len(rows(html, "run")); n != 5 {
		t.Errorf("%d run rows, want 5", n)
	}
	if n := strings.Count(html, "<svg"); n != 9 {
		t.Errorf("%d charts, want one per series: 9", n)
	}
	// Every series has a point of day 3, when the fail-open scenario was generator-bound: its
	// four charts mark it.
	if n := strings.Count(html, ">generator-bound: not evidence</text>"); n != 4 {
		t.Errorf("%d charts mark a generator-bound point, want 4", n)
	}
	for _, s := range []string{"not in the trend", "<h2>overshoot after recovery (the promise: No overshoot)</h2>", ">5 unknown</text>", ">1 aaaaaaaaaaaa</text>"} {
		if !strings.Contains(strings.ReplaceAll(html, "Not in the trend", "not in the trend"), s) {
			t.Errorf("the trend page lacks %q", s)
		}
	}
	if regexp.MustCompile(`(src|href)="http`).MatchString(html) {
		t.Error("the trend page fetches something from the network")
	}
}

// A series that never crossed while the generator kept its schedule is listed apart, and a
// series only newer runs have starts where they do.
func TestHistoryCrossingOnlyWhileBound(t *testing.T) {
	dirs := writeNights(t, []night{
		{day: 1, commit: "a", recovery: 1.0},
		{day: 2, commit: "b", recovery: 1.5, bound: true},
	})
	runs, _, err := ReadHistory(dirs)
	if err != nil {
		t.Fatal(err)
	}
	runs[1].Summary.Scenarios[0].Checks = append(runs[1].Summary.Scenarios[0].Checks,
		result.Check{Name: "locked-out clients", Figure: 0, Op: "==", Threshold: 0, Pass: true})
	h := BuildHistory(runs, nil, time.Now())
	cross := h.Crossings()
	if len(cross) != 1 || cross[0].Crossing.First != -1 || cross[0].Crossing.LastWithin != -1 || len(cross[0].Crossing.BoundPast) != 1 {
		t.Fatalf("crossings %+v, want the recovery past its gate only while generator-bound", cross)
	}
	if h.Series[0].Check != "max overshoot" {
		t.Errorf("first series %s, want the newest run's order", h.Series[0].Check)
	}
	for _, s := range h.Series {
		if s.Check == "locked-out clients" && (len(s.Points) != 1 || s.Points[0].Run != 1 || s.Promise != PromiseNoLockout) {
			t.Errorf("the new check's series: %+v, want one point in run 2 under no lock-out", s)
		}
	}
	page := filepath.Join(t.TempDir(), HistoryFile)
	if err := WriteHistory(page, h); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(page)
	if got := rows(string(b), "crossing"); len(got) != 1 || !strings.Contains(got[0], "|never while the generator kept its schedule|0 of 2|run 2: 1.5 generator-bound|run 2") {
		t.Errorf("crossing rows %q", got)
	}
}

// A trend's line breaks where its scenario did not run: runs 0, 1 and 3 are two segments.
func TestSegments(t *testing.T) {
	for _, tc := range []struct {
		runs []int
		want []int // points per segment
	}{
		{nil, nil},
		{[]int{0}, []int{1}},
		{[]int{0, 1, 2}, []int{3}},
		{[]int{0, 1, 3}, []int{2, 1}},
		{[]int{1, 3, 5, 6}, []int{1, 1, 2}},
	} {
		var pts []Point
		for _, r := range tc.runs {
			pts = append(pts, Point{Run: r})
		}
		var got []int
		for _, s := range segments(pts) {
			got = append(got, len(s))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("runs %v: segments of %v points, want %v", tc.runs, got, tc.want)
		}
	}
}
