package result

import (
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// BenchFile is the name of harness bench's figures in a run directory.
const BenchFile = "bench.json"

// Statuses of a bench figure against its target.
const (
	StatusMet         = "met"
	StatusNotMet      = "not met"
	StatusNoTarget    = "no target"
	StatusNotMeasured = "not measured"
	// StatusGeneratorBound marks a ceiling within 10 % of the generator's own: it measured
	// the generator, so it is neither met nor not met.
	StatusGeneratorBound = "GENERATOR-BOUND"
)

// GeneratorBoundMargin: a fleet ceiling within 10 % of the generator's own ceiling measures
// the generator, not the fleet.
const GeneratorBoundMargin = 0.10

// GeneratorBound reports whether a fleet's ceiling is within GeneratorBoundMargin of the
// generator's: the search then stopped where the generator did, and the fleet's own ceiling
// is only known to be at least that. A generator ceiling of 0 (not measured) bounds nothing.
func GeneratorBound(fleet, generator float64) bool {
	return generator > 0 && fleet >= (1-GeneratorBoundMargin)*generator
}

// Bench is bench.json: how fast and cheap the limiter is, as ratios measured side by side
// in one run (absolute figures on a shared machine drift), with every figure's conditions.
type Bench struct {
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Commit     string    `json:"commit,omitempty"`
	Cores      int       `json:"cores"`
	GoMaxProcs int       `json:"gomaxprocs"`
	// MaxLateness is the generator's p99 lateness a step was allowed and still sustained
	// (harness bench --max-lateness; 0 in files written before it was recorded: 10 ms).
	MaxLateness time.Duration `json:"max_lateness_ns,omitempty"`
	// Figures is the table: one row per figure, in the order of their numbers (Item).
	Figures   []BenchFigure  `json:"figures"`
	Decisions []DecisionCost `json:"decisions,omitempty"`
	Fleets    []FleetBench   `json:"fleets,omitempty"`
	Memory    []MemoryLayout `json:"memory,omitempty"`
	// Cluster is the Redis Cluster part (figure 7); nil when not run.
	Cluster *ClusterBench `json:"cluster,omitempty"`
	// Profiles are the generators' CPU and allocation profiles, one fixed-rate step each.
	Profiles []Profile `json:"generator_profiles,omitempty"`
	// Baseline holds an earlier run's generator profiles (harness bench --baseline), shown
	// beside this run's as before and after.
	Baseline *ProfileBaseline `json:"profile_baseline,omitempty"`
	// Slice is harness bench --slice: one replica's share of HS2, system by system; nil in
	// a run of the other figures.
	Slice *SliceBench `json:"slice,omitempty"`
	// Errors are the measurements that could not be made, and why.
	Errors []string `json:"errors,omitempty"`
}

// SliceBench is one replica's share of the documents' load (HS2 over HS4 nodes), each system
// on a fleet of its own, sent the same traffic with its Redis held to the same share of a
// core (harness bench --slice).
type SliceBench struct {
	// Traffic is the recipe of a steady run's traffic at the rate asked.
	Traffic schedule.Slice `json:"traffic"`
	// Rate is what every steady run was sent: the rate asked, or where the no-op replica's
	// run at it fell behind its schedule the most this machine sent (RateWhy says so).
	Rate    float64 `json:"rate"`
	RateWhy string  `json:"rate_why,omitempty"`
	// StoreCPU is the share of one core each system's Redis was held to; 0: not held.
	StoreCPU float64 `json:"store_cpu_share"`
	// Systems are the systems in the order they were measured, the no-op replica first.
	Systems []FleetBench `json:"systems"`
}

// ProcessCost is what one process spent over a steady run's traffic, read from /proc.
type ProcessCost struct {
	PID         int     `json:"pid"`
	CPUSeconds  float64 `json:"cpu_s"`
	WallSeconds float64 `json:"wall_s"`
	// Cores is CPUSeconds over WallSeconds: the share of one core it kept busy.
	Cores float64 `json:"cores"`
	// CPUPerRequestUs is CPUSeconds over the requests of the run, in microseconds.
	CPUPerRequestUs float64 `json:"cpu_us_per_request"`
	// RSSBefore and RSSAfter are its resident memory at the traffic's start and end, and
	// RSSPerClient their difference over the distinct clients the run sent.
	RSSBefore    int64   `json:"rss_before_bytes"`
	RSSAfter     int64   `json:"rss_after_bytes"`
	RSSPerClient float64 `json:"rss_bytes_per_client"`
}

// StoreMemory is what a store held more after a steady run than before it (INFO memory
// used_memory), over the distinct clients the run sent.
type StoreMemory struct {
	UsedBefore int64   `json:"used_memory_before"`
	UsedAfter  int64   `json:"used_memory_after"`
	PerClient  float64 `json:"bytes_per_client"`
	Keys       int64   `json:"keys_after"`
}

// BenchFigure is one row of the table.
type BenchFigure struct {
	Item       int     `json:"item"` // the figure's number in harness bench's table (1..6 as its help lists them, 7 and 8 the cluster and the slice)
	Name       string  `json:"name"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit"`
	Display    string  `json:"display"` // the value as printed
	Target     string  `json:"target,omitempty"`
	Status     string  `json:"status"` // StatusMet, StatusNotMet, StatusNoTarget, StatusNotMeasured
	Conditions string  `json:"conditions"`
	Note       string  `json:"note,omitempty"`
	// Why says, for a figure not measured, what was missing: "generator-bound" when the runs
	// it rests on fell behind their schedule.
	Why string `json:"why,omitempty"`
}

// StatusText is the figure's status as printed: "not measured: generator-bound" when the
// figure says why it was not measured.
func (f BenchFigure) StatusText() string {
	if f.Status == StatusNotMeasured && f.Why != "" {
		return f.Status + ": " + f.Why
	}
	return f.Status
}

// DecisionCost is one in-process decision benchmark (testing.B, allocations reported).
type DecisionCost struct {
	Name        string  `json:"name"` // "sliding_window/delayed", "x-time-rate/Allow"
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	N           int     `json:"n"`
	// VsRate is NsPerOp over x/time/rate's Allow measured in the same run.
	VsRate float64 `json:"vs_x_time_rate"`
}

// FleetBench is what one fleet measured in one networking mode: its ceiling search and its
// steady run at the rate shared by every fleet of the run.
type FleetBench struct {
	Name       string     `json:"name"` // "noop", "delayed", "central", "peer-gcra"
	Network    string     `json:"network"`
	Conditions Conditions `json:"conditions"`
	// Ceiling is the highest rate sustained; 0 when not searched. Capped says the search
	// stopped at its maximum rate: the ceiling is at least that.
	Ceiling float64 `json:"ceiling_rps"`
	Capped  bool    `json:"ceiling_capped,omitempty"`
	Steps   []Step  `json:"steps,omitempty"`
	Steady  *Step   `json:"steady,omitempty"`
	// Rounds are the fleet's runs for the latency the limiter adds (figure 6): at each rate,
	// a few runs taken in turn with the other fleet's, so that both see the machine alike;
	// one fleet's own spread over them is the noise floor.
	Rounds []Step `json:"latency_rounds,omitempty"`
	// StoreCommands counts the top-level commands the replicas sent the store in the steady
	// run (INFO commandstats without the commands the scripts run inside Redis); StoreOps
	// counts them all.
	StoreCommands      int64   `json:"store_commands"`
	StoreCmdPerSec     float64 `json:"store_commands_per_s"`
	StoreCmdPerRequest float64 `json:"store_commands_per_request"`
	StoreOps           int64   `json:"store_ops"`
	// StoreScriptCmdPerRequest is the commands run inside scripts per request answered in
	// the steady run: the store's work beyond its round trips.
	StoreScriptCmdPerRequest float64 `json:"store_script_commands_per_request"`
	// StoreCPU is the store's CPU over the steady run (INFO cpu); nil when not measured,
	// and StoreCPUWhy says why.
	StoreCPU    *StoreCPU `json:"store_cpu,omitempty"`
	StoreCPUWhy string    `json:"store_cpu_why,omitempty"`
	// What a slice's steady run cost (harness bench --slice): Nodes says what being one node
	// of a larger fleet means to the system; Replica is its replica's process, Generator
	// this process (the harness's sender), StoreMemory its Redis; nil when not measured,
	// with why.
	Nodes          string       `json:"one_of_n,omitempty"`
	Replica        *ProcessCost `json:"replica_cost,omitempty"`
	ReplicaWhy     string       `json:"replica_cost_why,omitempty"`
	Generator      *ProcessCost `json:"generator_cost,omitempty"`
	GeneratorWhy   string       `json:"generator_cost_why,omitempty"`
	StoreMemory    *StoreMemory `json:"store_memory,omitempty"`
	StoreMemoryWhy string       `json:"store_memory_why,omitempty"`
	Error          string       `json:"error,omitempty"`
}

// Step is one fixed-rate run of a fleet: the rate asked, what was achieved and whether the
// generator kept up without errors.
type Step struct {
	Rate     float64       `json:"rate_asked"`
	Achieved float64       `json:"rate_achieved"`
	Duration time.Duration `json:"duration_ns"`
	Requests int           `json:"requests"`
	Answered int           `json:"answered"`
	Rejected int           `json:"rejected"`
	Errors   int           `json:"errors"`
	// Degraded is how many of its answers the replicas gave without their store (failed
	// open), where they say (harness bench --slice): such a step is not sustained.
	Degraded int64 `json:"degraded_decisions,omitempty"`
	// Clients is how many distinct clients the run sent requests for.
	Clients int `json:"clients,omitempty"`
	// Seed is the seed the step's traffic was drawn with (a slice's: schedule.Slice.Seed),
	// so that its schedule can be built again: a plan counts how many of its requests passed
	// a node's budget.
	Seed      uint64      `json:"seed,omitempty"`
	Latency   Percentiles `json:"latency"`
	Lateness  Percentiles `json:"lateness"`
	Sustained bool        `json:"sustained"`
	Why       string      `json:"why,omitempty"` // why not sustained
	// GeneratorBound says the step fell behind its schedule (achieved rate, p99 lateness,
	// pacing): it measured the generator, not the fleet.
	GeneratorBound bool `json:"generator_bound,omitempty"`
}

// Profile is one generator's CPU and allocation profile over one fixed-rate step against
// the no-op fleet: its own cost per request and the functions it is spent in.
type Profile struct {
	Name                 string        `json:"name"` // "harness sender", "plain vegeta"
	Rate                 float64       `json:"rate_asked"`
	Requests             int           `json:"requests"`
	WallSeconds          float64       `json:"wall_s"`
	CPUSeconds           float64       `json:"cpu_s"`
	CPUPerRequestUs      float64       `json:"cpu_us_per_request"`
	AllocsPerRequest     float64       `json:"allocs_per_request"`
	AllocBytesPerRequest float64       `json:"alloc_bytes_per_request"`
	GCShare              float64       `json:"gc_share"`  // of CPU: collector workers and assists
	CPU                  []ProfileFunc `json:"cpu_top"`   // by flat CPU share
	Alloc                []ProfileFunc `json:"alloc_top"` // by flat share of bytes allocated
}

// ProfileBaseline is an earlier run's generator profiles, with where they came from.
type ProfileBaseline struct {
	From      string    `json:"from"` // the bench.json they were read from
	Commit    string    `json:"commit,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Profiles  []Profile `json:"profiles"`
}

// ProfileFunc is one function's share of a profile's total: flat, its own; cum, with what
// it calls.
type ProfileFunc struct {
	Function string  `json:"function"`
	Flat     float64 `json:"flat"`
	Cum      float64 `json:"cum"`
}

// MemoryLayout is the store's memory for one counter layout loaded with every client.
type MemoryLayout struct {
	Name    string `json:"name"`   // "sliding_window (ours: one hash per client)"
	Layout  string `json:"layout"` // how the keys look
	Clients int    `json:"clients"`
	// Records is how many counters a client holds (slices, fields).
	Records int `json:"records_per_client"`
	// UsedDelta is INFO memory used_memory after the load minus before it.
	UsedDelta int64 `json:"used_memory_delta"`
	// PerClient is UsedDelta / Clients.
	PerClient float64 `json:"bytes_per_client"`
	// Keys is how many keys the store holds after the load (DBSIZE).
	Keys int64 `json:"keys"`
	// SampleUsage is the mean MEMORY USAGE of a client's keys over Samples clients.
	SampleUsage float64 `json:"memory_usage_per_client"`
	Samples     int     `json:"samples"`
	// Estimate is the document's bytes per client (48 a record) and EstimateTotal its total.
	Estimate      float64 `json:"document_bytes_per_client"`
	EstimateTotal float64 `json:"document_total_bytes"`
	LoadTime      float64 `json:"load_s"`
}
