package result

// ClusterBench is the Redis Cluster part of bench.json: the store's commands with delayed
// sync on a cluster beside one Redis at the same offered rate, and the memory each shard
// holds per client.
type ClusterBench struct {
	Rate    float64 `json:"rate_asked"`
	Masters int     `json:"masters"`
	// Single and Cluster are the steady runs of the delayed-sync fleet on one Redis and on
	// the cluster (store commands summed over its masters).
	Single  FleetBench    `json:"single"`
	Cluster FleetBench    `json:"cluster"`
	Memory  []ShardMemory `json:"memory,omitempty"`
	Layout  string        `json:"memory_layout,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// ShardMemory is one master's share of the clients loaded into the cluster.
type ShardMemory struct {
	Node      string  `json:"node"`
	Slots     string  `json:"slots"`
	Clients   int64   `json:"clients"` // keys on this master: one per client
	UsedDelta int64   `json:"used_memory_delta"`
	PerClient float64 `json:"bytes_per_client"`
}
