package result

import (
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// StartedFile is what a load test writes in a scenario's directory when its traffic starts:
// enough to judge the scenario's outcomes again without the run, when the run was killed
// before it wrote summary.json.
const StartedFile = "scenario.json"

// Started is StartedFile: the scenario, how its schedule is built, its origin and its fault
// windows, and the run's conditions.
type Started struct {
	// Run is when the run began (summary.json's started_at): the scenarios of one run share it.
	Run      time.Time     `json:"run"`
	Scenario Scenario      `json:"scenario"`
	Schedule schedule.Spec `json:"schedule"`
	// ScheduleFile, when set, names the schedule file in the scenario's directory that the
	// scenario replayed (harness loadtest --schedule): the traffic, in place of Schedule's.
	ScheduleFile string `json:"schedule_file,omitempty"`
	// Classes are a target file's client classes (the probes of each, the background in the
	// first); empty for the documents' rule (schedule.DefaultClasses).
	Classes []schedule.Class `json:"classes,omitempty"`
	// Start is the traffic's origin: the outcomes' offsets count from it.
	Start  time.Time  `json:"start"`
	Faults []Interval `json:"faults,omitempty"`
	Outage Interval   `json:"outage"`
	// Lateness and MinRateRatio are the generator's gates the run was judged by.
	Lateness     time.Duration `json:"lateness_tolerance_ns"`
	MinRateRatio float64       `json:"min_rate_ratio"`
	// GateClock is the clock the promises were gated on as asked (ClockAuto, ClockDecision,
	// ClockBackend, ClockArrival, ClockClient; the scenario's Clocks.Gate is the one it took); empty
	// in a run written before it was recorded, which was gated on arrival bounds for false
	// rejects and the client's clock for overshoot.
	GateClock string `json:"gate_clock,omitempty"`
	// ExactClock is the exact clock the system under test gave (ClockDecision, ClockBackend);
	// empty for none, and in a run written before it was recorded. With ClockBackend the
	// scenario's backend.csv holds what reached the recording backend.
	ExactClock string `json:"exact_clock,omitempty"`
	// KilledNode is who answers for a refused connection to a killed node (a target file's
	// faults.killed_node); empty: the harness.
	KilledNode string `json:"killed_node,omitempty"`
	// Shards is how many generator processes sent it (their outcomes are in shard-*/).
	Shards int `json:"shards,omitempty"`
	// SyncInterval and OutageAsked are the run's --sync-interval and --outage as asked,
	// before the time scale: the judge of a killed run rebuilds its config from them. Config
	// holds them as they ran (scaled).
	SyncInterval time.Duration `json:"sync_interval_asked_ns,omitempty"`
	OutageAsked  time.Duration `json:"outage_asked_ns,omitempty"`
	Config       ConfigSummary `json:"config"`
	Conditions   Conditions    `json:"conditions"`
	Commit       string        `json:"commit,omitempty"`
	Cores        int           `json:"cores"`
}
