package result

import "time"

// Faults a scenario can inject into a Redis Cluster store: one master, not the whole store.
const (
	FaultMasterKill  = "master-kill"  // one master killed (its replica is promoted), later started again
	FaultMasterPause = "master-pause" // one master frozen (docker pause / SIGSTOP), later resumed
)

// Stores a fleet can count in.
const (
	StoreRedis   = "redis"   // one Redis
	StoreCluster = "cluster" // a Redis Cluster: masters, each with replicas
)

// ClusterFault is what a cluster's slot map did around a fault, polled from outside
// (CLUSTER NODES from a node that answers, PING to every node).
type ClusterFault struct {
	Member string         `json:"member"` // the fleet member the fault hit, "redis-node-0"
	Node   string         `json:"node"`   // its address
	Every  time.Duration  `json:"poll_every_ns"`
	Polls  int            `json:"polls"`
	Ranges []ClusterRange `json:"ranges"`
	Events []ClusterEvent `json:"events"`
}

// ClusterRange is one slot range: how long it had no master that answered.
type ClusterRange struct {
	Slots      string        `json:"slots"`       // "0-5460"
	MasterFrom string        `json:"master_from"` // before the fault
	MasterTo   string        `json:"master_to"`   // after it
	Down       time.Duration `json:"down_ns"`     // total time without an answering master
	// FirstDown and Back are offsets from the start of the traffic; -1 when not seen.
	FirstDown time.Duration `json:"first_down_ns"`
	Back      time.Duration `json:"back_ns"`
}

// ClusterEvent is one change of a node's role or health, at an offset from the start of
// the traffic.
type ClusterEvent struct {
	At   time.Duration `json:"at_ns"`
	Node string        `json:"node"`
	From string        `json:"from"`
	To   string        `json:"to"`
}
