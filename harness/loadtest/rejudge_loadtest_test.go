//go:build loadtest

package loadtest

import (
	"testing"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
)

// checkJudgedAgain is harness judge on a finished run's directory: it judges the run again
// from what it wrote, as the run judged it, the same checks, figures and verdicts, scenario
// by scenario, a fault scenario's included; with the other gate clock the clocks line names
// it. TestLoadtestFaults asks it of each fault's run, so that the run a fault test makes is
// judged twice instead of a run of its own (30 s of make test).
func checkJudgedAgain(t *testing.T, cfg Config, sum result.Summary) {
	t.Helper()
	again, err := JudgeRunDir(cfg.OutDir, JudgeConfig{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Scenarios) != len(sum.Scenarios) || len(sum.Scenarios) == 0 {
		t.Fatalf("judged %d scenarios again of the run's %d", len(again.Scenarios), len(sum.Scenarios))
	}
	for i, run := range sum.Scenarios {
		got := again.Scenarios[i]
		if got.Name != run.Name || len(got.Checks) != len(run.Checks) || got.Pass != run.Pass || got.GeneratorBound != run.GeneratorBound {
			t.Errorf("%s: judged again %s, %d checks, pass %v, generator-bound %v; the run's %d checks, pass %v, generator-bound %v",
				run.Name, got.Name, len(got.Checks), got.Pass, got.GeneratorBound, len(run.Checks), run.Pass, run.GeneratorBound)
			continue
		}
		for k, c := range run.Checks {
			if got.Checks[k] != c {
				t.Errorf("%s: check %d judged again\n  %v\nthe run's\n  %v", run.Name, k, got.Checks[k], c)
			}
		}
		if got.Clocks == nil || run.Clocks == nil || *got.Clocks != *run.Clocks {
			t.Errorf("%s: clocks judged again %+v, the run's %+v", run.Name, got.Clocks, run.Clocks)
		}
		if len(got.Claims) != len(run.Claims) {
			t.Errorf("%s: %d claims judged again, the run's %d", run.Name, len(got.Claims), len(run.Claims))
		}
	}
	client, err := JudgeRunDir(cfg.OutDir, JudgeConfig{OutDir: t.TempDir(), Gates: gatesOn(cfg, result.ClockClient)})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range client.Scenarios {
		if sc.Clocks == nil || sc.Clocks.Gate != result.ClockClient {
			t.Errorf("%s: --gate-clock client gave clocks %+v", sc.Name, sc.Clocks)
		}
	}
	t.Logf("judged again: %s", sum.Scenarios[0].Clocks)
}

// gatesOn is the run's gates on another clock, the lateness the run's own.
func gatesOn(cfg Config, clock string) (g accounting.Gates) {
	g = cfg.Gates
	g.Clock = clock
	g.LatenessP99 = 0
	return g
}
