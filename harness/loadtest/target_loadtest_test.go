//go:build loadtest

package loadtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/target"
)

// TestLoadtestTargetFileFixedWindowFailsTheOvershootGate runs a limiter the harness did not
// write, targets/cmd/fixedwindow in its own container (rlharness/fixedwindow:dev), through
// its target file: the client in a query parameter, rejections as 403, counters in the Redis
// the harness runs. The overshoot gate must catch its 2x at the window edge.
func TestLoadtestTargetFileFixedWindowFailsTheOvershootGate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tg, err := target.Load("../../targets/peers/fixedwindow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := quickConfig(t)
	cfg.Spec.TimeScale = 1 // the target's 12 s window sets it (0.2)
	cfg.FailOpen = false
	cfg.Targets = []*target.Target{tg}
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want the target's one", len(sum.Scenarios))
	}
	sc := sum.Scenarios[0]
	if sc.Error != "" {
		t.Fatal(sc.Error)
	}
	if sc.Target != "fixedwindow" || sum.Config.TimeScale != 0.2 || sum.Config.Replicas != 2 {
		t.Errorf("target %q, time scale %v, replicas %d: want fixedwindow at 0.2 (its 12 s window) on 2 replicas",
			sc.Target, sum.Config.TimeScale, sum.Config.Replicas)
	}
	if sc.Rejected == 0 || sc.Errors.Total() != 0 {
		t.Errorf("%d rejected, %d errors: the target's 403 must count as a rejection", sc.Rejected, sc.Errors.Total())
	}
	if sum.Pass || !strings.Contains(strings.Join(sum.Failed, ";"), "fixedwindow: max overshoot") {
		t.Errorf("pass=%v failed=%v: want the max overshoot gate failed", sum.Pass, sum.Failed)
	}
	if sc.MaxOvershoot < 1.5 || sc.StoreCommands == 0 {
		t.Errorf("max overshoot x%.3f, store commands %d: want near x2 at the window edge, counted in the harness's Redis", sc.MaxOvershoot, sc.StoreCommands)
	}
	if len(sc.Claims) == 0 || !sc.Claims[0].Confirmed {
		t.Errorf("claims %+v: want the fixed-window claim confirmed", sc.Claims)
	}
}
