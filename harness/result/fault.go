package result

import "time"

// FaultTiming is one fault as it was planned and as it happened, in offsets from the start of
// the traffic (the outcomes' clock).
type FaultTiming struct {
	Fault  string `json:"fault"`
	Member string `json:"member"` // the fleet member it hit: "redis", "replica-7"
	// Planned is when the member was to go down (From) and to be brought back (To); a
	// store-restart's To is its From: it is started again at once.
	Planned Interval `json:"planned"`
	// Began is when the harness began to take the member down, Down when that was done (a
	// stop waits for the process to end), Mending when it began to bring it back and Back
	// when the member answered again (Redis PING, the replica's health check), or when the
	// slow store's delay was removed. Zero when the step did not happen (Error says why).
	Began   time.Duration `json:"began_ns"`
	Down    time.Duration `json:"down_ns"`
	Mending time.Duration `json:"mending_ns"`
	Back    time.Duration `json:"back_ns"`
	// Delay is what store-slow added to every store reply.
	Delay time.Duration `json:"delay_ns,omitempty"`
	// Routed is the window in which the harness sent no request to a killed replica: its
	// requests went to the live ones (replica-kill).
	Routed *Interval `json:"routed,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// Outage is the span the member was away: from the moment the harness began to take it down
// to the moment it answered again; To is zero when it never came back.
func (f FaultTiming) Outage() Interval { return Interval{From: f.Began, To: f.Back} }
