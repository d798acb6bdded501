package result

import (
	"fmt"
	"time"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// HuntFile is the name of harness hunt's result in its run directory.
const HuntFile = "hunt.json"

// Hunt is what harness hunt found: for every system it hunted, per family of aimed traffic,
// the worst case and the schedule file that replays it.
type Hunt struct {
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Commit     string       `json:"commit,omitempty"`
	Cores      int          `json:"cores"`
	Config     HuntConfig   `json:"config"`
	Systems    []HuntSystem `json:"systems"`
	// Outcome is the hunt's verdict (harness/hunt's Verdict): its families' and systems'
	// combined. Pass, GeneratorBound and NotMade say the rest in the older fields' terms.
	Outcome outcome.Outcome `json:"outcome"`
	// Pass: no family broke 1.1× (or a fault's bounds) and no client was rejected within
	// its limit, on traffic the generator sent faithfully.
	Pass bool `json:"pass"`
	// GeneratorBound: no family broke a promise, and some family's every variant was sent
	// late or slow, so the hunt has no evidence for it either way.
	GeneratorBound bool     `json:"generator_bound"`
	Failed         []string `json:"failed,omitempty"`
	// NotMade are the systems that could not be hunted (their fleet did not start, their
	// target could not run on the provider, ...), each with why; they are in Failed too.
	NotMade     []string `json:"not_made,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// HuntConfig is what the hunt was asked for.
type HuntConfig struct {
	Provider string        `json:"provider"`
	Network  string        `json:"network"`
	Budget   time.Duration `json:"budget_ns"`       // wall time per system
	Requests int           `json:"budget_requests"` // requests per system
	MaxRate  float64       `json:"max_rate"`        // the generator's burst rate asked, req/s
	Seed     uint64        `json:"seed"`
	Families []string      `json:"families"`          // the families hunted
	Coarse   int           `json:"coarse_per_family"` // most points of a family's coarse sweep
	Levels   int           `json:"refine_levels"`
	// Pressure is the highest level of the pressure ladder (0: no pressure search),
	// PressureShare the factor by which each level multiplies an attack's bursts, and
	// PressureRequests the size of a pressure round: half of it one pass of a variant's herd,
	// twice it all the variant's passes, four times it the whole round.
	Pressure         int     `json:"pressure"`
	PressureShare    float64 `json:"pressure_share,omitempty"`
	PressureRequests int     `json:"pressure_requests,omitempty"`
}

// HuntSystem is one system under test and what the hunt found on it.
type HuntSystem struct {
	System       string        `json:"system"`                // "replica" or a target file's name
	TargetFile   string        `json:"target_file,omitempty"` // the target file, as given
	Design       string        `json:"design,omitempty"`
	TimeScale    float64       `json:"time_scale"`
	Window       time.Duration `json:"window_ns"`
	Limit        int           `json:"limit"`
	Replicas     int           `json:"replicas"`
	SyncInterval time.Duration `json:"sync_interval_ns,omitempty"`
	Conditions   Conditions    `json:"conditions"`
	Learned      HuntLearned   `json:"learned"`
	// Ceiling is the generator's peak rate (requests per second, in 10 ms) on a burst sent
	// at once before the first pressure round: the most pressure this machine makes; 0 when
	// not measured.
	Ceiling  float64       `json:"ceiling,omitempty"`
	Rounds   []HuntRound   `json:"rounds"`
	Families []HuntFamily  `json:"families"`
	Requests int           `json:"requests"` // sent, over every round
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Stopped says why the search ended: "searched" when every family was refined, or
	// which budget ran out.
	Stopped string `json:"stopped"`
	Error   string `json:"error,omitempty"`
}

// HuntLearned is what the learning step found from the responses to its probes.
type HuntLearned struct {
	// EdgePhase is where window edges fall, as an offset into the window since the epoch;
	// Edge says how it was found.
	EdgePhase time.Duration `json:"edge_phase_ns"`
	Edge      string        `json:"edge"`
	// TickPhases[i] is replica i's sync tick, as an offset into the sync interval since the
	// epoch; nil when no tick showed. Ticks says how they were found or why not.
	TickPhases []time.Duration `json:"tick_phases_ns,omitempty"`
	Ticks      string          `json:"ticks"`
}

// HuntRound is one run of many variants at once.
type HuntRound struct {
	Round    int           `json:"round"`
	Kind     string        `json:"kind"` // learn | search | fault
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_ns"`
	Variants int           `json:"variants"`
	Requests int           `json:"requests"`
	Bound    int           `json:"generator_bound"` // variants sent late or slow
	Fault    *HuntFault    `json:"fault,omitempty"`
	Outcomes string        `json:"outcomes,omitempty"` // the round's outcomes.csv, relative to the run directory
	Schedule string        `json:"schedule,omitempty"` // the round's whole schedule file
	// Pace is the most requests per second the round asked for where its variants
	// overlap: the burst rate, lowered after a round whose variants fell behind.
	Pace     float64     `json:"pace"`
	Lateness Percentiles `json:"lateness"`
	// Store is what the fleet's replicas said of their store over the round; nil when the
	// system exposes no such metrics (a target file's limiter) or they could not be read.
	Store *HuntStore `json:"store,omitempty"`
	Error string     `json:"error,omitempty"`
}

// HuntStore is the fleet's store calls that timed out and decisions made without the store
// over one round (every replica's metrics, read before and after it).
type HuntStore struct {
	Timeouts float64 `json:"store_timeouts"`
	Degraded float64 `json:"degraded_decisions"`
}

// HuntFault is a round's store fault: as planned (From, To) and as made (Timing).
type HuntFault struct {
	Kind   string        `json:"kind"`
	From   time.Duration `json:"from_ns"`
	To     time.Duration `json:"to_ns"`
	Timing *FaultTiming  `json:"timing,omitempty"`
}

// HuntFamily is one family's search: every variant tried and the worst.
type HuntFamily struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // attack | at-limit | fault
	Doc  string `json:"doc"`
	// NotRun says why the family did not run ("" when it did).
	NotRun string `json:"not_run,omitempty"`
	// Note qualifies the figures (e.g. a phase that was not learned).
	Note string `json:"note,omitempty"`
	// Worst is the variant that did the most harm, preferring variants the generator sent
	// faithfully; nil when none was measured.
	Worst *HuntVariant `json:"worst,omitempty"`
	// Outcome is the family's verdict: the worst variant's (a variant that broke a promise
	// on schedule is the worst), fail when a pressure level broke a promise; "" when the
	// family did not run or no variant was sent.
	Outcome outcome.Outcome `json:"outcome,omitempty"`
	// Breaks: the worst variant broke a promise on traffic sent faithfully.
	Breaks bool `json:"breaks"`
	// GeneratorBound: every variant of the family was sent late or slow.
	GeneratorBound bool `json:"generator_bound"`
	// Schedule is the worst variant's schedule file, relative to the run directory.
	Schedule string        `json:"schedule,omitempty"`
	Tried    []HuntVariant `json:"tried"`
	// Pressure is the highest level of the pressure ladder the family reached (0: not
	// searched under pressure); PressureVerdict says how the ladder ended: the level at which
	// the bound broke, or that it held up to a level, up to the generator's ceiling, or up
	// to where the store's calls timed out. BrokeUnderPressure: a level broke a promise.
	Pressure           int                 `json:"pressure"`
	PressureVerdict    string              `json:"pressure_verdict,omitempty"`
	BrokeUnderPressure bool                `json:"broke_under_pressure"`
	PressureSchedule   string              `json:"pressure_schedule,omitempty"`
	PressureRounds     []HuntPressureRound `json:"pressure_rounds,omitempty"`
}

// HuntPressureRound is one level of a family's pressure ladder as sent and judged.
type HuntPressureRound struct {
	Level int `json:"level"`
	// Herd is how many fresh clients sent the variant's traffic at once, Conns the requests
	// a burst asked of each replica per millisecond, Share the factor on every burst; each
	// as applied, after the caps.
	Herd  int     `json:"herd"`
	Conns int     `json:"conns_per_replica"`
	Share float64 `json:"share"`
	// Repeat is how many times an attack's traffic was sent, one after the other.
	Repeat int `json:"repeat"`
	// AskedPeak and AchievedPeak are the busiest 10 ms of the variant's sends, as scheduled
	// and as sent, in requests per second.
	AskedPeak    float64 `json:"asked_peak_rps"`
	AchievedPeak float64 `json:"achieved_peak_rps"`
	// StoreTimeouts and Degraded are the fleet's store calls that timed out and decisions
	// made without the store over the round (every replica's metrics, read before and after);
	// StoreRead false when the system's metrics could not be read.
	StoreTimeouts float64     `json:"store_timeouts"`
	Degraded      float64     `json:"degraded_decisions"`
	StoreRead     bool        `json:"store_read"`
	Broke         bool        `json:"broke"`
	Variant       HuntVariant `json:"variant"`
}

// Verdict is the family's outcome in words: the worst variant's figures, and where it broke
// a promise the figures do not show (5xx, errors, a client locked out), which.
func (f HuntFamily) Verdict() string {
	w := f.Worst
	switch {
	case f.NotRun != "":
		return "not run: " + f.NotRun
	case w == nil:
		return "not measured: no variant was sent"
	case f.GeneratorBound:
		return "not measured: every variant was generator-bound"
	case f.Breaks && f.Kind == "at-limit":
		return fmt.Sprintf("BREAKS: %d false rejects of a client within its limit", w.FalseRejects) + w.otherFailures() + w.storeNote()
	case f.Breaks && f.Kind == "fault":
		return fmt.Sprintf("BREAKS: x%.3f while the store was away (bound x%d), x%.3f after it returned (bound x1.1), %d errors while it was away, %d false rejects",
			w.Overshoot, f.replicas(), w.AfterRecovery, w.ErrorsInFault, w.FalseRejects) + w.otherFailures()
	case f.Breaks:
		return fmt.Sprintf("BREAKS: x%.3f the limit in one window, %d false rejects", w.Overshoot, w.FalseRejects) + w.otherFailures() + w.storeNote()
	case f.Kind == "at-limit":
		return fmt.Sprintf("holds: 0 false rejects (%d rejected)", w.Rejected)
	case f.Kind == "fault":
		return fmt.Sprintf("holds: x%.3f while the store was away, x%.3f after it returned", w.Overshoot, w.AfterRecovery)
	}
	return fmt.Sprintf("holds: x%.3f at worst", w.Overshoot)
}

// shownInVerdict are the checks whose figures a family's verdict prints.
var shownInVerdict = map[string]bool{"max overshoot": true, "false rejects": true, "overshoot during the outage": true,
	"overshoot after recovery": true, "errors while the store is away": true}

// otherFailures names the variant's failed checks whose figures the verdict does not print,
// as "; also failed: errors outside fault windows (3)"; empty when there is none.
func (v HuntVariant) otherFailures() string {
	var out string
	for _, c := range v.Checks {
		if c.Pass || shownInVerdict[c.Name] {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s (%s)", c.Name, Number(c.Figure))
	}
	if out == "" {
		return ""
	}
	return "; also failed: " + out
}

// storeNote says, for a variant that refused a client within its limit, what the fleet's
// store did in its round: "; its round: 3 store calls timed out, 0 decisions with the store
// down" (a node whose store call timed out decides that call's requests alone, up to its
// share of the limit); empty when it refused no such client or the store was not read.
func (v HuntVariant) storeNote() string {
	if v.FalseRejects == 0 || v.Store == nil {
		return ""
	}
	return fmt.Sprintf("; its round: %s store calls timed out, %s decisions with the store down",
		Number(v.Store.Timeouts), Number(v.Store.Degraded))
}

func (f HuntFamily) replicas() int {
	if f.Worst == nil {
		return 0
	}
	return f.Worst.Replicas
}

// HuntVariant is one variant as sent and judged: its parameters and loadtest's figures for
// its client.
type HuntVariant struct {
	Round   int         `json:"round"`
	Client  string      `json:"client"`
	Params  []HuntParam `json:"params"`
	Level   int         `json:"level"` // 0 coarse sweep, k k-th refinement
	Offered int         `json:"offered"`
	// Accepted, Rejected, Errors as accounting counts them.
	Accepted int `json:"accepted"`
	Rejected int `json:"rejected"`
	Errors   int `json:"errors"`
	// Busiest is the most acceptances in any window-long interval; Overshoot it over the
	// limit (loadtest's "max overshoot").
	Busiest   int     `json:"busiest_accepted"`
	Overshoot float64 `json:"overshoot"`
	// AfterRecovery is a fault variant's busiest window over the limit counting only
	// acceptances after the store returned and the recovery grace passed.
	AfterRecovery float64 `json:"after_recovery,omitempty"`
	Replicas      int     `json:"replicas,omitempty"` // the fault's bound while the store is away
	// ErrorsInFault are a fault variant's requests answered with an error (a 5xx, a
	// timeout, a refused connection) while the store was away or in its recovery grace.
	ErrorsInFault int `json:"errors_in_fault,omitempty"`
	FalseRejects  int `json:"false_rejects"`
	// Clients is how many clients the variant sent as (a herd's size); ClientsOver how many
	// of them got more than 1.1× their limit in a window-long interval on the gated clock.
	Clients     int `json:"clients,omitempty"`
	ClientsOver int `json:"clients_over,omitempty"`
	// Outcome is the variant judged as a load test's scenario is, by every check of
	// harness/verdict (5xx, errors, lock-out and the fault's gates included).
	Outcome outcome.Outcome `json:"outcome"`
	// GeneratorBound: loadtest's generator checks failed on this variant's own sends.
	GeneratorBound bool `json:"generator_bound"`
	// PromiseBroken: a check other than the generator's failed, on the traffic that was sent
	// whether or not it kept its schedule (the pressure ladder's break).
	PromiseBroken bool    `json:"promise_broken"`
	Checks        []Check `json:"checks"`
	// Clocks are both promises on both clocks; Overshoot and FalseRejects are the gated
	// clock's. Nil in a hunt written before they were counted.
	Clocks *Clocks `json:"clocks,omitempty"`
	// Store is the fleet's store over the variant's round (HuntRound.Store): a refusal of a
	// client within its limit while nodes decided without their store is the design's
	// fallback at work, a refusal with none is not; nil when not read.
	Store *HuntStore `json:"store,omitempty"`
}

// HuntParam is one parameter's value.
type HuntParam struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// ParamString is the parameters on one line: "rate=2000 req/s gap=0 ms".
func (v HuntVariant) ParamString() string {
	s := ""
	for i, p := range v.Params {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%.4g", p.Name, p.Value)
		if p.Unit != "" {
			s += " " + p.Unit
		}
	}
	return s
}
