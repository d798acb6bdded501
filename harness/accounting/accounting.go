package accounting

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// class is what an outcome amounts to, stored in one byte per request.
type class uint8

const (
	unseen class = iota
	accepted
	rejected
	status5xx
	otherStatus
	timeout
	connection
	canceled
	otherErr
)

func classOf(o traffic.Outcome) class {
	switch {
	case o.Code >= 200 && o.Code < 300:
		return accepted
	case o.Code == 429:
		return rejected
	case o.Code >= 500:
		return status5xx
	case o.Code != 0:
		return otherStatus
	}
	switch o.Err {
	case traffic.ErrTimeout:
		return timeout
	case traffic.ErrConnection:
		return connection
	case traffic.ErrCanceled:
		return canceled
	}
	return otherErr
}

// Accumulator takes a run's outcomes one at a time and turns them into a
// Report. It keeps thirteen bytes per scheduled request, so ten million
// requests cost 130 MB beside the schedule.
// It is not safe for concurrent use.
type Accumulator struct {
	s      *schedule.Schedule
	faults []result.Interval
	dead   *deadReplica

	sent  []time.Duration // by schedule index
	class []class         // by schedule index
	// took is how long each request took to be answered (µs, rounded up; a failure's time
	// to fail), by schedule index: the limiter saw it somewhere between its send and its
	// answer. A rejection's later sends that reached the limiter first were in flight by its
	// answer; an earlier send answered after t−window may have reached it after t−window.
	took []uint32

	outcomes, duplicates int
	lastSent             time.Duration

	// decided and reached are the exact clocks' times by schedule index (offsets, noTime
	// where there is none), made on the first time of each: when the limiter says it decided
	// a request (Outcome.DecidedAt), and when an admitted request reached a recording
	// backend behind it (AddBackend). A run without them costs nothing more.
	decided, reached []time.Duration
	// reachedTwice counts backend arrivals of a request that had reached it already (a proxy's
	// retry); reachedOther those of no request in the schedule.
	reachedTwice, reachedOther int
	backend                    bool // the run had a recording backend (UseBackend, AddBackend)

	latency, lateness *Latency
	replica           []*Latency // by replica index
	zones             *zoneAccount
}

// New accounts for a run of s with the given fault windows (offsets from the
// run's start).
func New(s *schedule.Schedule, faults []result.Interval) (*Accumulator, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	for _, iv := range faults {
		if iv.To <= iv.From {
			return nil, fmt.Errorf("fault window [%v, %v) is empty; give From < To", iv.From, iv.To)
		}
	}
	k := max(1, s.Replicas())
	a := &Accumulator{
		s:        s,
		faults:   slices.Clone(faults),
		sent:     make([]time.Duration, len(s.Requests)),
		class:    make([]class, len(s.Requests)),
		took:     make([]uint32, len(s.Requests)),
		latency:  NewLatency(),
		lateness: NewLatency(),
		replica:  make([]*Latency, k),
	}
	for i := range a.replica {
		a.replica[i] = NewLatency()
	}
	return a, nil
}

// Add records one outcome; it has the signature of traffic.Run's sink. An
// outcome for an index already seen is counted as a duplicate and ignored.
func (a *Accumulator) Add(o traffic.Outcome) error {
	if o.Index < 0 || o.Index >= len(a.class) {
		return fmt.Errorf("outcome for request %d, but the schedule has %d requests: the outcomes are from another schedule", o.Index, len(a.class))
	}
	if a.class[o.Index] != unseen {
		a.duplicates++
		return nil
	}
	c := classOf(o)
	a.class[o.Index] = c
	if o.Decided {
		a.decided = setTime(a.decided, len(a.class), o.Index, o.DecidedAt)
	}
	a.sent[o.Index] = o.Sent
	a.took[o.Index] = tookMicros(o.Latency)
	a.outcomes++
	a.lastSent = max(a.lastSent, o.Sent)
	// A request sent a hair before its offset (a worker took the targeter's
	// next entry) counts as on time.
	a.lateness.Record(max(0, o.Lateness))
	// Latency is the replicas' answer time; requests without an answer are
	// counted as errors instead.
	if o.Code != 0 {
		a.latency.Record(o.Latency)
		a.replica[a.s.Requests[o.Index].Replica].Record(o.Latency)
		if k := a.zoneOf(int32(o.Index)); k >= 0 {
			a.zones.latency[k].Record(o.Latency)
		}
	}
	return nil
}

// SetFaults replaces the fault windows given to New: a fault's measured span is known only
// once the run is over (a member's return takes as long as it takes). Call it before Report.
func (a *Accumulator) SetFaults(faults []result.Interval) error {
	for _, iv := range faults {
		if iv.To <= iv.From {
			return fmt.Errorf("fault window [%v, %v) is empty; give From < To", iv.From, iv.To)
		}
	}
	a.faults = slices.Clone(faults)
	return nil
}

// deadReplica is a replica the harness killed, and when.
type deadReplica struct {
	replica int16
	during  result.Interval
}

// SetDeadReplica says replica k was killed by the harness during iv: a request sent to it in
// iv that failed to connect (refused, reset, cut off) never reached a limiter, and is counted
// as the harness's routing error (Errors.Routing), in no other count. A replica's own errors
// (a status, a timeout) stay the limiter's. Call it before Report.
func (a *Accumulator) SetDeadReplica(k int, iv result.Interval) {
	a.dead = &deadReplica{replica: int16(k), during: iv}
}

// routing reports whether request i, of class c and sent at t, is a routing error.
func (a *Accumulator) routing(i int32, c class, t time.Duration) bool {
	d := a.dead
	return d != nil && c == connection && a.s.Requests[i].Replica == d.replica && d.during.Contains(t)
}

func (a *Accumulator) inFault(t time.Duration) bool {
	for _, iv := range a.faults {
		if iv.Contains(t) {
			return true
		}
	}
	return false
}

// addError counts an outcome of class c in e.
func addError(e *result.Errors, c class) {
	switch c {
	case status5xx:
		e.Status5xx++
	case otherStatus:
		e.OtherStatus++
	case timeout:
		e.Timeout++
	case connection:
		e.Connection++
	case canceled:
		e.Canceled++
	case otherErr:
		e.Other++
	}
}

// Report is a run's account.
type Report struct {
	Scheduled  int // requests in the schedule
	Outcomes   int // distinct requests with an outcome
	Unsent     int // scheduled requests without an outcome
	Duplicates int // outcomes for a request already accounted for

	Accepted int
	Rejected int
	Errors   result.Errors

	ErrorsInFault      int
	ErrorsOutsideFault int
	RejectsInFault     int
	// RoutingErrors are requests sent to a replica the harness had killed (SetDeadReplica),
	// as Errors.Routing; in no other count.
	RoutingErrors int

	// FalseRejects are judged on arrival bounds (what a limiter could know): a rejection is
	// excused when some order of arrival within the sends and answers explains it.
	FalseRejects       int // requirement 2 wants 0
	FalseRejectClients int
	OverLimitClients   int
	// FalseRejectsSent are judged on the client's clock: its send times alone.
	FalseRejectsSent       int
	FalseRejectSentClients int
	// ExcusedSkew is, for each rejection false on the client's clock but excused on arrival
	// bounds, the least arrival skew that excuses it (see ClientReport.FalseRejectsSent).
	ExcusedSkew result.Percentiles

	// MaxOvershoot is on the client's clock: acceptances by send time.
	MaxOvershoot       float64 // over all clients; requirement 1 wants ≤ 1.1
	MaxOvershootClient string
	// OvershootArrival is on arrival bounds: the acceptances that must have arrived in one
	// window-long interval (sent in it and answered in it).
	OvershootArrival       float64
	OvershootArrivalClient string

	// Exact is the exact clock the outcomes carry (result.ClockDecision or ClockBackend;
	// empty: none), and the promises on it (see exactSpans): OvershootExact and its client,
	// FalseRejectsExact and how many clients had one. ExactTimes, ExactMissing, ExactOutside
	// and ExactOutsideMax are as result.Clocks has them; ReachedTwice and ReachedOther are
	// the backend's arrivals of a request that had reached it already and of none of the
	// schedule's, ReachedUnadmitted those of requests the client did not see admitted.
	Exact                      string
	OvershootExact             float64
	OvershootExactClient       string
	FalseRejectsExact          int
	FalseRejectExactClients    int
	ExactTimes, ExactMissing   int
	ExactOutside               int
	ExactOutsideMax            time.Duration
	ReachedTwice, ReachedOther int
	ReachedUnadmitted          int

	Clients []result.ClientReport // one per schedule client, in schedule order

	Latency        result.Percentiles   // requests that got a status
	ReplicaLatency []result.Percentiles // by replica index
	Lateness       result.Percentiles   // all sent requests; early sends count as 0
	// Zones are the figures per zone (SetZones); nil without zones.
	Zones []result.ZoneFigures

	AskedRate    float64 // scheduled requests per second of the schedule
	AchievedRate float64 // traffic.AchievedRate
	LastSent     time.Duration
}

// Report computes the account of everything added so far. It costs four
// more bytes per request while it runs.
func (a *Accumulator) Report() Report {
	s := a.s
	r := Report{
		Scheduled:  len(s.Requests),
		Outcomes:   a.outcomes,
		Unsent:     len(s.Requests) - a.outcomes,
		Duplicates: a.duplicates,
		Clients:    make([]result.ClientReport, len(s.Clients)),
		Latency:    a.latency.Percentiles(),
		Lateness:   a.lateness.Percentiles(),
		LastSent:   a.lastSent,
	}
	if s.Duration > 0 {
		r.AskedRate = float64(len(s.Requests)) / s.Duration.Seconds()
	}
	r.AchievedRate = traffic.AchievedRate(a.outcomes, s.Duration, a.lastSent)
	for _, l := range a.replica {
		r.ReplicaLatency = append(r.ReplicaLatency, l.Percentiles())
	}
	start, order := byClient(s)
	var b sends
	b.zone = a.newZoneTally()
	skew := NewLatency()
	exact := a.exactTimes(&r)
	for c, cl := range s.Clients {
		cr := a.client(c, cl, order[start[c]:start[c+1]], &r.Errors, &b, skew)
		if exact != nil {
			a.exactClient(&cr, cl, order[start[c]:start[c+1]], exact, &r, &b)
		}
		r.add(cr)
		r.Clients[c] = cr
	}
	r.Zones = b.zone.report(a.zones)
	r.ExcusedSkew = skew.Percentiles()
	return r
}

// byClient groups request indexes by client (a counting sort), so that each client's sends
// can be put in time order and scanned once: client c's requests are order[start[c]:start[c+1]],
// in schedule order.
func byClient(s *schedule.Schedule) (start, order []int32) {
	start = make([]int32, len(s.Clients)+1)
	for _, q := range s.Requests {
		start[q.Client+1]++
	}
	for c := range s.Clients {
		start[c+1] += start[c]
	}
	order = make([]int32, len(s.Requests))
	next := slices.Clone(start[:len(s.Clients)])
	for i, q := range s.Requests {
		order[next[q.Client]] = int32(i)
		next[q.Client]++
	}
	return start, order
}

// sends are one client's send times by what became of them, kept between clients so that
// a population of clients costs four slices, not four per client.
type sends struct {
	offered, answered, scheduled, accepted []time.Duration
	acceptedAnswered                       []time.Duration
	rejected                               []rejection
	spans, acceptedSpans                   []span
	arrival                                arrivalScratch
	// The exact clock's (exactClient): admissions, every request's bounds (a point where it
	// has a time) and refusals.
	exactAdmitted    []span
	exactLo, exactHi []time.Duration
	exactRejected    []rejection
	zone             *zoneTally // nil without zones
}

// client is the account of client c, whose requests are idx (in schedule order); its errors
// are added to errs as well, and a routing error counts there alone.
// The least arrival skew each rejection false on the client's clock needed to be excused
// goes into skew.
func (a *Accumulator) client(c int, cl schedule.Client, idx []int32, errs *result.Errors, b *sends, skew *Latency) result.ClientReport {
	cr := result.ClientReport{Client: c, ID: cl.ID, Limit: cl.Limit, Window: cl.Window, Probe: cl.Probe}
	b.offered, b.answered, b.scheduled, b.accepted, b.rejected = b.offered[:0], b.answered[:0], b.scheduled[:0], b.accepted[:0], b.rejected[:0]
	b.spans, b.acceptedSpans, b.acceptedAnswered = b.spans[:0], b.acceptedSpans[:0], b.acceptedAnswered[:0]
	b.zone.begin()
	for _, i := range idx {
		k := a.class[i]
		if k == unseen {
			continue
		}
		t := a.sent[i]
		if a.routing(i, k, t) {
			cr.RoutingErrors++
			errs.Routing++
			continue
		}
		b.offered = append(b.offered, t)
		answered := t + time.Duration(a.took[i])*time.Microsecond
		b.answered = append(b.answered, answered)
		b.spans = append(b.spans, span{sent: t, answered: answered})
		b.scheduled = append(b.scheduled, a.s.Requests[i].At) // in order: indexes ascend
		fault := a.inFault(t)
		zone := a.zoneOf(i)
		if zone >= 0 {
			b.zone.add(zone, k, span{sent: t, answered: answered}, fault)
		}
		switch k {
		case accepted:
			cr.Accepted++
			b.accepted = append(b.accepted, t)
			b.acceptedAnswered = append(b.acceptedAnswered, answered)
			b.acceptedSpans = append(b.acceptedSpans, span{sent: t, answered: answered})
		case rejected:
			cr.Rejected++
			b.rejected = append(b.rejected, rejection{sent: t, answered: answered, zone: zone})
			if fault {
				cr.RejectsInFault++
			}
		default:
			cr.Errors++
			addError(errs, k)
			if fault {
				cr.ErrorsInFault++
			} else {
				cr.ErrorsOutsideFault++
			}
		}
	}
	cr.Offered = len(b.offered)
	// Sends are nearly in order already; sorting them is cheap.
	slices.Sort(b.offered)
	slices.Sort(b.answered)
	slices.Sort(b.accepted)
	slices.Sort(b.acceptedAnswered)
	cr.BusiestOffered = Busiest(b.offered, cl.Window)
	cr.BusiestAccepted = Busiest(b.accepted, cl.Window)
	cr.BusiestScheduled = Busiest(b.scheduled, cl.Window)
	cr.OverLimit = cr.BusiestOffered > cl.Limit && cr.BusiestScheduled > cl.Limit
	if cl.Limit > 0 {
		cr.Overshoot = float64(cr.BusiestAccepted) / float64(cl.Limit)
	} else {
		cr.Overshoot = math.Inf(1)
	}
	cr.BusiestArrived = busiestArrived(b.acceptedSpans, cl.Window, &b.arrival)
	if cl.Limit > 0 {
		cr.OvershootArrival = float64(cr.BusiestArrived) / float64(cl.Limit)
	} else {
		cr.OvershootArrival = math.Inf(1)
	}
	if cl.Limit > 0 {
		st := steadyWindows(b.offered, b.accepted, b.acceptedAnswered, cl.Window, cl.Limit, a.overlapsFault)
		cr.SteadyWindows = st.n
		cr.SteadyAt, cr.SteadyAdmitted = st.client.at, st.client.admitted
		cr.SteadyShare = float64(st.client.admitted) / float64(cl.Limit)
		cr.SteadyAtArrival, cr.SteadyAdmittedArrival = st.arrival.at, st.arrival.admitted
		cr.SteadyShareArrival = float64(st.arrival.admitted) / float64(cl.Limit)
	}
	cr.FalseRejects = unearned(b.offered, b.answered, b.rejected, cl.Window, cl.Limit, b.zone)
	b.zone.end(cr, cl.Window, DefaultMinShare)
	slices.SortFunc(b.spans, bySent)
	cr.FalseRejectsSent = unearnedSent(b.spans, b.rejected, cl.Window, cl.Limit, skew)
	return cr
}

// add sums a client's account into the run's.
func (r *Report) add(cr result.ClientReport) {
	r.Accepted += cr.Accepted
	r.Rejected += cr.Rejected
	r.ErrorsInFault += cr.ErrorsInFault
	r.ErrorsOutsideFault += cr.ErrorsOutsideFault
	r.RejectsInFault += cr.RejectsInFault
	r.RoutingErrors += cr.RoutingErrors
	r.FalseRejects += cr.FalseRejects
	if cr.FalseRejects > 0 {
		r.FalseRejectClients++
	}
	r.FalseRejectsSent += cr.FalseRejectsSent
	if cr.FalseRejectsSent > 0 {
		r.FalseRejectSentClients++
	}
	if cr.OverLimit {
		r.OverLimitClients++
	}
	if cr.Overshoot > r.MaxOvershoot {
		r.MaxOvershoot, r.MaxOvershootClient = cr.Overshoot, cr.ID
	}
	if cr.OvershootArrival > r.OvershootArrival {
		r.OvershootArrival, r.OvershootArrivalClient = cr.OvershootArrival, cr.ID
	}
	if r.Exact != "" {
		if cr.OvershootExact > r.OvershootExact {
			r.OvershootExact, r.OvershootExactClient = cr.OvershootExact, cr.ID
		}
		r.FalseRejectsExact += cr.FalseRejectsExact
		if cr.FalseRejectsExact > 0 {
			r.FalseRejectExactClients++
		}
	}
}

// tookMicros is a latency in whole µs, rounded up (an answer is never taken to come back
// before it did), 0 for none, at most about 71 minutes.
func tookMicros(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(min((d+time.Microsecond-1)/time.Microsecond, math.MaxUint32))
}

// rejection is a rejected request: when it was sent and when its answer came back.
type rejection struct {
	sent, answered time.Duration
	zone           int8 // the zone of the replica that rejected it; -1 without zones
}

// unearned counts the rejections rej (any order) for which the client's requests that may
// have reached the limiter within the window-long interval before the rejection, (t−window,
// t], or while it was in flight number at most limit. A limiter decides on arrival, which
// the harness knows only to lie between a request's send and its answer: requests the
// client sent while the rejected one was in flight may have reached the limiter first
// (concurrent requests to several replicas are decided in the order they arrive), and a
// request answered after t−window may have reached it after t−window (one held up on its
// way, such as the first requests to a fleet just started: up to 160 ms on 2 cores) though
// sent before. A limiter that counted them did not reject a client within its limit. sent
// and answered are the client's send and answer times, each sorted.
func unearned(sent, answered []time.Duration, rej []rejection, window time.Duration, limit int, zones *zoneTally) int {
	n := 0
	for _, r := range rej {
		hi, _ := slices.BinarySearch(sent, r.answered+1)        // sent at or before the answer
		lo, _ := slices.BinarySearch(answered, r.sent-window+1) // answered at or before t−window
		if hi-lo <= limit {
			n++
			zones.falseReject(r.zone)
		}
	}
	return n
}
