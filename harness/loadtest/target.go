package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/limiters"
)

// BuiltinTarget is what --target names the built-in replica by, so that one run can put it
// beside target files (make loadtest-peers).
const BuiltinTarget = "replica"

// sut is the system under test of a scenario: the built-in replica (t nil) or the limiter
// a target file describes.
type sut struct {
	t *target.Target
}

// forTarget is the run's config as a target's scenarios use it: the documents' patterns are
// laid over the target's declared window, so the time scale is that window over the
// documents' 60 s (a target with a 60 s window runs at the documents' own time), and the
// fleet is as many replicas as the file starts. The generator's lateness tolerance follows
// the time scale unless the command line set one (askedLateness > 0).
func (c Config) forTarget(t *target.Target, askedLateness time.Duration) Config {
	c.exactClock = sut{t: t}.exactClock()
	if t == nil {
		return c
	}
	c.killedNode = t.Faults.KilledNode
	c.Spec.TimeScale = float64(t.Window()) / float64(limiters.DefaultWindow)
	c.Spec.Replicas = t.Start.Replicas
	if c.Zones.IsZero() {
		c.Zones = t.Topology
	}
	c.Gates.LatenessP99 = askedLateness
	c.Gates.LatenessP99 = c.latenessTolerance()
	return c
}

// targetScenarios are a target's scenarios: the documents' traffic, and with failOpen its
// fault scenarios (targetFaults): the store's where the harness runs it, a killed node where
// it starts several.
func targetScenarios(t *target.Target, gated, failOpen, zoned bool) []result.Scenario {
	a := t.Algorithm
	out := []result.Scenario{{Name: t.Name, Algorithm: a, Target: t.Name, Gated: gated}}
	if failOpen {
		for _, f := range targetFaults(t, zoned) {
			out = append(out, result.Scenario{Name: t.Name + "/" + f, Algorithm: a, Fault: f, Target: t.Name, Gated: gated})
		}
	}
	return out
}

// classes are the client classes whose probes the schedule carries: the built-in replica's
// one, or the target file's (their windows are the time scale's, see forTarget).
func (s sut) classes() []schedule.Class {
	if s.t == nil {
		return schedule.DefaultClasses()
	}
	out := make([]schedule.Class, len(s.t.Classes))
	for i, c := range s.t.Classes {
		out[i] = schedule.Class{Name: c.Name, Prefix: c.Prefix, Limit: c.Limit}
	}
	return out
}

// spec is the fleet a scenario starts.
func (s sut) spec(cfg Config, sc result.Scenario) fleet.Spec {
	if s.t == nil {
		window := cfg.Spec.Window()
		rules := RulesYAML(limiters.Algorithm(sc.Algorithm), window)
		if cfg.Rules != nil {
			rules = cfg.Rules
		}
		spec := fleet.Spec{
			Replicas: cfg.Spec.Replicas, Mode: limiters.Mode(sc.Mode), Design: limiters.Design(sc.Design), Rules: rules,
			SyncInterval: cfg.scaled(cfg.SyncInterval), StoreTimeout: cfg.StoreTimeout, Network: cfg.Network,
			Store: cfg.Store, ClusterNodeTimeout: cfg.ClusterNodeTimeout, StoreCPU: cfg.StoreCPU, StoreProxy: sc.Fault == result.FaultSlow && cfg.Zones.IsZero(),
			Zones: cfg.Zones,
		}
		return spec
	}
	start := s.t.Start
	if start.Kind == target.StartProcess && !filepath.IsAbs(start.Command[0]) && strings.ContainsRune(start.Command[0], '/') {
		start.Command = append([]string{filepath.Join(s.t.Dir, start.Command[0])}, start.Command[1:]...)
		if abs, err := filepath.Abs(start.Command[0]); err == nil {
			start.Command[0] = abs
		}
	}
	return fleet.Spec{Replicas: start.Replicas, Network: cfg.Network, Custom: &start, StoreProxy: sc.Fault == result.FaultSlow && cfg.Zones.IsZero(),
		NoStore: !s.t.Store.Managed, RecordBackend: s.t.Clock.Backend, Zones: cfg.Zones}
}

// replicaDecidedAt is the header in which the built-in replica says when it decided a
// request (targets/replica.DecidedAtHeader).
const replicaDecidedAt = "X-RateLimit-Decided-At"

// exactClock is the exact clock the system gives (result.ClockDecision, ClockBackend; empty:
// none): the built-in replica says when it decided; a target file says what it gives.
func (s sut) exactClock() string {
	switch {
	case s.t == nil, s.t.Clock.DecidedAt != "":
		return result.ClockDecision
	case s.t.Clock.Backend:
		return result.ClockBackend
	}
	return ""
}

// decidedHeader is the header the system's answers say when they were decided in; empty
// for none.
func (s sut) decidedHeader() string {
	if s.t == nil {
		return replicaDecidedAt
	}
	return s.t.Clock.DecidedAt
}

// start brings the system up: a fleet, or for a url target the address it already answers on.
func (s sut) start(ctx context.Context, provider fleet.Provider, spec fleet.Spec) (fleet.Fleet, error) {
	if s.t == nil || s.t.Start.Kind != target.StartURL {
		return provider.Start(ctx, spec)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := fleet.HealthAt(wctx, s.t.Start.URL, s.t.Start.Health)
		if err == nil {
			break
		}
		select {
		case <-wctx.Done():
			return nil, fmt.Errorf("target %s at %s is not healthy: %w", s.t.Name, s.t.Start.URL, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return urlFleet{t: s.t}, nil
}

// storeAddr is where the store's command counts are read; "" where the target keeps its
// counters to itself.
func (s sut) storeAddr(fl fleet.Fleet) string {
	switch {
	case s.t == nil || s.t.Store.Managed:
		return fl.RedisAddr()
	default:
		return s.t.Store.Redis
	}
}

// scriptCommands are the commands the system's scripts run inside the store, which count as
// store work (ops) but not as round trips (touches): the built-in replica's, or those the
// target file lists.
func (s sut) scriptCommands() commandstats.Set {
	if s.t == nil {
		return scriptInternal
	}
	return commandstats.NewSet(s.t.Store.Scripts...)
}

// options are how the traffic names the client and what else each request carries.
func (s sut) options(sched *schedule.Schedule) traffic.Options {
	if s.t == nil {
		return traffic.Options{DecidedHeader: replicaDecidedAt}
	}
	r := s.t.Request
	opts := traffic.Options{Path: r.Path, ClientHeader: r.ClientHeader, Timeout: r.Timeout, DecidedHeader: s.t.Clock.DecidedAt}
	if s.t.Responses.JSON != nil {
		opts.Status = s.judge
	}
	if r.ClientHeader != "" && r.Method == http.MethodGet && len(r.Headers) == 0 {
		return opts
	}
	param := url.QueryEscape(r.ClientQuery)
	opts.Shape = func(i int, req *http.Request) {
		id := sched.Clients[sched.Requests[i].Client].ID
		req.Method = r.Method
		if r.ClientHeader == "" {
			req.Header.Del(traffic.DefaultClientHeader)
		}
		for k, v := range r.Headers {
			req.Header.Set(k, v)
		}
		if param != "" {
			req.URL.RawQuery += "&" + param + "=" + url.QueryEscape(id)
		}
		if r.Body != "" {
			b := r.BodyFor(id)
			req.Body = io.NopCloser(bytes.NewReader(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
			req.ContentLength = int64(len(b))
			if req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", "application/json")
			}
		}
	}
	return opts
}

// status turns a target's status into the harness's own: 200 accepted, 429 rejected, and
// any other status an error, counted with the 5xx (a status below 500 becomes 500), so that
// every check judges a target by its declared meanings. The built-in replica's statuses
// are the harness's already.
func (s sut) status(code uint16) uint16 {
	if s.t == nil || code == 0 || s.t.Responses.JSON != nil {
		return code // a JSON rule's verdict was made as the body was read (judge)
	}
	return uint16(harnessStatus(s.t.Responses.Of(int(code)), int(code)))
}

// judge is the harness's status for a target that says its decision in the body (a JSON
// rule), from the status and the body as the response is read.
func (s sut) judge(code int, body []byte) int {
	return harnessStatus(s.t.Responses.Decide(code, body), code)
}

// harnessStatus is the harness's own status for a verdict on a response with status code.
func harnessStatus(v target.Verdict, code int) int {
	switch v {
	case target.Accepted:
		return http.StatusOK
	case target.Rejected:
		return http.StatusTooManyRequests
	}
	if code >= 500 {
		return code
	}
	return http.StatusInternalServerError
}

// schedule is a scenario's traffic: the documents' probe clients for every class (their
// IDs start with the class's prefix) plus the background population in the default class,
// each request to a replica drawn from the seeded generator.
func (s sut) schedule(cfg Config) (schedule.Schedule, error) {
	if cfg.Schedule != nil {
		return cfg.replayed()
	}
	return schedule.Build(cfg.Spec, s.classes())
}

// TargetDriver is how a load test runs a target file's limiter, for a caller that sends its
// own schedules (harness bench --slice): the fleet spec that starts it as a scenario does,
// each request's shape, its statuses turned into the harness's 200 and 429, and the commands
// its scripts run inside the store.
type TargetDriver struct {
	Spec    fleet.Spec
	Traffic func(sched *schedule.Schedule) traffic.Options
	Status  func(code uint16) uint16
	Scripts commandstats.Set
}

// DriveTarget is t's driver on network; a url target, which the harness does not start,
// has none.
func DriveTarget(t *target.Target, network string) (TargetDriver, error) {
	if t.Start.Kind == target.StartURL {
		return TargetDriver{}, fmt.Errorf("target %s is already running at %s (start: url): the harness cannot start it on a fleet of its own", t.Name, t.Start.URL)
	}
	s := sut{t: t}
	return TargetDriver{Spec: s.spec(Config{Network: network}, result.Scenario{}), Traffic: s.options, Status: s.status, Scripts: s.scriptCommands()}, nil
}

// urlFleet is a target that already runs: one address, no members the harness can stop.
type urlFleet struct{ t *target.Target }

var errNotStarted = errors.New("the target was not started by the harness (start: url), so it cannot stop, pause or restart it")

func (u urlFleet) Conditions() result.Conditions {
	return result.Conditions{Provider: "url", Network: "loopback", Replicas: 1, Target: u.t.Name}
}
func (u urlFleet) RedisAddr() string                  { return u.t.Store.Redis }
func (u urlFleet) ReplicaURLs() []string              { return []string{u.t.Start.URL} }
func (u urlFleet) Stop(context.Context, string) error { return errNotStarted }
func (u urlFleet) Kill(context.Context, string) error { return errNotStarted }
func (u urlFleet) SlowStore(context.Context, time.Duration) error {
	return errNotStarted
}
func (u urlFleet) SlowLink(context.Context, string, time.Duration) error { return errNotStarted }
func (u urlFleet) CutLink(context.Context, string, string) error         { return errNotStarted }
func (u urlFleet) Start(context.Context, string) error                   { return errNotStarted }
func (u urlFleet) Pause(context.Context, string) error                   { return errNotStarted }
func (u urlFleet) Unpause(context.Context, string) error                 { return errNotStarted }
func (u urlFleet) Restart(context.Context, string) error                 { return errNotStarted }
func (u urlFleet) Terminate(context.Context) error                       { return nil }

// run is one scenario on one system under test.
type run struct {
	sc  result.Scenario
	sys sut
}

// runs lists every scenario of every target in order: the first target gated, the others
// comparisons beside it.
func (c Config) runs() []run {
	targets := c.Targets
	if len(targets) == 0 {
		targets = []*target.Target{nil}
	}
	if c.Schedule != nil {
		return c.replayRuns(targets)
	}
	var out []run
	for k, t := range targets {
		if t == nil {
			for _, sc := range c.scenarios() {
				sc.Gated = sc.Gated && k == 0
				if c.wantsFault(sc.Fault) {
					out = append(out, run{sc: sc})
				}
			}
			continue
		}
		for _, sc := range targetScenarios(t, k == 0, c.FailOpen, !c.Zones.IsZero()) {
			if c.wantsFault(sc.Fault) {
				out = append(out, run{sc: sc, sys: sut{t: t}})
			}
		}
	}
	return out
}

// WritePeers prints the systems under test side by side when a run has more than the
// built-in design, or a target file's: overshoot at the boundary burst and at worst, false
// rejects, p99, store commands per request, and what clients saw in each fault scenario.
func WritePeers(w io.Writer, s result.Summary) {
	rows := result.PeerTable(s.Scenarios)
	targeted := false
	for _, sc := range s.Scenarios {
		targeted = targeted || sc.Target != ""
	}
	if !targeted || len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSystems side by side (the first is gated)\n")
	fmt.Fprintf(w, "%-36s %7s %9s %9s %-26s %6s %9s %9s %9s  %s\n", "system", "window", "boundary", "worst", "worst client", "false", "p99", "store/req", "ops/req", "verdict")
	for _, r := range rows {
		// A system without a store has no store figures: "no store", as the report says, not a
		// measured 0.000.
		store, ops := fmt.Sprintf("%.3f", r.StorePerRequest), fmt.Sprintf("%.3f", r.StoreOpsPerRequest)
		if r.NoStore {
			store, ops = "no store", "-"
		}
		if r.Zoned && !r.Unzoned { // its figures are the zone lines': none were measured without a topology
			fmt.Fprintf(w, "%-36s %s  %s\n", r.System, "only through zones", r.Verdict())
		} else {
			fmt.Fprintf(w, "%-36s %7s %8.3fx %8.3fx %-26s %6d %9v %9s %9s  %s\n", r.System, r.Window, r.BoundaryOvershoot, r.MaxOvershoot, r.WorstClient,
				r.FalseRejects, r.P99.Round(10*time.Microsecond), store, ops, r.Verdict())
		}
		for _, c := range r.FaultColumns() {
			fmt.Fprintf(w, "%-36s %-16s %s\n", "", c.Name+":", c.Cell(r))
		}
		for _, c := range r.ZoneColumns() {
			fmt.Fprintf(w, "%-36s %-16s %s\n", "", c.Name+":", c.Cell(r))
		}
	}
}
