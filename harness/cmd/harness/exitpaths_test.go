package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// execute runs the harness with args as main does, and returns its exit code and what it
// printed (stdout, then the error main would print).
func execute(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		out.WriteString("harness: " + err.Error() + "\n")
	}
	return exitCode(err), out.String()
}

// dockerOnlyTarget is a target file that starts its limiter in a container: the local
// provider cannot make a run of it.
const dockerOnlyTarget = "../../../targets/peers/fixedwindow.yaml"

// exitCase is one command line and the exit code and words it must end with.
type exitCase struct {
	name string
	args []string
	want int
	says string // in the output
	live bool   // starts processes (a load test's fleet): not in -short
}

// Every command reaches each of its exit codes where it should: 0 pass, 1 a promise broken
// (or a regression), 2 a run that could not be made, which says NOT MADE and never FAIL.
// A real load test's 0 and 1 are TestLoadtestExitCodes' (make test-loadtest): make test has
// them from the mapping (TestExitCodes) and real runs' 1 and 3 (TestReportHistoryOfRealRuns).
func TestExitCodePerCommand(t *testing.T) {
	runExitCases(t, []exitCase{
		{"loadtest: a time scale out of range", []string{"loadtest", "--time-scale", "2"}, exitNotMade, "--time-scale must be in (0, 1]", false},
		{"loadtest: an unknown flag", []string{"loadtest", "--rat", "5"}, exitNotMade, "unknown flag", false},
		{"loadtest: a target file that is not there", []string{"loadtest", "--target", "no-such.yaml"}, exitNotMade, "no-such.yaml", false},
		{"loadtest: a target the provider cannot start", []string{"loadtest", "--provider", "local", "--target", dockerOnlyTarget,
			"--fail-open=false", "--out", "OUT"}, exitNotMade, "RESULT: NOT MADE", true},
		{"hunt: a time scale out of range", []string{"hunt", "--time-scale", "0", "--out", "OUT"}, exitNotMade, "--time-scale must be in (0, 1]", false},
		{"hunt: a target the provider cannot start", []string{"hunt", "--provider", "local", "--target", dockerOnlyTarget, "--out", "OUT"},
			exitNotMade, "RESULT: NOT MADE", true},
		{"judge: no run there", []string{"judge", "no-such-dir"}, exitNotMade, "", false},
		{"report: no run there", []string{"report", "no-such-dir"}, exitNotMade, "", false},
		{"bench: a --slice flag without --slice", []string{"bench", "--nodes", "4", "--out", "OUT"}, exitNotMade, "--nodes is a --slice flag", false},
		{"bench: a time scale out of range", []string{"bench", "--slice", "--time-scale", "1.5", "--out", "OUT"}, exitNotMade, "--time-scale must be in (0, 1]", false},
		{"bench: nothing asked, nothing to make", []string{"bench", "--no-decisions", "--no-memory", "--no-fleet", "--no-cluster", "--no-generator", "--out", "OUT"}, exitPass, "bench:", false},
	})
}

// runExitCases runs each case as a subtest: every "OUT" in its arguments a fresh directory.
func runExitCases(t *testing.T, tests []exitCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.live && testing.Short() {
				t.Skip("starts a local fleet")
			}
			if tc.live {
				if _, err := exec.LookPath("redis-server"); err != nil {
					t.Skipf("the local provider needs redis-server: %v", err)
				}
			}
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = t.TempDir()
				}
			}
			code, out := execute(t, args...)
			if code != tc.want || !strings.Contains(out, tc.says) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, tc.want, tc.says, out)
			}
			if code == exitNotMade && strings.Contains(out, "RESULT: FAIL") {
				t.Errorf("a run not made printed FAIL:\n%s", out)
			}
		})
	}
}

// harness report: 0 for a run and a baseline it does not regress from, 1 for a regression.
func TestReportExitCodes(t *testing.T) {
	run := copyDir(t, "../../../reports/testdata/run")
	if code, out := execute(t, "report", run, "--baseline", filepath.Join(run, result.SummaryFile)); code != exitPass {
		t.Errorf("against itself: exit %d, want 0:\n%s", code, out)
	}
	base, err := result.Read[result.Summary](run, result.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	for i := range base.Scenarios {
		base.Scenarios[i].MaxOvershoot -= 0.2 // the run overshoots 0.2 more than its baseline did
	}
	bdir := t.TempDir()
	if err := result.Write(bdir, result.SummaryFile, base); err != nil {
		t.Fatal(err)
	}
	if code, out := execute(t, "report", run, "--baseline", bdir); code != exitGateFailed || !strings.Contains(out, "regression") {
		t.Errorf("a regression: exit %d, want 1 naming it:\n%s", code, out)
	}
}

// harness judge: the shards of a run whose every decision kept the limit pass (0), the same
// run with every probe's request accepted breaks the 1.1x promise (1), and shards that are
// not one run are not judged (2).
func TestJudgeExitCodes(t *testing.T) {
	spec := schedule.Spec{TimeScale: 0.05, Rate: 200, Clients: 500, Seed: 20260730, Replicas: 2}
	kept := writeShard(t, spec, false)
	if code, out := execute(t, "judge", kept); code != exitPass || !strings.Contains(out, "RESULT: PASS") {
		t.Errorf("a run that kept the limit: exit %d, want 0:\n%s", code, out)
	}
	broken := writeShard(t, spec, true)
	if code, out := execute(t, "judge", broken); code != exitGateFailed || !strings.Contains(out, "RESULT: FAIL") {
		t.Errorf("a run that broke 1.1x: exit %d, want 1:\n%s", code, out)
	}
	if err := os.Remove(filepath.Join(broken, "shard-0", traffic.OutcomesFile)); err != nil {
		t.Fatal(err)
	}
	if code, out := execute(t, "judge", broken); code != exitNotMade || strings.Contains(out, "RESULT: FAIL") {
		t.Errorf("a shard without outcomes: exit %d, want 2:\n%s", code, out)
	}
}

// writeShard writes the one shard of a run of spec as harness attack does: shard.json and
// outcomes.csv, every request answered on time in 1 ms, decided by an exact sliding log of
// the client's limit per window; with acceptAll every request is accepted instead.
func writeShard(t *testing.T, spec schedule.Spec, acceptAll bool) string {
	t.Helper()
	s, err := schedule.Build(spec, schedule.DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	dir := filepath.Join(run, "shard-0")
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	m := result.Shard{Shard: 0, Shards: 1, Schedule: spec, Start: start, FinishedAt: start.Add(s.Duration),
		Scheduled: len(s.Requests), Sent: len(s.Requests), Targets: []string{"http://a", "http://b"},
		Scenario: "sliding_window/delayed", Algorithm: string(limiters.SlidingWindow), Mode: string(limiters.ModeDelayed)}
	if err := result.Write(dir, result.ShardFile, m); err != nil {
		t.Fatal(err)
	}
	w, err := traffic.Replace(dir)
	if err != nil {
		t.Fatal(err)
	}
	window := spec.Window()
	accepted := map[int32][]time.Duration{}
	for i, q := range s.Requests {
		code := uint16(200)
		if !acceptAll {
			log := accepted[int32(q.Client)]
			for len(log) > 0 && log[0] <= q.At-window {
				log = log[1:]
			}
			if len(log) >= s.Clients[q.Client].Limit {
				code = 429
			} else {
				log = append(log, q.At)
			}
			accepted[int32(q.Client)] = log
		}
		if err := w.Write(traffic.Outcome{Index: i, Code: code, Sent: q.At, Latency: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return run
}

// copyDir copies a run directory's files, one level of subdirectories deep, into a
// temporary directory, since a report writes beside them.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
