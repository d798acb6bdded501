package accounting

import (
	"github.com/edgeproof/rlharness/harness/result"

	"fmt"
	"time"
)

// Gate figures.
const (
	// OvershootLimit is the most a client may get through in any
	// window-long interval, as a multiple of its declared limit. Requirement 1
	OvershootLimit = 1.1
	// DefaultLatenessP99 is how late the generator may send its 99th
	// percentile request before its timing, not the limiter, is in question.
	DefaultLatenessP99 = 10 * time.Millisecond
	// DefaultMinRateRatio is the least share of the asked rate the generator
	// must achieve.
	DefaultMinRateRatio = 0.95
)

// Comparison operators of a Check.
const (
	OpAtMost  = "<="
	OpAtLeast = ">="
	OpEqual   = "=="
)

// NewCheck compares figure with threshold by op. An unknown op fails.
func NewCheck(name string, figure float64, op string, threshold float64, detail string) result.Check {
	c := result.Check{Name: name, Figure: figure, Threshold: threshold, Op: op, Detail: detail}
	switch op {
	case OpAtMost:
		c.Pass = figure <= threshold
	case OpAtLeast:
		c.Pass = figure >= threshold
	case OpEqual:
		c.Pass = figure == threshold
	default:
		c.Detail = fmt.Sprintf("unknown comparison %q; use <=, >= or ==. %s", op, detail)
	}
	return c
}

// NotMeasuredCheck is a check the run lacks the evidence for: it neither passes nor fails
// (Pass is true so that it does not fail the run, NotMeasured says it was not measured), and
// its detail, "not measured: " and why, says which evidence was missing.
func NotMeasuredCheck(name, op string, threshold float64, why string) result.Check {
	c := NewCheck(name, 0, op, threshold, "not measured: "+why)
	c.Pass, c.NotMeasured = true, true
	return c
}

// CheckOvershoot is requirement 1: no client gets more than limit × its
// declared limit through in any window-long interval, on the clock named
// (result.ClockArrival, the default, or result.ClockClient).
func CheckOvershoot(r *Report, limit float64, clock string) result.Check {
	if c, void := exactVoid(r, CheckOvershootName, limit, OpAtMost, clock); void {
		return c
	}
	fig, who := r.Overshoot(clock)
	detail := "no client had an acceptance"
	if who != "" {
		c := r.client(who)
		n, how := c.BusiestArrived, "that must have arrived"
		switch clock {
		case result.ClockClient:
			n, how = c.BusiestAccepted, "sent"
		case result.ClockDecision:
			n, how = c.BusiestExact, "decided, by the limiter's clock"
		case result.ClockBackend:
			n, how = c.BusiestExact, "that reached the backend, by its clock"
		}
		detail = fmt.Sprintf("client %s: %d accepted in one %v interval, limit %d (%s in it)", c.ID, n, c.Window, c.Limit, how)
	}
	return NewCheck(CheckOvershootName, fig, OpAtMost, limit, detail)
}

// exactVoid is the check named, not measured, when clock is an exact clock the run's
// outcomes do not carry (a limiter that did not say when it decided, no recording backend):
// its promise cannot be judged there, and is neither met nor broken.
func exactVoid(r *Report, name string, threshold float64, op, clock string) (result.Check, bool) {
	if !result.Exact(clock) || (r.Exact == clock && r.ExactTimes > 0) {
		return result.Check{}, false
	}
	return NotMeasuredCheck(name, op, threshold, fmt.Sprintf("gated on the %s clock, but no request has a time on it (give the target's clock, or --gate-clock auto or arrival)", clock)), true
}

// CheckFalseRejects is requirement 2: a client is never rejected while its own traffic in
// the window before the request is within its limit, on the clock named (see
// ClientReport.FalseRejects and FalseRejectsSent).
func CheckFalseRejects(r *Report, clock string) result.Check {
	if c, void := exactVoid(r, CheckFalseRejectsName, 0, OpEqual, clock); void {
		return c
	}
	n, clients := r.FalseRejectsOn(clock)
	detail := fmt.Sprintf("%d clients over their limit; every rejection was earned by the client's own traffic", r.OverLimitClients)
	if n > 0 {
		first := ""
		for _, c := range r.Clients {
			if k := c.FalseRejectsOn(clock); k > 0 {
				first = fmt.Sprintf("; first: %s, %d rejected, busiest %d of %d", c.ID, k, c.BusiestOffered, c.Limit)
				break
			}
		}
		detail = fmt.Sprintf("%d rejections of %d clients within their limit at that moment%s", n, clients, first)
	}
	return NewCheck(CheckFalseRejectsName, float64(n), OpEqual, 0, detail)
}

// CheckErrorsOutsideFaults is requirement 3 and plain health: outside the
// fault windows every request is answered 2xx or 429. Errors inside fault
// windows are reported, not gated.
func CheckErrorsOutsideFaults(r *Report) result.Check {
	e := r.Errors
	detail := fmt.Sprintf("5xx %d, other status %d, timeouts %d, connection %d, canceled %d, other %d in all; %d inside fault windows, %d rejections inside them",
		e.Status5xx, e.OtherStatus, e.Timeout, e.Connection, e.Canceled, e.Other, r.ErrorsInFault, r.RejectsInFault)
	return NewCheck("errors outside fault windows", float64(r.ErrorsOutsideFault), OpEqual, 0, detail)
}

// CheckLateness gates the generator: its 99th percentile lateness, in
// milliseconds, is at most tolerance.
func CheckLateness(r *Report, tolerance time.Duration) result.Check {
	l := r.Lateness
	detail := fmt.Sprintf("p50 %v, p99 %v, max %v over %d sends", l.P50, l.P99, l.Max, l.Count)
	return NewCheck(CheckLatenessName, millis(l.P99), OpAtMost, millis(tolerance), detail)
}

// CheckRate gates the generator: it achieved at least minRatio of the asked
// rate.
func CheckRate(r *Report, minRatio float64) result.Check {
	ratio := 0.0
	if r.AskedRate > 0 {
		ratio = r.AchievedRate / r.AskedRate
	}
	detail := fmt.Sprintf("achieved %s of %s req/s asked; %d of %d requests sent", result.Number(r.AchievedRate), result.Number(r.AskedRate), r.Outcomes, r.Scheduled)
	return NewCheck(CheckRateName, ratio, OpAtLeast, minRatio, detail)
}

// The generator's own gates (CheckLateness, CheckRate): one that fails says the traffic was
// not the schedule, not that the limiter broke a promise.
const (
	CheckLatenessName = "generator lateness p99 (ms)"
	CheckRateName     = "achieved / asked rate"
)

// CheckOvershootName is the check of promise 1: no client over 1.1x its limit in any
// window-long interval.
const CheckOvershootName = "max overshoot"

// CheckFalseRejectsName is the check of promise 2: no client refused within its limit.
const CheckFalseRejectsName = "false rejects"

// IsGeneratorCheck says a check is one of the generator's own gates.
func IsGeneratorCheck(name string) bool { return name == CheckLatenessName || name == CheckRateName }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *Report) client(id string) result.ClientReport {
	for _, c := range r.Clients {
		if c.ID == id {
			return c
		}
	}
	return result.ClientReport{ID: id}
}

// Gates are the thresholds a run is judged by.
type Gates struct {
	MaxOvershoot float64       // OvershootLimit
	LatenessP99  time.Duration // DefaultLatenessP99
	MinRateRatio float64       // DefaultMinRateRatio
	// MinShare is the least share of its limit a client sending steadily over it is admitted
	// in a window (DefaultMinShare; 0: the default).
	MinShare float64
	// Clock is the clock both promises are gated on: result.ClockAuto (the default: the
	// target's exact clock where it gives one, arrival bounds otherwise; see
	// Report.GateClock), ClockDecision, ClockBackend, ClockArrival (empty: the same) or
	// ClockClient. The others are shown beside it (Report.Clocks). Evaluate takes it concrete.
	Clock string
}

// DefaultGates are the requirements' thresholds and the default generator
// tolerances.
func DefaultGates() Gates {
	return Gates{MaxOvershoot: OvershootLimit, LatenessP99: DefaultLatenessP99, MinRateRatio: DefaultMinRateRatio, MinShare: DefaultMinShare, Clock: result.ClockAuto}
}

// Verdict is a run judged.
type Verdict struct {
	Checks []result.Check
	Pass   bool // every check passed
	// GeneratorBound means the generator did not send the schedule
	// faithfully (too late or too slow); the limiter's figures then describe
	// other traffic than the schedule and are not evidence either way.
	GeneratorBound bool
}

// Evaluate runs every gate on r: the three requirements and the no lock-out promise, then
// the two generator checks.
func Evaluate(r *Report, g Gates) Verdict {
	v := Verdict{Checks: []result.Check{
		CheckOvershoot(r, g.MaxOvershoot, g.Clock),
		CheckFalseRejects(r, g.Clock),
		CheckErrorsOutsideFaults(r),
		CheckLockout(r, g.MinShare, g.Clock),
	}}
	gen := []result.Check{CheckLateness(r, g.LatenessP99), CheckRate(r, g.MinRateRatio)}
	v.Checks = append(v.Checks, gen...)
	v.Pass = true
	for _, c := range v.Checks {
		v.Pass = v.Pass && c.Pass
	}
	for _, c := range gen {
		v.GeneratorBound = v.GeneratorBound || !c.Pass
	}
	return v
}
