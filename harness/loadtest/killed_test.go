package loadtest

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// killedScenario writes what a run leaves of one scenario when it is killed: scenario.json,
// and outcomes.csv for the requests scheduled before cut (every one accepted, answered in
// 1 ms, sent on time), in completion order.
func killedScenario(t *testing.T, runDir string, run time.Time, sc result.Scenario, spec schedule.Spec, start time.Time, cut time.Duration) int {
	t.Helper()
	s, err := schedule.Build(spec, schedule.DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	dir := sc.Dir(runDir)
	st := result.Started{Run: run, Scenario: sc, Schedule: spec, Start: start, Lateness: 20 * time.Millisecond, MinRateRatio: 0.95,
		Config: result.ConfigSummary{Provider: "local", Network: "loopback", Replicas: spec.Replicas, TimeScale: spec.TimeScale,
			Window: time.Duration(float64(time.Minute) * spec.TimeScale), Limit: 600, Rate: spec.Rate, Clients: spec.Clients, Seed: spec.Seed,
			SyncInterval: time.Duration(float64(200*time.Millisecond) * spec.TimeScale)}}
	if err := result.Write(dir, result.StartedFile, st); err != nil {
		t.Fatal(err)
	}
	w, err := traffic.Replace(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, q := range s.Requests {
		if q.At >= cut {
			break
		}
		if err := w.Write(traffic.Outcome{Index: i, Code: 200, Sent: q.At, Latency: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestJudgeKilledRun(t *testing.T) {
	spec := schedule.Spec{TimeScale: 0.05, Rate: 100, Clients: 1000, Seed: 20260730, Replicas: 2}
	run := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	design := result.Scenario{Name: "sliding_window/delayed", Algorithm: "sliding_window", Mode: "delayed", Gated: true}
	stop := result.Scenario{Name: "sliding_window/delayed/store-stop", Algorithm: "sliding_window", Mode: "delayed", Fault: result.FaultStop, Gated: true}

	t.Run("killed in the first scenario: no summary.json", func(t *testing.T) {
		dir := t.TempDir()
		// A scenario of an earlier run in the same directory, which this run did not run.
		killedScenario(t, dir, run.Add(-time.Hour), result.Scenario{Name: "fixed_window/central", Algorithm: "fixed_window", Mode: "central"}, spec, run.Add(-time.Hour), 9*time.Second)
		n := killedScenario(t, dir, run, design, spec, run.Add(5*time.Second), 4*time.Second)
		if got := Unjudged(dir); len(got) != 1 || got[0] != design.Name {
			t.Errorf("Unjudged = %v, want [%s]", got, design.Name)
		}
		sum, err := JudgeKilled(dir, JudgeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Incomplete || sum.Pass || len(sum.Scenarios) != 1 || !sum.StartedAt.Equal(run) {
			t.Fatalf("summary: incomplete %v, pass %v, %d scenarios, started %v; want incomplete, not passed, this run's one scenario", sum.Incomplete, sum.Pass, len(sum.Scenarios), sum.StartedAt)
		}
		r := sum.Scenarios[0]
		// Judged on the requests before the cut, all of which have an outcome: every one sent
		// on time, so the generator kept its schedule; every one accepted, so the probes are
		// far over their limit (the boundary burst's first limit is at 2.85 s).
		if r.Requests != n || r.Accepted != n || r.GeneratorBound || r.Pass || r.MaxOvershoot <= accounting.OvershootLimit {
			t.Errorf("scenario: %d requests, %d accepted, generator-bound %v, pass %v, overshoot %v; want %d judged, all accepted, over the limit",
				r.Requests, r.Accepted, r.GeneratorBound, r.Pass, r.MaxOvershoot, n)
		}
		if !strings.Contains(r.Incomplete, "judged on the") || r.Sync == nil || !strings.Contains(r.Sync.Why, "killed") {
			t.Errorf("scenario says incomplete %q, sync %+v", r.Incomplete, r.Sync)
		}
		back, err := result.Read[result.Summary](dir, result.SummaryFile)
		if err != nil || !back.Incomplete || !strings.Contains(back.IncompleteWhy, design.Name) {
			t.Errorf("summary.json: %v, incomplete %v %q", err, back.Incomplete, back.IncompleteWhy)
		}
		if got := Unjudged(dir); len(got) != 0 {
			t.Errorf("after the judge, Unjudged = %v", got)
		}
		if _, err := JudgeKilled(dir, JudgeConfig{}); err == nil {
			t.Error("judging a judged run again: no error")
		}
	})

	t.Run("killed in the second scenario: the first kept as the run judged it", func(t *testing.T) {
		dir := t.TempDir()
		killedScenario(t, dir, run, design, spec, run.Add(5*time.Second), time.Hour)
		kept := result.ScenarioResult{Scenario: design, Requests: 12345, Pass: true}
		first := result.Summary{StartedAt: run, Pass: true}
		addScenario(&first, kept)
		if err := writeSummary(dir, first); err != nil {
			t.Fatal(err)
		}
		n := killedScenario(t, dir, run, stop, spec, run.Add(30*time.Second), 2*time.Second)
		sum, err := JudgeKilled(dir, JudgeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Scenarios) != 2 || sum.Scenarios[0].Requests != 12345 || sum.Scenarios[1].Name != stop.Name || sum.Scenarios[1].Requests != n {
			t.Fatalf("scenarios %+v: want the first as summary.json held it and the second judged on %d requests", sum.Scenarios, n)
		}
		if !sum.Incomplete || sum.Pass || sum.Failed[len(sum.Failed)-1] != "incomplete: the run was killed during "+stop.Name {
			t.Errorf("summary: incomplete %v, pass %v, failed %v", sum.Incomplete, sum.Pass, sum.Failed)
		}
	})

	t.Run("killed with its shards' outcomes not yet merged", func(t *testing.T) {
		dir := t.TempDir()
		n := killedScenario(t, dir, run, design, spec, run.Add(5*time.Second), 4*time.Second)
		// The shards write their own outcomes; the scenario's file is merged as they finish,
		// so after a kill it may hold nothing: the judge reads the shards'.
		whole, err := schedule.Build(spec, schedule.DefaultClasses())
		if err != nil {
			t.Fatal(err)
		}
		var ws [2]*traffic.Writer
		for i := range ws {
			if ws[i], err = traffic.Replace(ShardDir(design.Dir(dir), i)); err != nil {
				t.Fatal(err)
			}
		}
		for i, q := range whole.Requests[:n] {
			if err := ws[int(q.Client)%2].Write(traffic.Outcome{Index: i, Code: 200, Sent: q.At, Latency: time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range ws {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := traffic.Replace(design.Dir(dir)); err != nil { // the merged file, empty
			t.Fatal(err)
		}
		sum, err := JudgeKilled(dir, JudgeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if r := sum.Scenarios[0]; r.Requests != n || r.Accepted != n {
			t.Errorf("judged %d requests, %d accepted; want the shards' %d", r.Requests, r.Accepted, n)
		}
	})

	t.Run("a finished run has nothing to judge", func(t *testing.T) {
		dir := t.TempDir()
		killedScenario(t, dir, run, design, spec, run.Add(5*time.Second), time.Hour)
		done := result.Summary{StartedAt: run, FinishedAt: run.Add(time.Minute), Pass: true}
		addScenario(&done, result.ScenarioResult{Scenario: design, Pass: true})
		if err := writeSummary(dir, done); err != nil {
			t.Fatal(err)
		}
		if got := Unjudged(dir); len(got) != 0 {
			t.Errorf("Unjudged = %v for a finished run", got)
		}
		if _, err := JudgeKilled(dir, JudgeConfig{}); err == nil || !strings.Contains(err.Error(), "it finished") {
			t.Errorf("JudgeKilled on a finished run: %v", err)
		}
	})

	t.Run("nothing written before the kill", func(t *testing.T) {
		dir := t.TempDir()
		killedScenario(t, dir, run, design, spec, run, 0)
		sum, err := JudgeKilled(dir, JudgeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if r := sum.Scenarios[0]; r.Error == "" || r.Pass || !strings.Contains(r.Error, "no request has an outcome") {
			t.Errorf("scenario with no outcome: error %q, pass %v", r.Error, r.Pass)
		}
	})

	if Killed(t.TempDir()) {
		t.Error("an empty directory is a killed run")
	}
}
