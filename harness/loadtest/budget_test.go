package loadtest

import (
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// TestBudgetLoad: on the document's rule (600 per 60 s, 8 nodes: a budget of 3 per node
// in any window-long interval) a node decides a client's first 3 requests in a window
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
		{"a window later, the budget is free again", []schedule.Request{req(0, 2, 3), req(1, 2, 3), req(2, 2, 3),
			req(w, 2, 3), req(w+1, 2, 3), req(w+2, 2, 3), req(w+3, 2, 3)}, 1, 7, 1},
		{"a µs short of a window later, it is not", []schedule.Request{req(0, 2, 3), req(1, 2, 3), req(2, 2, 3),
			req(w-time.Microsecond, 2, 3)}, 1, 4, 1},
		{"a request past the budget does not use it up", []schedule.Request{req(0, 0, 0), req(1, 0, 0), req(2, 0, 0), req(30*time.Second, 0, 0),
			req(w+2, 0, 0)}, 1, 5, 1},
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
