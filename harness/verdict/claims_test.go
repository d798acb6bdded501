package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// TestBoundedCostClaim: the bounded design's store cost is confirmed between half its
// nodes' epoch reads and what the schedule allows it (epoch reads, pushes and one call per
// request past a budget), on a sync that works; it is not confirmed above (the background
// costs the store something) or below (the epoch reads did not arrive), nor on a failing
// sync, and not measured without the schedule's figures or sync metrics.
func TestBoundedCostClaim(t *testing.T) {
	j := Judging{Replicas: 8, Sync: 40 * time.Millisecond} // 8 nodes / 40 ms = 200 epoch reads/s, 400/s with the push chunks
	ok := func(okN, failed int64) *result.SyncHealth {
		return &result.SyncHealth{Available: true, Exchanges: &result.Exchanges{Attempted: okN + failed, OK: okN, Failed: failed}}
	}
	// 100 s, 20,000 requests past a budget: 200/s; the bound is 400 + 200 = 600/s.
	budget := &result.BudgetLoad{Budget: 3, PastBudget: 20_000, HotClients: 7, HotRequests: 30_000, Requests: 90_000, Duration: 100 * time.Second}
	tests := []struct {
		name    string
		perSec  float64
		budget  *result.BudgetLoad
		sync    *result.SyncHealth
		verdict string
	}{
		{"epoch reads and the hot clients' calls", 450, budget, ok(8000, 0), "confirmed"},
		{"the epoch reads alone", 200, budget, ok(8000, 0), "confirmed"},
		{"at the bound", 600, budget, ok(8000, 0), "confirmed"},
		{"the background costs the store", 900, budget, ok(8000, 0), "not confirmed: the store saw 900 commands/s, over the 600/s the design allows this schedule"},
		{"the epoch reads missing", 90, budget, ok(8000, 0), "not confirmed: the store saw 90 commands/s, under 0.5x nodes / interval: the epoch reads did not all arrive"},
		{"a failing sync", 300, budget, ok(80, 20), "not confirmed: sync failing (20 of 100 exchanges failed)"},
		{"no schedule figures", 300, nil, ok(8000, 0), "not measured: the schedule's load past the budgets is not known (a rule file of its own)"},
		{"no sync metrics", 300, budget, nil, "not measured: no sync metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.ScenarioResult{StoreCmdPerSec: tt.perSec, AchievedRate: 900, Sync: tt.sync, Budget: tt.budget}
			if got := boundedCostClaim(res, j).Verdict(); got != tt.verdict {
				t.Errorf("%q, want %q", got, tt.verdict)
			}
		})
	} // A store slowed or stopped on purpose makes the exchanges fail: that says nothing of the
	// cost, so the claim is not measured there, and still confirmed on a sync that worked.
	for _, tt := range []struct {
		fault   string
		sync    *result.SyncHealth
		verdict string
	}{
		{result.FaultSlow, ok(80, 20), "not measured: sync failing (20 of 100 exchanges failed) while the store was slowed on purpose: no evidence of the cost either way"},
		{result.FaultStop, ok(80, 20), "not measured: sync failing (20 of 100 exchanges failed) while the store was stopped on purpose: no evidence of the cost either way"},
		{result.FaultKill, ok(80, 20), "not confirmed: sync failing (20 of 100 exchanges failed)"},
		{result.FaultSlow, ok(8000, 0), "confirmed"},
	} {
		jf := j
		jf.Fault = tt.fault
		res := &result.ScenarioResult{StoreCmdPerSec: 300, AchievedRate: 900, Sync: tt.sync, Budget: budget}
		if got := boundedCostClaim(res, jf).Verdict(); got != tt.verdict {
			t.Errorf("%s: %q, want %q", tt.fault, got, tt.verdict)
		}
	}
}

// TestDelayedCostClaimNeedsAWorkingSync: the store cost claim of delayed sync is confirmed
// only inside its band around nodes / interval and on exchanges that succeeded; a dead sync
// (few commands because few exchanges got through) is not a cheap one, and a run without
// sync metrics measured nothing.
func TestDelayedCostClaimNeedsAWorkingSync(t *testing.T) {
	j := Judging{Replicas: 8, Sync: 40 * time.Millisecond} // 8 nodes / 40 ms = 200 commands/s
	ok := func(okN, failed, timedOut int64) *result.SyncHealth {
		return &result.SyncHealth{Available: true, Exchanges: &result.Exchanges{Attempted: okN + failed + timedOut, OK: okN, Failed: failed, TimedOut: timedOut}}
	}
	tests := []struct {
		name        string
		perSec      float64
		sync        *result.SyncHealth
		confirmed   bool
		notMeasured bool
		verdict     string
	}{
		{"at nodes / interval, every exchange ok", 200, ok(8000, 0, 0), true, false, "confirmed"},
		{"inside the band, low side", 101, ok(4000, 10, 0), true, false, "confirmed"},
		{"inside the band, high side", 219, ok(8000, 0, 0), true, false, "confirmed"},
		{"95 % exactly", 200, ok(95, 3, 2), true, false, "confirmed"},
		{"over the band", 230, ok(8000, 0, 0), false, false, "not confirmed: the store saw 1.15x nodes / interval, over 1.1x"},
		{"under the band", 90, ok(8000, 0, 0), false, false, "not confirmed: the store saw 0.45x nodes / interval, under 0.5x"},
		// HS2 on 16 cores: 14 commands/s, which the one-sided check confirmed.
		{"a dead sync", 14, ok(50, 400, 350), false, false, "not confirmed: sync failing (750 of 800 exchanges failed)"},
		{"failing inside the band", 200, ok(94, 4, 2), false, false, "not confirmed: sync failing (6 of 100 exchanges failed)"},
		{"zero commands, zero exchanges", 0, ok(0, 0, 0), false, false, "not confirmed: sync failing (no exchange attempted)"},
		{"no scrape", 200, nil, false, true, "not measured: no sync metrics"},
		{"scrape without exchange metrics", 200, &result.SyncHealth{Why: "the replicas' /metrics exposes no sync metric"}, false, true,
			"not measured: no sync metrics (the replicas' /metrics exposes no sync metric)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.ScenarioResult{StoreCmdPerSec: tt.perSec, AchievedRate: 2500, Sync: tt.sync}
			c := delayedCostClaim(res, j)
			if c.Confirmed != tt.confirmed || c.NotMeasured != tt.notMeasured || c.Verdict() != tt.verdict {
				t.Errorf("confirmed %v, not measured %v, %q; want %v, %v, %q (%s)", c.Confirmed, c.NotMeasured, c.Verdict(), tt.confirmed, tt.notMeasured, tt.verdict, c.Figure)
			}
			if !strings.Contains(c.Text, "200/s here") || !strings.Contains(c.Text, "within 0.5x..1.1x") {
				t.Errorf("the claim must state the bound and the band: %q", c.Text)
			}
		})
	}
}
