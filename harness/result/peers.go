package result

import (
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// PeerRow is one system under test of a run, its scenarios side by side: the built-in
// replica's design or a target file's limiter (make loadtest-peers puts envoy's ratelimit
// and go-redis/redis_rate beside the project's design).
type PeerRow struct {
	System string `json:"system"` // target name, or "replica <algorithm>/<mode>"
	Gated  bool   `json:"gated"`
	// Figures of the scenario without a fault.
	Window             time.Duration `json:"window_ns"`
	BoundaryOvershoot  float64       `json:"boundary_overshoot"` // the boundary-burst probe's busiest window / limit
	MaxOvershoot       float64       `json:"max_overshoot"`      // the worst client's
	WorstClient        string        `json:"worst_client"`
	FalseRejects       int           `json:"false_rejects"`
	Errors             int           `json:"errors"` // 5xx, other statuses and transport failures, with no fault
	P99                time.Duration `json:"p99_ns"`
	StorePerRequest    float64       `json:"store_commands_per_request"` // round trips: commands sent to the store
	StoreOpsPerRequest float64       `json:"store_ops_per_request"`      // the store's work, commands run inside scripts too
	NoStore            bool          `json:"no_store,omitempty"`         // it keeps its counters among its nodes: no store figures
	// Nodes is how many nodes the system ran (its scenario without a fault); 0: not known.
	Nodes int `json:"nodes,omitempty"`
	// Outcome is the system's over every scenario it ran (outcome.Combine): a promise broken
	// on schedule in any scenario makes it fail whatever else was generator-bound.
	Outcome outcome.Outcome `json:"outcome"`
	// Stop, Pause, Slow and Restart are what clients saw with the store stopped, paused,
	// slowed and killed and started again empty, Kill with one node killed; nil where the
	// scenario did not run.
	Stop    *PeerFault `json:"stop,omitempty"`
	Pause   *PeerFault `json:"pause,omitempty"`
	Slow    *PeerFault `json:"slow,omitempty"`
	Restart *PeerFault `json:"restart,omitempty"`
	Kill    *PeerFault `json:"kill,omitempty"`
	// FarZone is the system's scenario without a fault on a topology (--zones, a target
	// file's topology: section), seen from its farthest zone; Partition that zone cut from the
	// store (partition). Nil where the system was not run so. The other scenarios of a run on a
	// topology (a store fault on it, link-slow, flap, partition-blackhole) are not in this
	// table: its store columns are the system's without one.
	FarZone   *PeerZone `json:"far_zone,omitempty"`
	Partition *PeerZone `json:"partition,omitempty"`
	// Zoned says the row holds a scenario run on a topology; Unzoned one run without: a run
	// made again replaces only the columns it ran (KeepPeerRows, MergePeerRows).
	Zoned   bool `json:"zoned,omitempty"`
	Unzoned bool `json:"unzoned,omitempty"`
}

// PeerZone is what a scenario on a topology showed, its farthest zone apart: the whole
// run's worst client on the gated clock (the gate's figure: a client's requests go to every
// zone) beside what the far zone's replicas admitted and how long they took.
type PeerZone struct {
	Zone string      `json:"zone"` // the farthest zone's name
	Link LinkFigures `json:"link"` // its link to the store, one way
	// PeerZone and PeerLink, for a system whose zones' nodes reach each other through links
	// (Conditions.PeerLinks): the nearest other zone and the far zone's link to its peers,
	// one way (topology.Between, as the fleet builds it).
	PeerZone string      `json:"peer_zone,omitempty"`
	PeerLink LinkFigures `json:"peer_link,omitzero"`
	// Zones are the topology as ran, in the --zones form.
	Zones              string        `json:"zones"`
	Accepted, Rejected int           `json:",omitempty"`
	Errors, Timeouts   int           `json:",omitempty"`
	FalseRejects       int           `json:",omitempty"`
	Overshoot          float64       // the worst client's, on the gated clock
	FarOvershoot       float64       // the most one client was admitted by the far zone's replicas (ZoneFigures.Overshoot)
	FarP99, FarMax     time.Duration // the far zone's answer times
	FarErrors          int           // the far zone's errors
	Outcome            outcome.Outcome
}

// PeerFaultColumn is one fault column of the systems' table.
type PeerFaultColumn struct {
	Name  string     // the column's head: "store stopped"
	Fault *PeerFault // nil: not run
	// Store says the fault hits a store: a system without one cannot have it.
	Store bool
}

// FaultColumns are the row's fault columns, in the table's order.
func (r PeerRow) FaultColumns() []PeerFaultColumn {
	return []PeerFaultColumn{
		{"store stopped", r.Stop, true}, {"store paused", r.Pause, true}, {"store slow", r.Slow, true},
		{"store restarted", r.Restart, true}, {"node killed", r.Kill, false},
	}
}

// PeerFault is what the clients of a fault scenario saw.
type PeerFault struct {
	Accepted, Rejected, Errors int           // over the whole scenario
	Timeouts                   int           // of the errors, requests that got no answer in time
	RoutingErrors              int           `json:",omitempty"` // node killed: requests the harness sent to the dead node, in no other count
	P99, Max                   time.Duration // latency of the requests sent during the outage (and its grace)
	Timed                      int64         // how many requests those are: 0, the latency is not measured
	Overshoot                  float64       // worst client's busiest window / limit
	Outcome                    outcome.Outcome
}

// Verdict is the system's outcome in one word.
func (r PeerRow) Verdict() string { return r.Outcome.Word() }

// Verdict is the fault scenario's outcome in one word.
func (f PeerFault) Verdict() string { return f.Outcome.Word() }

// PeerTable groups a run's scenarios by system under test: every target file's
// scenarios, and the built-in replica's gated design. Comparison scenarios of the
// built-in matrix are left out: they are other designs, not other systems.
func PeerTable(scenarios []ScenarioResult) []PeerRow {
	var rows []PeerRow
	index := map[string]int{}
	for _, s := range scenarios {
		name := s.Target
		if name == "" {
			if !s.Gated {
				continue
			}
			name = "replica " + string(s.Algorithm) + "/" + s.Mode
		}
		i, ok := index[name]
		if !ok {
			i = len(rows)
			index[name] = i
			rows = append(rows, PeerRow{System: name, Gated: s.Gated})
		}
		row := &rows[i]
		if len(s.Conditions.Zones) > 0 {
			row.Zoned = true
			switch s.Fault {
			case FaultNone:
				row.FarZone = peerZone(s)
				row.Outcome = outcome.Combine(row.Outcome, s.Outcome)
				row.NoStore, row.Nodes = s.NoStore, s.Conditions.Replicas
			case FaultPartition:
				row.Partition = peerZone(s)
				row.Outcome = outcome.Combine(row.Outcome, s.Outcome)
			}
			continue
		}
		row.Unzoned = true
		slot := map[string]**PeerFault{FaultStop: &row.Stop, FaultPause: &row.Pause, FaultSlow: &row.Slow, FaultRestart: &row.Restart, FaultKill: &row.Kill}
		switch at, ok := slot[s.Fault]; {
		case ok:
			f := &PeerFault{Accepted: s.Accepted, Rejected: s.Rejected, Errors: s.Errors.Total(), Timeouts: s.Errors.Timeout,
				RoutingErrors: s.Errors.Routing, Overshoot: s.MaxOvershoot, Outcome: s.Outcome}
			if s.FaultLatency != nil {
				f.P99, f.Max, f.Timed = s.FaultLatency.P99, s.FaultLatency.Max, s.FaultLatency.Count
			}
			*at = f
			row.Outcome = outcome.Combine(row.Outcome, s.Outcome)
		case s.Fault != FaultNone: // a cluster store's master faults are not in this table
		default:
			row.MaxOvershoot, row.FalseRejects, row.Errors, row.P99 = s.MaxOvershoot, s.FalseRejects, s.Errors.Total(), s.Latency.P99
			row.Outcome, row.NoStore, row.Nodes = outcome.Combine(row.Outcome, s.Outcome), s.NoStore, s.Conditions.Replicas
			if s.Requests > 0 {
				row.StorePerRequest = float64(s.StoreCommands) / float64(s.Requests)
				row.StoreOpsPerRequest = float64(s.StoreOps) / float64(s.Requests)
			}
			gate := ClockClient // a run written before both clocks were counted gated on send times
			if s.Clocks != nil {
				gate = s.Clocks.Gate
			}
			for _, p := range s.Probes {
				row.Window = p.Window
				if strings.HasSuffix(p.ID, "boundary-burst") && p.Overshoot > row.BoundaryOvershoot {
					row.BoundaryOvershoot = p.Overshoot
				}
				// The worst client is the gate's: on the gated clock, the first of a tie (as
				// accounting names it in the max overshoot check).
				if row.WorstClient == "" && p.OvershootOn(gate) >= row.MaxOvershoot {
					row.WorstClient = p.ID
				}
			}
		}
	}
	return rows
}

// peerZone is a scenario on a topology as the far-zone and partition columns show it.
func peerZone(s ScenarioResult) *PeerZone {
	top := topology.Topology{Zones: s.Conditions.Zones}
	z := &PeerZone{Zones: top.String(), Accepted: s.Accepted, Rejected: s.Rejected, Errors: s.Errors.Total(), Timeouts: s.Errors.Timeout,
		FalseRejects: s.FalseRejects, Overshoot: s.MaxOvershoot, Outcome: s.Outcome}
	if k := top.Farthest(); k >= 0 {
		far := top.Zones[k]
		z.Zone, z.Link = far.Name, LinkFigures{Latency: far.Latency, Jitter: far.Jitter}
		z.PeerZone, z.PeerLink = s.Conditions.peerLinkOf(top, k)
		for _, f := range s.Zones {
			if f.Zone == far.Name {
				z.FarOvershoot, z.FarP99, z.FarMax, z.FarErrors = f.Overshoot, f.Latency.P99, f.Latency.Max, f.Errors.Total()
			}
		}
	}
	return z
}

// MergePeerRows is rows with more's rows added: a row of a system rows already holds is
// merged into it where the two ran different parts (one on a topology only, the other
// without one only: make results gives the peers' run and their zones' run), and added
// beside it otherwise (a system two runs ran the same way has two rows).
func MergePeerRows(rows, more []PeerRow) []PeerRow {
	for _, m := range more {
		merged := false
		for i := range rows {
			if rows[i].System == m.System && complementary(rows[i], m) {
				rows[i], merged = mergeRow(rows[i], m), true
				break
			}
		}
		if !merged {
			rows = append(rows, m)
		}
	}
	return rows
}

// complementary says a and b ran different parts of one system: one only on a topology, the
// other only without one.
func complementary(a, b PeerRow) bool {
	return (a.Zoned && !a.Unzoned && b.Unzoned && !b.Zoned) || (b.Zoned && !b.Unzoned && a.Unzoned && !a.Zoned)
}

// mergeRow is the row of a system with a's figures and b's of the part a did not run, its
// outcome over both; gated as its run without a topology was.
func mergeRow(a, b PeerRow) PeerRow {
	if b.Unzoned {
		a, b = b, a
	}
	a.Zoned, a.FarZone, a.Partition = true, b.FarZone, b.Partition
	a.Outcome = outcome.Combine(a.Outcome, b.Outcome)
	return a
}
