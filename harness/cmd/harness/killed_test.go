package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

// A real run killed with SIGKILL mid-scenario: it leaves outcomes.csv and scenario.json but
// no summary.json, and its fleet's directory. harness report points at harness judge, which
// judges what the run wrote and marks it incomplete (exit 1); the next local run removes the
// dead run's directory.
func TestKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a load test")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("the local provider needs redis-server: %v", err)
	}
	bin := buildHarness(t)
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	run := startLoadtest(t, bin, root, tmp, "--provider", "local", "--replicas", "2", "--matrix=false", "--fail-open=false",
		"--time-scale", "0.05", "--rate", "100", "--clients", "1000", "--out", out)
	cmd := run.cmd
	// Kill once a few seconds of traffic are written (the outcomes are flushed every second).
	run.waitOutcomes(t, filepath.Join(out, "sliding_window_delayed", "outcomes.csv"), 40_000)
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	<-run.exited
	dead := strconv.Itoa(cmd.Process.Pid)

	// What the kill left: the fleet's directory, naming the dead harness as its owner.
	dirs, _ := filepath.Glob(filepath.Join(tmp, "rlharness-*"))
	if len(dirs) != 1 {
		t.Fatalf("want the killed run's directory under %s, found %v", tmp, dirs)
	}
	if b, err := os.ReadFile(filepath.Join(dirs[0], "owner")); err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), "/"+dead) {
		t.Errorf("owner file %q (%v), want the killed harness's pid %s", b, err, dead)
	}
	if _, err := os.Stat(filepath.Join(out, result.SummaryFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("summary.json after a kill during the first scenario: %v", err)
	}

	// harness report cannot render it, and says what to run.
	rep, err := exec.Command(bin, "report", out).CombinedOutput()
	if err == nil || !strings.Contains(string(rep), "harness judge "+out) {
		t.Errorf("harness report on a killed run: %v\n%s\nwant an error naming harness judge", err, rep)
	}
	// harness judge judges it, marked incomplete.
	judged := exec.Command(bin, "judge", out)
	jout, err := judged.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("harness judge: %v, want exit 1 (incomplete)\n%s", err, jout)
	}
	if !strings.Contains(string(jout), "RESULT: INCOMPLETE") {
		t.Errorf("harness judge printed no INCOMPLETE verdict:\n%s", jout)
	}
	sum, err := result.Read[result.Summary](out, result.SummaryFile)
	if err != nil {
		t.Fatalf("%v\n%s", err, jout)
	}
	if !sum.Incomplete || sum.Pass || len(sum.Scenarios) != 1 {
		t.Fatalf("summary: incomplete %v, pass %v, %d scenarios; want incomplete, not passed, 1 scenario", sum.Incomplete, sum.Pass, len(sum.Scenarios))
	}
	sc := sum.Scenarios[0]
	if sc.Incomplete == "" || sc.Requests == 0 || sc.Accepted == 0 || len(sc.Checks) == 0 {
		t.Errorf("the killed scenario: incomplete %q, %d requests, %d accepted, %d checks; want it judged on what was written", sc.Incomplete, sc.Requests, sc.Accepted, len(sc.Checks))
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}

	// The next local run removes the dead run's directory.
	t.Setenv("TMPDIR", tmp)
	f, err := fleet.LocalProvider{}.Start(context.Background(), fleet.Spec{Target: fleet.TargetNoop, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's directory %s is still there after the next run started (%v)", dirs[0], err)
	}
	if err := f.Terminate(context.Background()); err != nil {
		t.Error(err)
	}
}
