package result

import (
	"fmt"
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
	// one included, in the window-long interval (t−W, t]. Each rejection is judged at its
	// own moment, on what the limiter could have seen, so generator jitter that carries one
	// request of a burst across a window edge neither hides a false rejection (a token
	// bucket rejecting a client at its limit) nor invents one (a limiter rightly counting
	// that late request against the next burst).
	FalseRejects int

	ErrorsInFault      int
	ErrorsOutsideFault int
	RejectsInFault     int
	// RoutingErrors are the client's requests the harness sent to a replica it had killed
	// (Errors.Routing): in no other count of the client's, Offered included.
	RoutingErrors int `json:",omitempty"`
}

// Check is one gate: a figure from the run compared with a threshold.
type Check struct {
	Name      string
	Figure    float64
	Threshold float64
	Op        string // "<=", ">=" or "=="
	Pass      bool
	Detail    string
}

// String is the check on one line, for logs and test failures.
func (c Check) String() string {
	verdict := "FAIL"
	if c.Pass {
		verdict = "pass"
	}
	return fmt.Sprintf("%s %s: %g %s %g (%s)", verdict, c.Name, c.Figure, c.Op, c.Threshold, c.Detail)
}
