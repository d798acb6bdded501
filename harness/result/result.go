// Package result is what a load test leaves behind: summary.json's types. It knows nothing
// of Docker or of how the fleet ran, so that a report can read a run directory anywhere.
package result

import (
	"github.com/edgeproof/rlharness/harness/topology"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// SummaryFile is the name of the summary in a run directory.
const SummaryFile = "summary.json"

// Faults a scenario can inject (docs/faults.md): into the counter store, or into one node of
// the system under test.
const (
	FaultNone    = ""
	FaultStop    = "store-stop"    // Redis stopped, then started again empty
	FaultPause   = "store-pause"   // Redis frozen (docker pause / SIGSTOP), then resumed
	FaultSlow    = "store-slow"    // every store reply delayed (a TCP proxy in between), then the delay removed
	FaultRestart = "store-restart" // Redis killed (SIGKILL) and started again at once, empty
	FaultKill    = "replica-kill"  // one replica of N killed (SIGKILL), started again after the outage

	// The link faults, on a topology (--zones): one zone's link to the store, the others
	// untouched (docs/zones.md).
	FaultPartition          = "partition"           // the zone's link refuses: connections closed, new ones refused
	FaultPartitionBlackhole = "partition-blackhole" // the zone's link drops every byte: calls hang until their timeouts
	FaultLinkSlow           = "link-slow"           // the zone's every store reply delayed more
	FaultFlap               = "flap"                // the zone's link refuses and comes back, again and again
)

// LinkFault reports whether fault f hits one zone's link to the store.
func LinkFault(f string) bool {
	return f == FaultPartition || f == FaultPartitionBlackhole || f == FaultLinkSlow || f == FaultFlap
}

// Scenario is one run on a clean store: an algorithm in a mode, maybe with a store fault.
type Scenario struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	Mode      string `json:"mode"`
	// Design is delayed mode's design the scenario ran (bounded, document); empty in other
	// modes and in runs written before the bounded design was the default.
	Design string `json:"design,omitempty"`
	Fault  string `json:"fault,omitempty"`
	// Target names the target file's limiter the scenario ran on; empty for the built-in replica.
	Target string `json:"target,omitempty"`
	// Gated scenarios test the design under test: their checks decide the exit code.
	// The others are comparisons: they test the document's claims about other designs.
	Gated bool `json:"gated"`
}

// Dir is the scenario's directory under the run directory (its outcomes.csv).
func (s Scenario) Dir(runDir string) string {
	return filepath.Join(runDir, strings.ReplaceAll(s.Name, "/", "_"))
}

// Claim is what the document says of a design, and whether the run confirmed it.
type Claim struct {
	Text      string `json:"text"`
	Figure    string `json:"figure"`
	Confirmed bool   `json:"confirmed"`
	// Inconclusive is set when the generator fell behind its schedule: the traffic the
	// limiter saw was not the document's, so the figure neither confirms nor refutes.
	Inconclusive bool `json:"inconclusive,omitempty"`
	// NotMeasured is set when the run lacks the evidence the claim rests on (Why says
	// which): it neither confirms nor refutes.
	NotMeasured bool `json:"not_measured,omitempty"`
	// Why says why a claim was not confirmed or not measured, as "sync failing (3 of 40
	// exchanges failed)"; empty when the figure says it all.
	Why string `json:"why,omitempty"`
}

// Verdict is the claim's outcome in words.
func (c Claim) Verdict() string {
	switch {
	case c.Inconclusive && !c.Confirmed && c.Why != "":
		return "inconclusive (generator-bound; " + c.Why + ")"
	case c.Inconclusive:
		return "inconclusive (generator-bound)"
	case c.NotMeasured:
		return "not measured: " + c.Why
	case c.Confirmed:
		return "confirmed"
	case c.Why != "":
		return "not confirmed: " + c.Why
	}
	return "not confirmed"
}

// Conditions describe the fleet a scenario ran on (harness/fleet returns them). They live
// here so that a reader of the summary need not import the fleet, and with it Docker.
type Conditions struct {
	Provider string `json:"provider"` // "docker" | "local"
	Network  string `json:"network"`  // "bridge" | "host" | "loopback" (local)
	RunID    string `json:"run_id"`
	Replicas int    `json:"replicas"`
	// NodeCount is the fleet size the replicas were told where it is not Replicas: one
	// replica run as one node of a larger fleet (harness bench --slice); 0 otherwise.
	NodeCount int    `json:"node_count,omitempty"`
	Target    string `json:"target"`
	Mode      string `json:"mode,omitempty"` // empty for the noop target
	// Design is delayed mode's design (bounded, document); empty in other modes and for
	// runs written before the bounded design was the default (those ran the document's).
	Design       string        `json:"design,omitempty"`
	SyncInterval time.Duration `json:"sync_interval"`
	StoreTimeout time.Duration `json:"store_timeout"`
	// StoreWait is the replicas' --store-wait where the run set it (the bounded design's
	// decisions wait that long for the store); 0: the replica's default.
	StoreWait    time.Duration `json:"store_wait,omitempty"`
	RedisImage   string        `json:"redis_image,omitempty"`   // docker
	TargetImage  string        `json:"target_image,omitempty"`  // docker
	RedisBinary  string        `json:"redis_binary,omitempty"`  // local
	TargetBinary string        `json:"target_binary,omitempty"` // local
	StartupTime  time.Duration `json:"startup_time"`            // from Start to every member healthy
	// Store is "cluster" for a Redis Cluster store (StoreNodes its nodes, masters first);
	// empty for one Redis.
	Store      string   `json:"store,omitempty"`
	StoreNodes []string `json:"store_nodes,omitempty"`
	// StoreProxy is where the store proxy listened (store-slow): the replicas reached Redis
	// through it; empty without one.
	StoreProxy string `json:"store_proxy,omitempty"`
	// Zones are the replicas' zones and their links to the store (--zones), in node order;
	// ZoneLinks where each zone's link listened. Empty without a topology.
	Zones     []topology.Zone `json:"zones,omitempty"`
	ZoneLinks []string        `json:"zone_links,omitempty"`
	// PeerLinks is how many links between one zone's replicas and another's a system
	// without a store was given (each replica to each peer of another zone); 0 with a store.
	PeerLinks int `json:"peer_links,omitempty"`
	// StoreCPU is the share of one core the Redis was given (a slow store); 0: no limit.
	StoreCPU float64 `json:"store_cpu_share,omitempty"`
}

// ZonePeers fills each zone's PeerZone and PeerLink from the run's topology where the system's
// zones reached each other's nodes through links (c.PeerLinks > 0); zones is left as it is
// otherwise.
func (c Conditions) ZonePeers(zones []ZoneFigures) {
	if c.PeerLinks == 0 {
		return
	}
	top := topology.Topology{Zones: c.Zones}
	for i := range zones {
		if k := top.Index(zones[i].Zone); k >= 0 {
			zones[i].PeerZone, zones[i].PeerLink = c.peerLinkOf(top, k)
		}
	}
}

// peerLinkOf is zone k of top's nearest other zone and the link to its nodes, one way
// (topology.Between, as the fleet builds it), where the system's zones reached each other's
// nodes through links (c.PeerLinks > 0); "" where they did not, or k is the only zone.
func (c Conditions) peerLinkOf(top topology.Topology, k int) (string, LinkFigures) {
	n := top.NearestTo(k)
	if c.PeerLinks == 0 || n < 0 {
		return "", LinkFigures{}
	}
	l, j := top.Between(k, n)
	return top.Zones[n].Name, LinkFigures{Latency: l, Jitter: j}
}

// Summary is summary.json: the run's conditions, every scenario and every check.
type Summary struct {
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at"`
	Commit     string           `json:"commit,omitempty"`
	Cores      int              `json:"cores"`
	Config     ConfigSummary    `json:"config"`
	Scenarios  []ScenarioResult `json:"scenarios"`
	Checks     []GateCheck      `json:"checks"`
	// Outcome is the run's verdict (Settle): its gated scenarios' combined, and interrupted
	// or incomplete where the run was cut short. Every command's word and exit code is its.
	Outcome outcome.Outcome `json:"outcome"`
	// Pass and GeneratorBound say the same as Outcome (pass; generator-bound), for readers
	// of summary.json written before it.
	Pass           bool     `json:"pass"`
	GeneratorBound bool     `json:"generator_bound"`
	Failed         []string `json:"failed,omitempty"`
	// NotMade are the gated scenarios that could not be made (their fleet did not start, their
	// target could not run on the provider, ...), each with why; they are in Failed too.
	NotMade []string `json:"not_made,omitempty"`
	// Interrupted says the run was stopped (SIGINT, SIGTERM) before every scenario ran: the
	// scenarios hold what was measured until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Incomplete says the run was killed (SIGKILL, a crash) before it finished: harness
	// judge judged afterwards what it had written, and IncompleteWhy says what that was.
	Incomplete    bool   `json:"incomplete,omitempty"`
	IncompleteWhy string `json:"incomplete_why,omitempty"`
	// Model is the document's model as the run was judged beside it; nil in a run written
	// before runs saved it.
	Model *RateLimitModel `json:"model,omitempty"`
}

// ConfigSummary is the part of the load test's config a reader of the summary needs.
type ConfigSummary struct {
	Provider string `json:"provider"`
	Network  string `json:"network"`
	// NetworkNote says why the networking is not what --network asked, where it is not (the
	// local provider's loopback); empty otherwise.
	NetworkNote   string        `json:"network_note,omitempty"`
	Replicas      int           `json:"replicas"`
	Algorithm     string        `json:"algorithm"`
	Mode          string        `json:"mode"`
	Design        string        `json:"design,omitempty"` // delayed mode's design under test
	SyncInterval  time.Duration `json:"sync_interval_ns"`
	StoreTimeout  time.Duration `json:"store_timeout_ns"`
	TimeScale     float64       `json:"time_scale"`
	Window        time.Duration `json:"window_ns"`
	Limit         int           `json:"limit"`
	Rate          float64       `json:"rate_asked"`
	Clients       int           `json:"clients"`
	Seed          uint64        `json:"seed"`
	Outage        time.Duration `json:"outage_ns"`
	RecoveryGrace time.Duration `json:"recovery_grace_ns"`
	Store         string        `json:"store,omitempty"` // "cluster" for a Redis Cluster; empty for one Redis
	// Zones are the replicas' zones and their links to the store, in node order; empty
	// without a topology.
	Zones []topology.Zone `json:"zones,omitempty"`
	// Schedule names the schedule file the run replayed (--schedule), in place of the
	// documents' traffic.
	Schedule string `json:"schedule,omitempty"`
}

// GateCheck is a check with the scenario it belongs to.
type GateCheck struct {
	Scenario string `json:"scenario"`
	Gated    bool   `json:"gated"`
	Check
}

// ScenarioResult is one scenario measured and judged.
type ScenarioResult struct {
	Scenario
	Conditions Conditions `json:"conditions"`
	Checks     []Check    `json:"checks"`
	// Outcome is the scenario's verdict (ScenarioOutcome): not made, or its checks' (Pass
	// every check passed, GeneratorBound the generator's own failed), incomplete where the
	// run was killed during it.
	Outcome        outcome.Outcome `json:"outcome"`
	Pass           bool            `json:"pass"`
	GeneratorBound bool            `json:"generator_bound"`
	Claims         []Claim         `json:"claims,omitempty"`
	Requests       int             `json:"requests"`
	Accepted       int             `json:"accepted"`
	Rejected       int             `json:"rejected"`
	Errors         Errors          `json:"errors"`
	AskedRate      float64         `json:"asked_rate"`
	AchievedRate   float64         `json:"achieved_rate"`
	Lateness       Percentiles     `json:"lateness"`
	Latency        Percentiles     `json:"latency"`
	ReplicaLatency []Percentiles   `json:"replica_latency"`
	// Zones are the figures per zone on a topology (--zones); nil without one.
	Zones        []ZoneFigures `json:"zones,omitempty"`
	FaultLatency *Percentiles  `json:"fault_latency,omitempty"`
	// Faults are the windows the scenario was judged with: from the fault's beginning to the
	// member's return plus the recovery grace, on the outcomes' clock.
	Faults []Interval `json:"faults,omitempty"`
	// FaultTiming is the fault as planned and as it happened; nil without a fault.
	FaultTiming *FaultTiming `json:"fault_timing,omitempty"`
	// RoutingErrors are requests the harness sent to a replica it had killed (refused or
	// cut off): its routing's errors, not the limiter's, and in no other count (replica-kill).
	RoutingErrors int `json:"routing_errors,omitempty"`
	// MaxOvershoot and FalseRejects are on the clock that gated the scenario (Clocks.Gate).
	MaxOvershoot float64 `json:"max_overshoot"`
	FalseRejects int     `json:"false_rejects"`
	// Clocks are both promises on both clocks, the client's send times and arrival bounds;
	// nil in a run written before they were counted.
	Clocks         *Clocks `json:"clocks,omitempty"`
	OverLimit      int     `json:"over_limit_clients"`
	StoreCommands  int64   `json:"store_commands"`
	StoreCmdPerSec float64 `json:"store_commands_per_s"`
	// NoStore says the system keeps its counters among its own nodes (a target file without
	// a store): there was no store to read, so the store figures are not measurements.
	NoStore bool `json:"no_store,omitempty"`
	// StoreOps counts the commands run inside scripts too: the store's work, not its touches.
	StoreOps       int64   `json:"store_ops"`
	StoreOpsPerSec float64 `json:"store_ops_per_s"`
	// StoreCPU is the store's CPU over the traffic (INFO cpu); nil when not measured, and
	// StoreCPUWhy says why.
	StoreCPU    *StoreCPU `json:"store_cpu,omitempty"`
	StoreCPUWhy string    `json:"store_cpu_why,omitempty"`
	// Sync is what the replicas' metrics said of their sync; nil in a run written before
	// the harness scraped them.
	Sync     *SyncHealth   `json:"sync,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Probes   []ProbeResult `json:"probes"`
	// PeakRatios is the distribution of every non-probe client's busiest window of
	// acceptances over its limit: PeakRatios[i] clients had a peak/limit in
	// [i, i+1) × PeakRatioBin; the last bin holds everything above.
	PeakRatios []int `json:"peak_ratios,omitempty"`
	// Shards is how many generator processes sent the scenario (0 or 1: one); ClockSkew is
	// their clocks' spread, set when there was more than one.
	Shards    int        `json:"shards,omitempty"`
	ClockSkew *ClockSkew `json:"clock_skew,omitempty"`
	Error     string     `json:"error,omitempty"`
	// Cluster is what a Redis Cluster store's slot map did during a master fault.
	Cluster *ClusterFault `json:"cluster,omitempty"`
	// Incomplete says the run was killed during this scenario and harness judge judged it
	// afterwards from the outcomes it had written, and on what part of its schedule.
	Incomplete string `json:"incomplete,omitempty"`
	// Budget is what the schedule asks of the bounded design's store: the requests that
	// arrive at a node past its unsynced budget of their client (set for the bounded design
	// on the document's rule).
	Budget *BudgetLoad `json:"budget,omitempty"`
}

// BudgetLoad is the part of a schedule the bounded design decides with the store: a node
// decides a client alone while it has admitted fewer than Budget of the client's requests
// in the last window, and asks the store past it.
type BudgetLoad struct {
	Budget int64 `json:"budget"` // per node and client (the document's rule: 3)
	// PastBudget counts the requests that arrive at a node holding Budget of its client's
	// requests, decided alone, in the window before: each costs at most one store call.
	PastBudget int64 `json:"past_budget_requests"`
	// HotClients is how many clients pass a budget anywhere, HotRequests all their requests.
	HotClients  int   `json:"hot_clients"`
	HotRequests int64 `json:"hot_client_requests"`
	Requests    int64 `json:"requests"`
	// Duration is the schedule's length, over which the rates are taken.
	Duration time.Duration `json:"duration_ns"`
}

// ProbeResult is one probe client: the document's patterns, measured.
type ProbeResult struct {
	ClientReport
	// AfterRecovery is the busiest window-long interval of acceptances after the store
	// returned (fail-open scenarios), on the clock that gated the scenario.
	AfterRecovery int `json:"after_recovery,omitempty"`
	// Accepted times (sent), for the report's charts.
	AcceptedAt []time.Duration `json:"accepted_at_ns"`
	// AnsweredAt are when those acceptances were answered, in AcceptedAt's order: with them
	// the fault gates count a probe's acceptances on arrival bounds. Empty in a result
	// written before they were kept.
	AnsweredAt []time.Duration `json:"answered_at_ns,omitempty"`
}

// PeakRatioBin is the width of a PeakRatios bin; PeakRatioBins bins cover 0 to 1.5.
const (
	PeakRatioBin  = 0.05
	PeakRatioBins = 31
)

// RoundTripsPerRequest is the store commands the replicas sent per request; 0 without requests.
func (r ScenarioResult) RoundTripsPerRequest() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.StoreCommands) / float64(r.Requests)
}

// ScriptCmdPerRequest is the commands the store ran inside scripts per request: its work
// beyond the round trips; 0 without requests.
func (r ScenarioResult) ScriptCmdPerRequest() float64 {
	if r.Requests == 0 || r.StoreOps < r.StoreCommands {
		return 0
	}
	return float64(r.StoreOps-r.StoreCommands) / float64(r.Requests)
}
