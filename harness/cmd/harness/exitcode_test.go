package main

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// Every judging command's exit code for each outcome, the outcome made as a run makes it:
// its gated parts' outcomes combined (result.Summary.Settle, result.Hunt.Settle) and how it
// ended. harness loadtest and harness judge exit through the summary, harness hunt through
// hunt.json, harness report --history through its newest run.
func TestExitCodes(t *testing.T) {
	type part struct {
		pass, bound bool
		err         string
	}
	var (
		passed  = part{pass: true}
		broken  = part{}
		behind  = part{pass: true, bound: true}
		behindX = part{bound: true} // generator-bound and failing gates: no evidence either way
		notMade = part{err: "start the fleet: redis-server not found"}
	)
	tests := []struct {
		name        string
		parts       []part
		interrupted bool
		incomplete  bool
		want        outcome.Outcome
		code        int // the contract CI scripts and the README rely on
	}{
		{"every gate passed", []part{passed, passed}, false, false, outcome.Pass, 0},
		{"a promise broken", []part{passed, broken}, false, false, outcome.Fail, 1},
		// The nightly gate's real regression beside a scenario whose generator fell behind
		// reads FAIL, never "runner too small".
		{"a promise broken beside a generator-bound part", []part{behind, broken}, false, false, outcome.Fail, 1},
		{"generator-bound", []part{passed, behind}, false, false, outcome.GeneratorBound, 3},
		{"generator-bound, its gates failed on the late traffic", []part{behindX}, false, false, outcome.GeneratorBound, 3},
		{"a gated part not made", []part{passed, notMade}, false, false, outcome.NotMade, 2},
		{"not made beside a generator-bound part", []part{behindX, notMade}, false, false, outcome.NotMade, 2},
		{"not made beside a broken promise", []part{broken, notMade}, false, false, outcome.Fail, 1},
		{"interrupted", []part{passed}, true, false, outcome.Interrupted, 1},
		{"interrupted beside a part not made", []part{notMade}, true, false, outcome.Interrupted, 1},
		{"interrupted after a broken promise", []part{broken}, true, false, outcome.Fail, 1},
		{"killed, judged afterwards", []part{passed}, false, true, outcome.Incomplete, 1},
		{"killed after a broken promise", []part{broken}, false, true, outcome.Fail, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want.ExitCode() != tc.code {
				t.Fatalf("%s exits %d, want %d", tc.want, tc.want.ExitCode(), tc.code)
			}
			sum := result.Summary{Interrupted: tc.interrupted, Incomplete: tc.incomplete}
			h := result.Hunt{Interrupted: tc.interrupted}
			for i, p := range tc.parts {
				sc := result.ScenarioResult{Scenario: result.Scenario{Name: "s" + string(rune('a'+i)), Gated: true},
					Pass: p.pass, GeneratorBound: p.bound, Error: p.err}
				sc.Outcome = result.ScenarioOutcome(sc)
				if p.err != "" {
					sum.NotMade = append(sum.NotMade, sc.Name+": "+p.err)
					h.Systems = append(h.Systems, result.HuntSystem{System: sc.Name, Error: p.err})
				} else {
					h.Systems = append(h.Systems, result.HuntSystem{System: sc.Name, Families: []result.HuntFamily{family(p.pass, p.bound)}})
				}
				sum.Scenarios = append(sum.Scenarios, sc)
			}
			sum.Settle()
			h.Settle()
			if sum.Outcome != tc.want {
				t.Errorf("the run's outcome %s, want %s", sum.Outcome, tc.want)
			}
			codes := map[string]int{
				"loadtest": exitCode(judgedError(summaryJudged(sum), "runs/x", nil)),
				"judge":    exitCode(judgedError(summaryJudged(sum), "runs/x", nil)),
				"report --history": func() int {
					dir := t.TempDir()
					if err := result.Write(dir, result.SummaryFile, sum); err != nil {
						t.Fatal(err)
					}
					return exitCode(writeHistory(io.Discard, []string{dir}, filepath.Join(t.TempDir(), "h.html")))
				}(),
			}
			if !tc.incomplete { // a hunt is never judged afterwards
				if h.Outcome != tc.want {
					t.Errorf("the hunt's outcome %s, want %s", h.Outcome, tc.want)
				}
				codes["hunt"] = exitCode(judgedError(huntJudged(h), "runs/x", nil))
			}
			for cmd, got := range codes {
				if got != tc.code {
					t.Errorf("harness %s exits %d, want %d", cmd, got, tc.code)
				}
			}
		})
	}
}

// family is a hunted family whose worst variant passed, broke a promise or was sent late.
func family(pass, bound bool) result.HuntFamily {
	w := result.HuntVariant{Outcome: outcome.Of(pass, bound), GeneratorBound: bound}
	f := result.HuntFamily{Name: "window-edge", Kind: "attack", Worst: &w, Breaks: w.Outcome == outcome.Fail, GeneratorBound: bound}
	f.Outcome = result.FamilyOutcome(f)
	return f
}

// A regression against the baseline is a broken promise, combined with the run's outcome;
// a report that could not be written is no evidence about the limiter.
func TestExitCodesWithTheReport(t *testing.T) {
	regression := &gateError{msg: "1 regression(s) against the baseline"}
	tests := []struct {
		name   string
		o      outcome.Outcome
		repErr error
		want   int
	}{
		{"passed, but regressed against the baseline", outcome.Pass, regression, exitGateFailed},
		{"a regression on a generator-bound run is the limiter's", outcome.GeneratorBound, regression, exitGateFailed},
		{"a regression beside a part not made", outcome.NotMade, regression, exitGateFailed},
		{"passed, the report could not be written", outcome.Pass, errors.New("write report.html: disk full"), exitNotMade},
		{"generator-bound, the report could not be written", outcome.GeneratorBound, errors.New("disk full"), exitGeneratorBound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := judgedError(judged{outcome: tc.o, what: "run"}, "runs/x", tc.repErr)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit %d (%v), want %d", got, err, tc.want)
			}
		})
	}
	if got := exitCode(errors.New("unknown flag --rat")); got != exitNotMade {
		t.Errorf("a usage error exits %d, want %d", got, exitNotMade)
	}
}
