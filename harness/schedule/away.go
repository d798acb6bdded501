package schedule

import (
	"fmt"
	"time"
)

// RouteAround sends the requests that the schedule gives replica k at offsets in [from, to)
// to the other k replicas in turn instead (by request index, so the same schedule moves the
// same way on every machine), as a load balancer would while k is down. It returns how many
// it moved. The schedule must span at least two replicas.
func (s *Schedule) RouteAround(k int, from, to time.Duration) (int, error) {
	n := s.Replicas()
	if k < 0 || k >= n || n < 2 {
		return 0, fmt.Errorf("route around replica %d: the schedule spans %d replicas, and a request needs another one to go to", k, n)
	}
	moved := 0
	for i := range s.Requests {
		r := &s.Requests[i]
		if int(r.Replica) != k || r.At < from || r.At >= to {
			continue
		}
		// The i-th request goes to the (i mod n−1)-th of the others, skipping k.
		other := i % (n - 1)
		if other >= k {
			other++
		}
		r.Replica = int16(other)
		moved++
	}
	return moved, nil
}
