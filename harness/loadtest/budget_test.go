package loadtest

import (
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// TestBudgetLoad: on the document's rule (600 per 60 s, 8 nodes: a budget of 3 per node,
// over 60 s less the 25 ms margin) a node decides a client's first 3 requests in a window
// alone and sends the rest to the store; a client that spreads over the nodes, or spaces
// its requests a window apart, never reaches the store.
func TestBudgetLoad(t *testing.T) {
	const w = 60 * time.Second
	req := func(at time.Duration, client int32, node int16) schedule.Request {
		return schedule.Request{At: at, Client: client, Replica: node}
	}
	clients := []schedule.Client{{ID: "a", Limit: 600, Window: w}, {ID: "b", Limit: 600, Window: w}, {ID: "c", Limit: 600, Window: w}}
	tests := []struct {
		name        string
		reqs        []schedule.Request
		past, hot   int64
		hotsClients int
	}{
		{"three on one node stay within the budget", []schedule.Request{req(0, 0, 0), req(time.Second, 0, 0), req(2*time.Second, 0, 0)}, 0, 0, 0},
		{"the fourth and fifth on one node go to the store", []schedule.Request{req(0, 0, 0), req(1, 0, 0), req(2, 0, 0), req(3, 0, 0), req(4, 0, 0), req(5, 0, 1)}, 2, 6, 1},
		{"eight nodes hold 24 alone", func() []schedule.Request {
			var r []schedule.Request
			for i := range 24 {
				r = append(r, req(time.Duration(i)*time.Millisecond, 1, int16(i%8)))
			}
			return r
		}(), 0, 0, 0},
		{"a window less the margin later, the budget is free again", []schedule.Request{req(0, 2, 3), req(1, 2, 3), req(2, 2, 3),
			req(w-25*time.Millisecond, 2, 3), req(w-25*time.Millisecond+1, 2, 3), req(w-25*time.Millisecond+2, 2, 3), req(w-25*time.Millisecond+3, 2, 3)}, 1, 7, 1},
		{"a request past the budget does not use it up", []schedule.Request{req(0, 0, 0), req(1, 0, 0), req(2, 0, 0), req(30*time.Second, 0, 0),
			req(w-25*time.Millisecond+2, 0, 0)}, 1, 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := schedule.Schedule{Requests: tt.reqs, Clients: clients, Duration: 2 * w}
			got := budgetLoad(&s, 8)
			want := result.BudgetLoad{Budget: 3, PastBudget: tt.past, HotRequests: tt.hot, HotClients: tt.hotsClients, Requests: int64(len(tt.reqs)), Duration: 2 * w}
			if *got != want {
				t.Errorf("%+v, want %+v", *got, want)
			}
		})
	}
}

// TestBoundedCostClaim: the bounded design's store cost is confirmed between half its
// nodes' epoch reads and what the schedule allows it (epoch reads, pushes and one call per
// request past a budget), on a sync that works; it is not confirmed above (the background
// costs the store something) or below (the epoch reads did not arrive), nor on a failing
// sync, and not measured without the schedule's figures or sync metrics.
func TestBoundedCostClaim(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Spec.TimeScale = 0.2 // 8 nodes / 40 ms = 200 epoch reads/s, 400/s with the push chunks
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
			if got := boundedCostClaim(res, cfg).Verdict(); got != tt.verdict {
				t.Errorf("%q, want %q", got, tt.verdict)
			}
		})
	}
}
