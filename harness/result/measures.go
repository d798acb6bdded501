package result

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The measures below are what harness/accounting computes from a run's outcomes. They are
// declared here, as plain data, so that a reader of a result file needs nothing but this
// package; accounting names them with aliases.

// Interval is a half-open span [From, To) of offsets from the run's start, on the clock of
// the outcomes' send times. Fault windows are intervals: the store was down, a replica was
// paused.
type Interval struct {
	From, To time.Duration
}

// Contains reports whether t lies in [From, To).
func (iv Interval) Contains(t time.Duration) bool { return iv.From <= t && t < iv.To }

// Percentiles summarise a distribution of durations.
type Percentiles struct {
	Count               int64
	P50, P90, P99, P999 time.Duration
	Max                 time.Duration // exact
}

// Errors counts the outcomes that are neither an acceptance nor a rejection.
type Errors struct {
	Status5xx   int // the replica answered 5xx
	OtherStatus int // a status other than 2xx, 429 or 5xx
	Timeout     int
	Connection  int
	Canceled    int // the run was canceled with the request in flight
	Other       int
	// Routing counts the requests the harness sent to a replica it had killed, refused or cut
	// off (replica-kill): its routing's failures, not the limiter's, so Total leaves them out.
	Routing int `json:",omitempty"`
}

// Total is the sum of all kinds the limiter answers for: every kind but Routing.
func (e Errors) Total() int {
	return e.Status5xx + e.OtherStatus + e.Timeout + e.Connection + e.Canceled + e.Other
}

// ClientReport is one client's account. Intervals are window-long and half-open; times are
// send times.
type ClientReport struct {
	Client int // index into the schedule's clients
	ID     string
	Limit  int
	Window time.Duration
	Probe  bool

	Offered  int // requests sent (that have an outcome)
	Accepted int
	Rejected int
	Errors   int

	BusiestAccepted  int     // most acceptances in any interval
	Overshoot        float64 // BusiestAccepted / Limit; requirement 1 wants ≤ 1.1
	BusiestOffered   int     // most requests sent in any interval, by send time
	BusiestScheduled int     // the same requests by their scheduled offsets
	// OverLimit says the client asked for more than its due: more than Limit in some
	// interval both by send time and by schedule.
	OverLimit bool
	// FalseRejects counts the rejections that the client's own traffic did not earn: a
	// request rejected at send time t when the client had sent at most Limit requests, this
	// one included, from the window-long interval (t−W, t] until the rejection's answer came
	// back (a request sent while it was in flight may have reached the limiter first). Each
	// rejection is judged at its own moment, on what the limiter could have seen, so
	// generator jitter that carries one request of a burst across a window edge neither
	// hides a false rejection (a token bucket rejecting a client at its limit) nor invents
	// one (a limiter rightly counting that late request against the next burst), and
	// neither does the race of a burst's last requests to several replicas.
	FalseRejects int
	// BusiestArrived counts the acceptances that must have arrived in one window-long
	// interval: sent in it and answered in it (arrival bounds); OvershootArrival is it over
	// Limit. BusiestAccepted and Overshoot are the client's clock.
	BusiestArrived   int     `json:",omitempty"`
	OvershootArrival float64 `json:",omitempty"`
	// FalseRejectsSent counts the rejections at send time t when the client had sent at most
	// Limit requests, this one included, in (t−W, t]: false rejects on the client's clock,
	// with no benefit of the doubt about arrival order.
	FalseRejectsSent int `json:",omitempty"`
	// BusiestExact, OvershootExact and FalseRejectsExact are the same promises on the run's
	// exact clock (Clocks.Exact): each request at the time the limiter decided it, or, behind
	// a recording backend, each admission at the time it reached the backend; a request
	// without such a time keeps its arrival bounds.
	BusiestExact      int     `json:",omitempty"`
	OvershootExact    float64 `json:",omitempty"`
	FalseRejectsExact int     `json:",omitempty"`

	ErrorsInFault      int
	ErrorsOutsideFault int
	RejectsInFault     int
	// RoutingErrors are the client's requests the harness sent to a replica it had killed
	// (Errors.Routing): in no other count of the client's, Offered included.
	RoutingErrors int `json:",omitempty"`

	// SteadyWindows counts the window-aligned windows [kW, (k+1)W) of the run, outside fault
	// windows, in which the client sent steadily over its limit: more than Limit requests, at
	// least one in every tenth of the window, and the same in the window before. SteadyAdmitted
	// is the fewest acceptances in one of them, in the window from SteadyAt, and SteadyShare
	// it over Limit (the no lock-out promise), the acceptances counted by send time; 0 without
	// a steady window. The same three on arrival bounds (...Arrival) count an acceptance in a
	// window when it may have arrived in it (sent before its end, answered at or after its
	// start): the most a limiter could have admitted there. Steadiness is the client's own
	// sending, by send time, on both. The admitted counts and shares are written when 0: a
	// client locked out wholly (0 admitted) is then told from one not measured (no
	// SteadyWindows).
	SteadyWindows         int           `json:",omitempty"`
	SteadyAt              time.Duration `json:",omitempty"`
	SteadyAdmitted        int
	SteadyShare           float64
	SteadyAtArrival       time.Duration `json:",omitempty"`
	SteadyAdmittedArrival int
	SteadyShareArrival    float64
}

// OvershootOn is the client's overshoot on the clock named: its send times (ClockClient), the
// run's exact clock (ClockDecision, ClockBackend), or arrival bounds.
func (c ClientReport) OvershootOn(clock string) float64 {
	switch {
	case clock == ClockClient:
		return c.Overshoot
	case Exact(clock):
		return c.OvershootExact
	}
	return c.OvershootArrival
}

// FalseRejectsOn is the client's false rejects on the clock named, as OvershootOn.
func (c ClientReport) FalseRejectsOn(clock string) int {
	switch {
	case clock == ClockClient:
		return c.FalseRejectsSent
	case Exact(clock):
		return c.FalseRejectsExact
	}
	return c.FalseRejects
}

// Check is one gate: a figure from the run compared with a threshold.
type Check struct {
	Name      string
	Figure    float64
	Threshold float64
	Op        string // "<=", ">=" or "=="
	Pass      bool
	Detail    string
	// NotMeasured says the run lacked the evidence the check rests on (Detail says which): it
	// neither passes nor fails, and Pass is true so that it does not fail the run.
	NotMeasured bool `json:",omitempty"`
}

// String is the check on one line, for the terminal, logs and test failures: the figures to
// four significant digits as the verdict table prints them (thousands grouped), never a
// ratio's sixteen digits, and no empty parentheses where the check has no detail.
func (c Check) String() string {
	verdict := "FAIL"
	switch {
	case c.NotMeasured:
		verdict = "not measured"
	case c.Pass:
		verdict = "pass"
	}
	s := fmt.Sprintf("%s %s: %s %s %s", verdict, c.Name, Number(c.Figure), c.Op, Number(c.Threshold))
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// The clocks a run's promises are counted on (see Clocks).
const (
	// ClockArrival is what a limiter could know: a request arrived between its send and its
	// answer.
	ClockArrival = "arrival"
	// ClockClient is the client's own clock: its send times.
	ClockClient = "client"
	// ClockDecision is the limiter's own clock: when it says it decided each request (a
	// header its answers carry, as the built-in replica's X-RateLimit-Decided-At).
	ClockDecision = "decision"
	// ClockBackend is a recording backend's clock behind a limiter that proxies: when each
	// admitted request reached the protected service.
	ClockBackend = "backend"
	// ClockAuto gates on the exact clock the target gives (decision, else backend) and on
	// arrival bounds where it gives none. The default.
	ClockAuto = "auto"
)

// Exact reports whether clock is one on which each request has a time of its own (decision,
// backend), not bounds.
func Exact(clock string) bool { return clock == ClockDecision || clock == ClockBackend }

// Clocks are a run's two promises, overshoot and false rejects, each on every clock it has:
// the client's send times, arrival bounds, and an exact clock where the target gives one.
// Gate names the one that gates both; the others are always shown beside it.
type Clocks struct {
	Gate string `json:"gate"`
	// OvershootClient is the busiest window of acceptances by send time over the limit;
	// OvershootArrival counts only those that must have arrived in one window.
	OvershootClient  float64 `json:"overshoot_client"`
	OvershootArrival float64 `json:"overshoot_arrival"`
	// FalseRejectsClient counts rejections of a client within its limit by its sends;
	// FalseRejectsArrival those no order of arrival explains.
	FalseRejectsClient  int `json:"false_rejects_client"`
	FalseRejectsArrival int `json:"false_rejects_arrival"`
	// ExcusedSkew is, over the rejections the arrival bounds excuse but the client's clock
	// does not, the least arrival skew each needed (Count: how many).
	ExcusedSkew Percentiles `json:"excused_skew"`
	// ArrivalWidth is how wide the arrival bounds are: the p99 of answer minus send over the
	// answered requests. Every figure on arrival bounds is uncertain by up to about that much.
	ArrivalWidth time.Duration `json:"arrival_width_p99_ns"`
	// Exact is the exact clock the run's outcomes carry (ClockDecision, ClockBackend), empty
	// for none; the promises on it are OvershootExact and FalseRejectsExact.
	Exact             string  `json:"exact,omitempty"`
	OvershootExact    float64 `json:"overshoot_exact,omitempty"`
	FalseRejectsExact int     `json:"false_rejects_exact,omitempty"`
	// ExactTimes counts the requests with a time on the exact clock; ExactMissing the
	// admissions (and on the decision clock the refusals) without one, counted on their
	// arrival bounds; ExactOutside the exact times outside their request's send and answer,
	// by up to ExactOutsideMax (a clock that disagrees with the generator's).
	ExactTimes      int           `json:"exact_times,omitempty"`
	ExactMissing    int           `json:"exact_missing,omitempty"`
	ExactOutside    int           `json:"exact_outside,omitempty"`
	ExactOutsideMax time.Duration `json:"exact_outside_max_ns,omitempty"`
	// Why says why the promises were not gated on the exact clock the target declares
	// (gate auto): none of its answers carried a time on it. Empty otherwise.
	Why string `json:"why,omitempty"`
}

// String is the clocks line: the promises on every clock, the gated one first, the arrival
// bounds' width beside them.
func (c Clocks) String() string {
	type fig struct {
		clock string
		over  float64
		false int
	}
	figs := []fig{{ClockArrival, c.OvershootArrival, c.FalseRejectsArrival}, {ClockClient, c.OvershootClient, c.FalseRejectsClient}}
	if c.Exact != "" {
		figs = append([]fig{{c.Exact, c.OvershootExact, c.FalseRejectsExact}}, figs...)
	}
	gate := c.Gate
	if gate == "" {
		gate = ClockArrival
	}
	slices.SortStableFunc(figs, func(a, b fig) int { return cmpBool(b.clock == gate, a.clock == gate) })
	width := fmt.Sprintf("±%v p99", roundWidth(c.ArrivalWidth))
	label := func(clock string) string {
		if clock == ClockArrival {
			return clock + " " + width
		}
		return clock
	}
	var over, rej []string
	for _, f := range figs {
		over = append(over, fmt.Sprintf("x%.3f (%s)", f.over, label(f.clock)))
		rej = append(rej, fmt.Sprintf("%d (%s)", f.false, label(f.clock)))
	}
	s := fmt.Sprintf("clocks: gated on %s; overshoot %s; false rejects %s", clockWords(gate), strings.Join(over, " "), strings.Join(rej, " "))
	switch {
	case c.Why != "":
		s += "; " + c.Why
	case c.Exact == "" && !Exact(gate):
		s += "; no exact clock: the target gives no decision time and runs behind no recording backend"
	}
	if c.Exact != "" {
		s += fmt.Sprintf("; %s clock: %d times", c.Exact, c.ExactTimes)
		if c.ExactMissing > 0 {
			s += fmt.Sprintf(", %d answers without one (on their arrival bounds)", c.ExactMissing)
		}
		if c.ExactOutside > 0 {
			s += fmt.Sprintf(", %d outside their send and answer (by up to %v)", c.ExactOutside, c.ExactOutsideMax.Round(time.Microsecond))
		}
	}
	if k := c.ExcusedSkew; k.Count > 0 {
		s += fmt.Sprintf("; %d rejections excused only by arrival skew: p99 %v, max %v", k.Count, k.P99.Round(time.Microsecond), k.Max.Round(time.Microsecond))
	}
	return s
}

// roundWidth rounds an arrival width to three or four significant figures.
func roundWidth(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// OtherClock is the clock beside the one named: the client's for arrival bounds (or none
// named) and for an exact clock, arrival bounds for the client's.
func OtherClock(clock string) string {
	if clock == ClockClient {
		return ClockArrival
	}
	return ClockClient
}

func clockWords(clock string) string {
	switch clock {
	case ClockClient:
		return "the client's send times"
	case ClockDecision:
		return "the limiter's decision clock"
	case ClockBackend:
		return "the backend's clock (what reached the protected service)"
	}
	return "arrival bounds"
}

// ZoneFigures are a scenario's figures for one zone of a topology (--zones): what the
// zone's replicas answered, so that "the far zone's clients waited 250 ms and were admitted
// 1.3x" is read in one row. Requests are counted where they were sent; a client's promise
// is judged on all its requests, wherever they went (docs/zones.md).
type ZoneFigures struct {
	Zone string `json:"zone"`
	// Replicas are the zone's node indexes; Link its one-way latency and jitter.
	Replicas []int       `json:"replicas"`
	Latency  Percentiles `json:"latency"` // answer times of the zone's requests that got a status
	Link     LinkFigures `json:"link"`
	Requests int         `json:"requests"` // sent to the zone's replicas, with an outcome
	Accepted int         `json:"accepted"`
	Rejected int         `json:"rejected"`
	Errors   Errors      `json:"errors"`
	// ErrorsInFault are the zone's errors sent inside a fault window.
	ErrorsInFault int `json:"errors_in_fault"`
	// Overshoot is the most one client was admitted by the zone's replicas in one
	// window-long interval, over its limit, on arrival bounds (what must have arrived in it);
	// OvershootClient is that client. A client whose requests all went to the zone has its
	// whole overshoot here.
	Overshoot       float64 `json:"overshoot"`
	OvershootClient string  `json:"overshoot_client,omitempty"`
	// FalseRejects are the zone's rejections that the client's whole traffic does not
	// explain (on arrival bounds, as the gate counts them).
	FalseRejects int `json:"false_rejects"`
	// SteadyClients are the clients sending steadily over their limit (the lock-out
	// promise's) that sent most of their requests to the zone; LockedOut those of them
	// admitted less than the least share in a steady window, on arrival bounds.
	SteadyClients int `json:"steady_clients"`
	LockedOut     int `json:"locked_out"`
	// PeerZone and PeerLink, for a system without a store whose zones' nodes reached each
	// other through links (Conditions.PeerLinks): the nearest other zone and the link to its
	// nodes, one way (topology.Between). Such a zone has no store link: Link is only its share
	// of the links between zones.
	PeerZone string      `json:"peer_zone,omitempty"`
	PeerLink LinkFigures `json:"peer_link,omitzero"`
}

// LinkTo is what the zone waits to reach what keeps its counts, each way: its store link
// ("store 40ms±10ms each way"), or for a system without a store its link to the nearest
// other zone's nodes ("40.5ms±10ms each way to zone near's nodes").
func (z ZoneFigures) LinkTo() string {
	if z.PeerZone != "" {
		return peerLinkText(z.PeerZone, z.PeerLink)
	}
	return "store " + z.Link.String() + " each way"
}

// peerLinkText is a link to zone's nodes as the terminal and the tables say it: "40.5ms±10ms
// each way to zone near's nodes".
func peerLinkText(zone string, l LinkFigures) string {
	return fmt.Sprintf("%s each way to zone %s's nodes", l, zone)
}

// LinkFigures are a zone's link to the store as declared.
type LinkFigures struct {
	Latency time.Duration `json:"latency_ns"`
	Jitter  time.Duration `json:"jitter_ns,omitempty"`
}

// String is the link's one-way latency, "±" and its jitter where it has one: 40ms±10ms.
func (l LinkFigures) String() string {
	if l.Jitter > 0 {
		return l.Latency.String() + "±" + l.Jitter.String()
	}
	return l.Latency.String()
}

// Line is the zone's figures on one line, as the terminal prints them.
func (z ZoneFigures) Line() string {
	lock := "lock-out not measured (no steady client homed here)"
	if z.SteadyClients > 0 {
		lock = fmt.Sprintf("%d of %d steady clients locked out", z.LockedOut, z.SteadyClients)
	}
	over := fmt.Sprintf("admitted up to x%.3f of one client's limit in a window", z.Overshoot)
	if z.OvershootClient != "" {
		over += " (" + z.OvershootClient + ")"
	}
	return fmt.Sprintf("zone %s (%d replicas, %s): %d requests, p50 %v p99 %v max %v; %s; %d false rejects; %s; %d errors (%d in the fault)",
		z.Zone, len(z.Replicas), z.LinkTo(), z.Requests, z.Latency.P50.Round(time.Millisecond/10), z.Latency.P99.Round(time.Millisecond/10),
		z.Latency.Max.Round(time.Millisecond/10), over, z.FalseRejects, lock, z.Errors.Total(), z.ErrorsInFault)
}
