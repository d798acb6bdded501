package loadtest

import (
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// budgetLoad is what a schedule asks of the bounded design's store on nodes replicas, every
// client on the document's sliding window of its limit and window: the requests that arrive
// at a node past its unsynced budget (limiters.BoundsFor), which each cost at most one store
// call, and the clients that do so. A node counts only what it decided alone, so a request
// past the budget is not counted toward it.
func budgetLoad(s *schedule.Schedule, nodes int) *result.BudgetLoad {
	type bound struct {
		budget int64
		span   time.Duration
	}
	bounds := make([]bound, len(s.Clients))
	out := &result.BudgetLoad{Requests: int64(len(s.Requests)), Duration: s.Duration}
	for i, c := range s.Clients {
		r := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow, Limit: int64(c.Limit), Window: c.Window, Slices: limiters.DefaultSlices}
		bd := limiters.BoundsFor(&r, nodes)
		bounds[i] = bound{bd.Budget, time.Duration(bd.Window) * time.Microsecond}
		if i == 0 {
			out.Budget = bd.Budget
		}
	}
	// Group the requests by (client, node), keeping their order in time: a counting sort
	// on the pair, since the schedule is sorted by time.
	key := func(r schedule.Request) int { return int(r.Client)*nodes + int(r.Replica) }
	start := make([]int32, len(s.Clients)*nodes+1)
	for _, r := range s.Requests {
		start[key(r)+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	order := make([]int32, len(s.Requests))
	next := append([]int32(nil), start[:len(start)-1]...)
	for i, r := range s.Requests {
		k := key(r)
		order[next[k]] = int32(i)
		next[k]++
	}
	hot := make([]bool, len(s.Clients))
	var local []time.Duration // the node's own decisions of the client, within its budget
	for k := 0; k+1 < len(start); k++ {
		group := order[start[k]:start[k+1]]
		if len(group) == 0 {
			continue
		}
		b := bounds[s.Requests[group[0]].Client]
		local = local[:0]
		for _, i := range group {
			at := s.Requests[i].At
			for len(local) > 0 && local[0] <= at-b.span {
				local = local[1:]
			}
			if int64(len(local)) < b.budget {
				local = append(local, at)
				continue
			}
			out.PastBudget++
			hot[s.Requests[i].Client] = true
		}
	}
	for _, r := range s.Requests {
		if hot[r.Client] {
			out.HotRequests++
		}
	}
	for _, h := range hot {
		if h {
			out.HotClients++
		}
	}
	return out
}
