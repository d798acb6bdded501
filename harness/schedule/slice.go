package schedule

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// Slice is one node's share of the documents' traffic: what node Node of a fleet of Nodes is
// sent when the fleet carries Nodes × Rate (HS2's 40,000 req/s over 8 nodes is 5,000 at each,
// its 200,000 clients 25,000). harness bench --slice sends it to one replica told it is that
// node, so that the replica's budgets and sync are the fleet's.
type Slice struct {
	TimeScale float64       `json:"time_scale"` // every duration ×F, as a load test's
	Rate      float64       `json:"rate"`       // req/s the node is sent: its population's and its probes' share
	Clients   int           `json:"clients"`    // the population the node's background requests are drawn from
	Node      int           `json:"node"`
	Nodes     int           `json:"nodes"`
	Duration  time.Duration `json:"duration_ns"`
	Seed      uint64        `json:"seed"`
	// Prefix starts every client ID, so that one run's steps have clients of their own.
	Prefix string `json:"prefix,omitempty"`
}

// Window is the documents' window at the slice's time scale: the replica's rule window.
func (s Slice) Window() time.Duration { return scale(limiters.DefaultWindow, s.TimeScale) }

func (s Slice) check() error {
	switch {
	case s.Nodes < 1 || s.Node < 0 || s.Node >= s.Nodes:
		return fmt.Errorf("slice: node %d of %d: want 0 <= node < nodes", s.Node, s.Nodes)
	case !(s.Rate > 0):
		return fmt.Errorf("slice: rate must be > 0 req/s (got %v)", s.Rate)
	case s.Duration <= 0:
		return fmt.Errorf("slice: duration must be > 0 (got %v)", s.Duration)
	}
	return nil
}

// Routing says which balancer the slice's population stands for, or "" when it is neither
// of HS1's: DefaultClients / Nodes clients send the node all their requests (a balancer that
// keeps a client on one node), DefaultClients each send it 1/Nodes of theirs (one that spreads
// every client's requests over the nodes, as a load test does). The store's work a request
// depends on which: a node decides a client alone within its budget a window, so the fewer of
// a client's requests reach one node, the fewer pass it.
func (s Slice) Routing() string {
	switch {
	case s.Nodes > 1 && s.Clients == DefaultClients/s.Nodes:
		return fmt.Sprintf("HS1/%d: each sends this node all its requests, as behind a balancer that keeps a client on one node", s.Nodes)
	case s.Nodes > 1 && s.Clients == DefaultClients:
		return fmt.Sprintf("HS1: each sends this node 1/%d of its requests, as behind a balancer that spreads a client over the nodes", s.Nodes)
	}
	return ""
}

// BuildSlice is the node's traffic in class (the documents' rule): the documents' probe
// clients spread over Nodes replicas as a load test spreads them, of which the requests that
// fall on Node within Duration are kept, and the background population of Clients at the
// rate left over, every request to the one replica the schedule is sent to (index 0).
func BuildSlice(s Slice, class Class) (Schedule, error) {
	if err := s.check(); err != nil {
		return Schedule{}, err
	}
	p := Params{Limit: class.Limit, Window: limiters.DefaultWindow, Scale: s.TimeScale}
	rng := rand.New(rand.NewPCG(s.Seed, 0x511ce))
	probes, err := Probes(p)
	if err != nil {
		return Schedule{}, err
	}
	if err := probes.AssignReplicas(s.Nodes, rng); err != nil {
		return Schedule{}, err
	}
	share := probes.Requests[:0:0]
	for _, r := range probes.Requests {
		if int(r.Replica) == s.Node && r.At < s.Duration {
			r.Replica = 0
			share = append(share, r)
		}
	}
	probes.Requests, probes.Duration = share, s.Duration
	rate := s.Rate - float64(len(share))/s.Duration.Seconds()
	if rate <= 0 {
		return Schedule{}, fmt.Errorf("slice: the probes' share alone is %.0f req/s, at or above the %v asked: ask more", float64(len(share))/s.Duration.Seconds(), s.Rate)
	}
	bg := DefaultBackground(p, rate, s.Duration)
	bg.Clients = s.Clients
	back, err := NewBackground(bg, rng)
	if err != nil {
		return Schedule{}, fmt.Errorf("slice population: %w", err)
	}
	out := Merge(probes, back)
	prefixIDs(&out, s.Prefix)
	return out, nil
}
