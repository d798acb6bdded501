// Package traffic sends exactly a schedule at limiter replicas with Vegeta
// as a library, and attributes every response to the schedule entry it
// answers. It measures; judging is the accounting package's job.
package traffic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// ErrKind says why a request got no HTTP status.
type ErrKind uint8

// Kinds of transport failure. A response with a status, even 5xx, is ErrNone.
const (
	ErrNone       ErrKind = iota
	ErrTimeout            // no response within Options.Timeout
	ErrConnection         // refused, reset or closed before a response
	ErrCanceled           // the run was canceled or hit its deadline while in flight
	ErrOther              // anything else; the replica URL may be malformed
)

var errKindNames = [...]string{"", "timeout", "connection", "canceled", "other"}

// String is the kind's name as written in outcome files; ErrNone is "".
func (k ErrKind) String() string {
	if int(k) < len(errKindNames) {
		return errKindNames[k]
	}
	return fmt.Sprintf("ErrKind(%d)", k)
}

func parseErrKind(s string) (ErrKind, bool) {
	for k, n := range errKindNames {
		if n == s {
			return ErrKind(k), true
		}
	}
	return 0, false
}

// classify names a transport error from its message; Vegeta keeps only the
// message of the error it got.
func classify(msg string) ErrKind {
	switch {
	case strings.Contains(msg, "context canceled"):
		return ErrCanceled
	case strings.Contains(msg, "Client.Timeout"), strings.Contains(msg, "timeout"),
		strings.Contains(msg, "deadline exceeded"):
		return ErrTimeout
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"), strings.Contains(msg, "EOF"),
		strings.Contains(msg, "no such host"), strings.Contains(msg, "unreachable"),
		strings.Contains(msg, "dial "):
		return ErrConnection
	}
	return ErrOther
}

// Outcome is what happened to one scheduled request. Times are offsets from
// Summary.Start, the same clock as schedule.Request.At.
type Outcome struct {
	Index    int           // index into Schedule.Requests
	Code     uint16        // HTTP status; 0 when Err says why there is none
	Err      ErrKind       // transport failure, ErrNone when there is a status
	Sent     time.Duration // when the request was sent
	Latency  time.Duration // from sending to the end of the response or failure
	Lateness time.Duration // Sent − At: how far behind its schedule the generator sent it
	// DecidedAt is when the limiter says it decided the request, on its own clock
	// (Options.DecidedHeader), as an offset from Summary.Start; Decided says whether it said.
	DecidedAt time.Duration
	Decided   bool
}

// Defaults for Options' zero values.
const (
	DefaultTimeout      = 5 * time.Second
	DefaultGrace        = 5 * time.Second
	DefaultPath         = "/check"
	DefaultClientHeader = "X-Client-ID"
	DefaultWorkers      = 64
)

// Options configure the attacker. Zero values take the defaults above;
// connection counts are per replica.
type Options struct {
	Workers        uint64        // workers started up front; more are added when all are busy
	MaxWorkers     uint64        // cap on workers; 0 is no cap
	Connections    int           // idle connections kept per replica; 0 is Vegeta's 10,000
	MaxConnections int           // connections per replica; 0 is what the open-file limit allows (connectionCap)
	NoKeepAlive    bool          // a new connection for every request
	Timeout        time.Duration // per request: to connect, then from the request written to its response's headers
	// Grace is how far behind the schedule the generator may fall: pacing
	// stops at the last request's offset plus Grace, and in-flight requests
	// are canceled Timeout after that.
	Grace        time.Duration
	Path         string // request path on each replica
	ClientHeader string // header that names the client
	// Align starts the run at the next instant that is a whole multiple of
	// Align since the Unix epoch; 0 starts at once. The limiters count in
	// windows and slices that are multiples of their length since the epoch,
	// so aligning to the scaled window puts the schedule's window edges on
	// the replicas': the boundary burst then straddles a real edge.
	Align time.Duration
	// Start, when set, is the run's origin: request k is due at Start + At and
	// every offset of the run is measured from it. Generators given the same
	// Start send one schedule on one clock (shards); Align is then ignored.
	Start time.Time
	// OnStart, when set, is called with the origin once the wait for it is
	// over, before the first request: the caller times what it does to the
	// system under test (faults, counters) on the outcomes' own clock. An
	// error stops the run before anything is sent.
	OnStart func(origin time.Time) error
	// Body, when set, makes every request a POST whose body is Body(index), index being
	// the request's place in the schedule.
	Body func(index int) []byte
	// Shape, when set, changes each request as it is sent: index is the request's place
	// in the schedule, r a copy of the request it may change (method, URL, headers, body).
	// It is called from many goroutines.
	Shape func(index int, r *http.Request)
	// Status, when set, reads each response's body (64 KiB at most) and records
	// Status(code, body) as its status: for a target that says its decision in the body.
	// It is called from many goroutines.
	Status func(code int, body []byte) int
	// Warm, when set, is how many connections per replica the run opens before its origin
	// (warm): it sends a few rounds of that many concurrent requests naming WarmClient, so
	// that the schedule's first requests find open connections and a replica that has
	// served. An aligned origin is then the first window edge at least warmLead away. Runs
	// with Route are not warmed.
	Warm int
	// Route, when set, names each request's replica base URL as it is sent, in place of
	// urls[Replica]: for a replica set that changes while the run goes (autoscaling). The
	// urls argument may then be empty. It is called from many goroutines.
	Route func() string
	// DecidedHeader, when set, is the response header in which the limiter says when it
	// decided a request, in Unix nanoseconds on its clock (the built-in replica's
	// X-RateLimit-Decided-At): each outcome's DecidedAt.
	DecidedHeader string
}

func (o Options) withDefaults() Options {
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxWorkers == 0 {
		o.MaxWorkers = vegeta.DefaultMaxWorkers
	}
	if o.Connections == 0 {
		o.Connections = vegeta.DefaultConnections
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.ClientHeader == "" {
		o.ClientHeader = DefaultClientHeader
	}
	return o
}

// Summary is the run as a whole.
type Summary struct {
	Start        time.Time     // origin of every offset
	Scheduled    int           // requests in the schedule
	Sent         int           // outcomes delivered to the sink
	Unattributed int           // results whose URL carried no schedule index (none expected)
	LastSent     time.Duration // offset of the latest send
	AskedRate    float64       // Scheduled / schedule duration, per second
	AchievedRate float64       // see AchievedRate
	Truncated    bool          // pacing stopped before every request was sent
}

// AchievedRate is sent requests per second over the schedule's duration, or
// over the time the sending took when the generator overran it: a generator
// that keeps up achieves the asked rate, one that falls behind less.
func AchievedRate(sent int, d, lastSent time.Duration) float64 {
	span := max(d, lastSent)
	if span <= 0 {
		return 0
	}
	return float64(sent) / span.Seconds()
}

// ErrDeadline is the cause recorded when a run outlives its bound: its last answers had not
// come back by the schedule's last offset + Grace + Timeout (a generator that cannot carry the
// schedule, answers queued behind it). What came back was passed to the sink.
var ErrDeadline = errors.New("run exceeded the schedule's last offset + grace + timeout")

// Run sends s to the replicas at urls (urls[k] serves Replica k) and calls
// sink once per result, from one goroutine, in completion order. It returns
// when every request has been answered or has failed, when pacing falls more
// than Grace behind (Summary.Truncated), or when ctx is canceled (then with
// ctx's error); in-flight requests are canceled at the last offset + Grace +
// Timeout at the latest. If sink returns an error the run stops and Run
// returns it; results already in flight are not passed to sink.
func Run(ctx context.Context, s *schedule.Schedule, urls []string, opts Options, sink func(Outcome) error) (Summary, error) {
	if err := checkRun(s, urls, opts); err != nil {
		return Summary{}, err
	}
	opts = opts.withDefaults()
	if opts.MaxConnections == 0 {
		opts.MaxConnections = connectionCap(len(urls))
	}
	var last time.Duration
	if n := len(s.Requests); n > 0 {
		last = s.Requests[n-1].At
	}
	pacingLimit := last + opts.Grace
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	atk, transport := newAttacker(runCtx, opts)
	defer transport.CloseIdleConnections()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-runCtx.Done():
			atk.Stop()
		case <-stopped:
		}
	}()

	// One owner of the start: the origin is the given instant, the next aligned one or now,
	// and Run waits for it last, once everything is built, so the attack starts on it. The
	// pacer paces from the origin and every offset is measured from it; the hard deadline
	// counts from there, not from before the wait.
	start := runOrigin(opts)
	// The pacer and the targeter (every client's ID in one slice: 200,000 of them) are built
	// before the wait, so the first request leaves on the origin, not after them.
	pacer := NewPacerFrom(s, start)
	targeter := NewTargeter(s, urls, opts.Path, opts.ClientHeader)
	if opts.Route != nil {
		targeter = NewRoutedTargeter(s, opts.Route, opts.Path, opts.ClientHeader)
	}
	if opts.warms() {
		warm(ctx, transport, urls, opts.Path, opts.ClientHeader, opts.Warm, start.Add(-warmQuiet))
		// The garbage of building the schedule's targeter (200,000 clients' IDs) is collected
		// now, not by a cycle that starts on the origin and slows the first sends.
		runtime.GC()
	}
	if err := WaitUntil(ctx, start); err != nil {
		return Summary{}, err
	}
	if opts.OnStart != nil {
		if err := opts.OnStart(start); err != nil {
			return Summary{}, err
		}
	}
	pacing := pacingLimit - time.Since(start)
	if pacing <= 0 {
		return Summary{}, fmt.Errorf("the run's start %s passed %v ago, more than the schedule's last offset + grace (%v): give a start instant in the future", start.Format(time.RFC3339Nano), time.Since(start).Round(time.Millisecond), pacingLimit)
	}
	hard := time.AfterFunc(pacing+opts.Timeout+time.Second, func() { cancel(ErrDeadline) })
	defer hard.Stop()
	// No attack name: Vegeta would send it as one more header on every request.
	results := atk.Attack(targeter, pacer, pacing, "")
	return collect(ctx, runCtx, cancel, s, start, http.CanonicalHeaderKey(opts.DecidedHeader), results, sink)
}

// checkRun says why s cannot be sent at urls, if it cannot.
func checkRun(s *schedule.Schedule, urls []string, opts Options) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if need := s.Replicas(); opts.Route == nil && len(urls) < need {
		return fmt.Errorf("the schedule sends to %d replicas but %d URLs were given; give one URL per replica or reassign replicas", need, len(urls))
	}
	for _, u := range urls {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("replica URL %q must start with http:// or https://", u)
		}
	}
	return nil
}

// fdReserve is how many open files the generator leaves to the rest of the process beside its
// connections: the fleet's pipes and processes, the store's and the metrics' connections, the
// outcome files.
const fdReserve = 1024

// connectionCap is the most connections per replica the generator may hold within the
// process's open-file limit, fdReserve kept back: past the limit a new connection fails to
// dial ("socket: too many open files"), an error of the generator's own that a run would
// count against the system under test. With the cap a request that finds every connection
// busy waits for one and is answered late. 0 (no cap) where the limit is not known.
func connectionCap(replicas int) int {
	n := openFileLimit()
	if n <= 0 || replicas <= 0 {
		return 0
	}
	return max(1, (n-fdReserve)/replicas)
}

// newAttacker is the Vegeta attacker of a run and its transport, every request bound to
// runCtx.
func newAttacker(runCtx context.Context, opts Options) (*vegeta.Attacker, *http.Transport) {
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConnsPerHost: opts.Connections,
		MaxConnsPerHost:     opts.MaxConnections,
		DisableKeepAlives:   opts.NoKeepAlive,
		IdleConnTimeout:     90 * time.Second,
		// The per-request bound: the dialer's Timeout, then this from the request written
		// to the response's headers. A timer per request (context.WithTimeout) cost four
		// allocations and two locks on the run's context each; the responses are a status
		// line. Runs with request bodies keep the timer (ctxTransport).
		ResponseHeaderTimeout: opts.Timeout,
	}
	client := &http.Client{
		Transport:     withStatus(opts.Status, withShape(opts.Shape, withBody(opts.Body, ctxTransport{ctx: runCtx, timeout: bodyTimeout(opts), base: transport}))),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	atk := vegeta.NewAttacker(
		vegeta.Client(client),
		vegeta.Workers(opts.Workers),
		vegeta.MaxWorkers(opts.MaxWorkers),
		vegeta.MaxBody(0), // the status is the decision; bodies would only cost memory
	)
	return atk, transport
}

// runOrigin is the run's start: the given instant, else the next aligned instant or now,
// at least warmLead away for a run that warms (Options.warms).
func runOrigin(opts Options) time.Time {
	if !opts.Start.IsZero() {
		return opts.Start
	}
	earliest := time.Now()
	if opts.warms() {
		earliest = earliest.Add(warmLead)
	}
	if opts.Align > 0 {
		return NextAligned(earliest, opts.Align)
	}
	return earliest
}

// collect attributes every result to its schedule entry and passes it to sink, draining the
// results once sink fails (the error cancels the run), and sums the run up; its error is the
// sink's, ctx's, or the hard deadline's.
// decided names the header that carries the limiter's decision time (canonical form; empty:
// none is read).
func collect(ctx, runCtx context.Context, cancel context.CancelCauseFunc, s *schedule.Schedule, start time.Time,
	decided string, results <-chan *vegeta.Result, sink func(Outcome) error) (Summary, error) {
	sum := Summary{Scheduled: len(s.Requests), AskedRate: float64(len(s.Requests)) / s.Duration.Seconds()}
	var sinkErr error
	for res := range results {
		if sinkErr != nil {
			continue // drain so that the attacker's workers can finish
		}
		i, ok := ParseSeq(res.URL)
		if !ok || i >= len(s.Requests) {
			sum.Unattributed++
			continue
		}
		sent := res.Timestamp.Sub(start)
		o := Outcome{Index: i, Code: res.Code, Sent: sent, Latency: res.Latency, Lateness: sent - s.Requests[i].At}
		if o.Code == 0 {
			o.Err = classify(res.Error)
		}
		if decided != "" {
			o.DecidedAt, o.Decided = decidedAt(res.Headers[decided], start)
		}
		sum.Sent++
		sum.LastSent = max(sum.LastSent, sent)
		if err := sink(o); err != nil {
			sinkErr = err
			cancel(err)
		}
	}
	sum.Start = start
	sum.Truncated = sum.Sent+sum.Unattributed < sum.Scheduled
	sum.AchievedRate = AchievedRate(sum.Sent, s.Duration, sum.LastSent)
	switch {
	case sinkErr != nil:
		return sum, sinkErr
	case ctx.Err() != nil:
		return sum, ctx.Err()
	case errors.Is(context.Cause(runCtx), ErrDeadline):
		return sum, ErrDeadline
	}
	return sum, nil
}

// NextAligned is the first instant after t that is a whole multiple of align
// since the Unix epoch. It keeps t's monotonic reading.
func NextAligned(t time.Time, align time.Duration) time.Time {
	ns := t.UnixNano()
	return t.Add(time.Duration((ns/int64(align)+1)*int64(align) - ns))
}

// WaitAligned sleeps until the wall clock is a whole multiple of align since
// the Unix epoch.
func WaitAligned(ctx context.Context, align time.Duration) error {
	return WaitUntil(ctx, NextAligned(time.Now(), align))
}

// WaitUntil sleeps until t, or returns ctx's error if ctx ends first; a t in
// the past returns at once.
func WaitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ctxTransport binds every request to the run's context, so that a canceled run does not
// wait out requests stuck at a dead replica: Vegeta builds requests without a context.
// Without a body the request timeout is the transport's (the dial timeout, then
// ResponseHeaderTimeout). With timeout set, a request is bounded as a whole by a context of
// its own: a large body's write to a paused replica blocks before ResponseHeaderTimeout
// starts. http.Client's own Timeout would be lost when the request's context is replaced.
type ctxTransport struct {
	ctx     context.Context
	timeout time.Duration
	base    http.RoundTripper
}

// bodyTimeout is ctxTransport's whole-request bound: the request timeout for runs with
// bodies or a Shape (which may give a request one) or a Status (whose body is read), none
// (the transport's) for the rest.
func bodyTimeout(opts Options) time.Duration {
	if opts.Body == nil && opts.Shape == nil && opts.Status == nil {
		return 0
	}
	return opts.Timeout
}

func (t ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.base.RoundTrip(r.WithContext(t.ctx))
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.timeout)
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a request's context once its body is done with, so that ten
// million requests do not leave ten million timers behind.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// decidedAt reads a decision time header's value (Unix nanoseconds) as an offset from start;
// false when there is none or it is not a whole number.
func decidedAt(vals []string, start time.Time) (time.Duration, bool) {
	if len(vals) != 1 {
		return 0, false
	}
	ns, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil || ns <= 0 {
		return 0, false
	}
	return time.Unix(0, ns).Sub(start), true
}
