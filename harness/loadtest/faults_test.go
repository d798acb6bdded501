package loadtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fault"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/traffic"
)

func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"all"}, "store-stop store-pause store-slow store-restart replica-kill partition partition-blackhole link-slow flap"},
		{[]string{"partition", "flap"}, "partition flap"},
		{[]string{"store-slow", "replica-kill"}, "store-slow replica-kill"},
		{[]string{"store-melt"}, "error"},
	} {
		got, err := ParseFaults(c.in)
		s := strings.Join(got, " ")
		if err != nil {
			s = "error"
		}
		if s != c.want {
			t.Errorf("ParseFaults(%v) = %q (%v), want %q", c.in, s, err, c.want)
		}
	}
}

// Each target gets the faults it can have: a store's where the harness runs one, a node's
// where it starts several.
func TestTargetFaults(t *testing.T) {
	withStart := func(start, extra string) *target.Target {
		return mustTarget(t, strings.Replace(targetHead, `start: {url: "http://127.0.0.1:1"}`, start, 1)+"request: {client: {header: X}}\n"+extra)
	}
	peered := `start: {process: {command: [p, "{{listen}}"], files: [{path: c, content: "peer {{each.peer}}"}]}, replicas: 4}`
	for _, c := range []struct {
		name  string
		t     *target.Target
		zoned bool
		want  string
	}{
		{"peers without a store", withStart("start: {docker: {image: i}, replicas: 8}", ""), false, "replica-kill"},
		{"peers that find each other alone, on a topology", withStart("start: {docker: {image: i}, replicas: 8}", ""), true, "replica-kill"},
		{"peers told where the others are, on a topology", withStart(peered, ""), true, "replica-kill partition partition-blackhole link-slow flap"},
		{"peers told where the others are, without one", withStart(peered, ""), false, "replica-kill"},
		{"peers that announce the name they are given (gubernator), on a topology",
			withStart(`start: {docker: {image: i, env: {ADV: "{{peer_name}}:{{peer_port}}"}}, replicas: 8}`, ""), true,
			"replica-kill partition partition-blackhole link-slow flap"},
		{"nodes on a managed store, on a topology", withStart("start: {docker: {image: i}, replicas: 2}", "store: {redis: managed}\n"), true,
			"store-stop store-pause store-slow store-restart replica-kill partition partition-blackhole link-slow flap"},
		{"one node, a managed store", withStart("start: {docker: {image: i}}", "store: {redis: managed}\n"), false, "store-stop store-pause store-slow store-restart"},
		{"nodes on a managed store", withStart("start: {docker: {image: i}, replicas: 2}", "store: {redis: managed}\n"), false,
			"store-stop store-pause store-slow store-restart replica-kill"},
		{"a url target", withStart(`start: {url: "http://127.0.0.1:1"}`, "store: {redis: \"127.0.0.1:6379\"}\n"), true, ""},
	} {
		if got := strings.Join(targetFaults(c.t, c.zoned), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The plan times every fault inside the second window, clear of the boundary burst; a
// store-restart is started again at once; store-slow's delay is twice the store timeout or
// the target's own; replica-kill's schedule goes around the last replica from just before
// the kill to the recovery grace after its start.
func TestPlanFault(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Spec.TimeScale = 0.2 // window 12 s: the fault from 14.4 s, the outage 6 s
	slowTarget := mustTarget(t, strings.Replace(targetHead, `start: {url: "http://127.0.0.1:1"}`, "start: {docker: {image: i}, replicas: 2}", 1)+
		"request: {client: {header: X}}\nstore: {redis: managed}\nfaults: {store_delay: 300ms, killed_node: limiter}\n")
	for _, c := range []struct {
		fault string
		t     *target.Target
		want  fault.Plan
	}{
		{result.FaultStop, nil, fault.Plan{Fault: result.FaultStop, Member: "redis", At: 14400 * time.Millisecond, Until: 20400 * time.Millisecond}},
		{result.FaultSlow, nil, fault.Plan{Fault: result.FaultSlow, Member: "redis", At: 14400 * time.Millisecond, Until: 20400 * time.Millisecond, Delay: 100 * time.Millisecond}},
		{result.FaultSlow, slowTarget, fault.Plan{Fault: result.FaultSlow, Member: "redis", At: 14400 * time.Millisecond, Until: 20400 * time.Millisecond, Delay: 300 * time.Millisecond}},
		{result.FaultRestart, nil, fault.Plan{Fault: result.FaultRestart, Member: "redis", At: 14400 * time.Millisecond, Until: 14400 * time.Millisecond}},
		{result.FaultKill, nil, fault.Plan{Fault: result.FaultKill, Member: "replica-7", At: 14400 * time.Millisecond, Until: 20400 * time.Millisecond}},
	} {
		got := cfg.planFault(result.Scenario{Fault: c.fault}, c.t)
		if got == nil || *got != c.want {
			t.Errorf("%s: plan %+v, want %+v", c.fault, got, c.want)
		}
		if err := got.Check(); err != nil {
			t.Errorf("%s: %v", c.fault, err)
		}
	}
	if cfg.planFault(result.Scenario{}, nil) != nil || cfg.routedAway(result.Scenario{Fault: result.FaultStop}, nil) != nil {
		t.Error("a plan or a route around for a scenario without a node fault")
	}
	if a := cfg.routedAway(result.Scenario{Fault: result.FaultKill}, nil); a == nil || *a != (schedule.Away{Replica: 7, From: 14400*time.Millisecond - fault.Drain, To: 22400 * time.Millisecond}) {
		t.Errorf("route around %+v", a)
	}
	if cfg.killedNodeRefusals() != target.BlameHarness || cfg.forTarget(slowTarget, 0).killedNodeRefusals() != target.BlameLimiter {
		t.Error("who answers for a refused connection to a killed node: the harness by default, the limiter where the target says")
	}
	out := result.Interval{From: 14 * time.Second, To: 15 * time.Second}
	if got := cfg.recoveredAt(result.FaultStop, out); got != 17*time.Second {
		t.Errorf("store-stop recovered at %v, want 17s (2 s grace)", got)
	}
	if got := cfg.recoveredAt(result.FaultRestart, out); got != 17*time.Second+40*time.Millisecond {
		t.Errorf("store-restart recovered at %v, want 17.04s (2 s grace and one 40 ms sync interval)", got)
	}
}

func TestFaultLine(t *testing.T) {
	kill := result.ScenarioResult{FaultTiming: &result.FaultTiming{Fault: result.FaultKill, Member: "replica-7",
		Planned: result.Interval{From: 14400 * time.Millisecond, To: 20400 * time.Millisecond}, Began: 14401 * time.Millisecond, Back: 20950 * time.Millisecond,
		Routed: &result.Interval{From: 14300 * time.Millisecond, To: 22400 * time.Millisecond}}, Errors: result.Errors{Routing: 2}}
	restart := result.ScenarioResult{FaultTiming: &result.FaultTiming{Fault: result.FaultRestart, Member: "redis",
		Planned: result.Interval{From: 14400 * time.Millisecond, To: 14400 * time.Millisecond}, Began: 14402 * time.Millisecond, Error: "bring redis back: it failed"}}
	slow := result.ScenarioResult{FaultTiming: &result.FaultTiming{Fault: result.FaultSlow, Member: "redis", Delay: 100 * time.Millisecond,
		Planned: result.Interval{From: 14400 * time.Millisecond, To: 20400 * time.Millisecond}, Began: 14400 * time.Millisecond, Back: 20401 * time.Millisecond}}
	for _, c := range []struct {
		r    result.ScenarioResult
		want string
	}{
		{result.ScenarioResult{}, ""},
		{kill, "replica-kill on replica-7: planned 14.4s..20.4s; down 14.401s..20.95s; its requests sent to the others 14.3s..22.4s, 2 routing errors (the harness's, in no other count)"},
		{restart, "store-restart on redis: planned at 14.4s, started again at once; down from 14.402s, never back; bring redis back: it failed"},
		{slow, "store-slow on redis: planned 14.4s..20.4s; down 14.4s..20.401s; every store reply +100ms"},
	} {
		if got := faultLine(c.r); got != c.want {
			t.Errorf("fault line\n got %q\nwant %q", got, c.want)
		}
	}
}

// nodeFleet is a fleet whose members come and go on request, and nothing else.
type nodeFleet struct{ fleet.Fleet }

func (nodeFleet) Kill(context.Context, string) error  { return nil }
func (nodeFleet) Start(context.Context, string) error { return nil }

// A replica-kill measured: the timing with the route-around window, the fault's window from
// the kill to the return plus the grace, and a refused connection to the dead replica as
// the harness's routing error, one to a live replica as the limiter's.
func TestMeasuredFault(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Spec.Replicas, cfg.RecoveryGrace = 2, 50*time.Millisecond
	sc := result.Scenario{Fault: result.FaultKill}
	plan := fault.Plan{Fault: result.FaultKill, Member: fault.Member(result.FaultKill, 2), At: 20 * time.Millisecond, Until: 60 * time.Millisecond}
	cfg.Spec.Away = &schedule.Away{Replica: 1, From: 0, To: 110 * time.Millisecond}
	s := schedule.Schedule{Clients: []schedule.Client{{ID: "c", Limit: 10, Window: time.Second}}, Duration: time.Second,
		Requests: []schedule.Request{{At: 30 * time.Millisecond, Replica: 1}, {At: 40 * time.Millisecond, Replica: 0}, {At: 500 * time.Millisecond, Replica: 1}}}
	acc, err := accounting.New(&s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, sent := range []time.Duration{30 * time.Millisecond, 40 * time.Millisecond, 500 * time.Millisecond} {
		if err := acc.Add(traffic.Outcome{Index: i, Err: traffic.ErrConnection, Sent: sent}); err != nil {
			t.Fatal(err)
		}
	}
	a := fault.Arm(context.Background(), nodeFleet{}, plan, time.Now(), nil)
	res := result.ScenarioResult{Scenario: sc, Duration: time.Second}
	outage, err := measuredFault(&res, acc, a, cfg, sc)
	if err != nil {
		t.Fatal(err)
	}
	f := res.FaultTiming
	if f == nil || f.Routed == nil || *f.Routed != (result.Interval{To: 110 * time.Millisecond}) || outage.From < 20*time.Millisecond || outage.To < 60*time.Millisecond {
		t.Fatalf("timing %+v, outage %+v", f, outage)
	}
	if len(res.Faults) != 1 || res.Faults[0] != (result.Interval{From: outage.From, To: outage.To + 50*time.Millisecond}) {
		t.Errorf("windows %+v, want the outage %+v and the 50 ms grace", res.Faults, outage)
	}
	rep := acc.Report()
	if rep.RoutingErrors != 1 || rep.Errors.Connection != 2 || rep.ErrorsInFault != 1 || rep.ErrorsOutsideFault != 1 {
		t.Errorf("routing %d, connection %d, in the fault %d, outside %d: want 1, 2, 1, 1", rep.RoutingErrors, rep.Errors.Connection, rep.ErrorsInFault, rep.ErrorsOutsideFault)
	}
}

// On a topology the fault scenarios add the link faults, each on the farthest zone with its
// replicas as the cut nodes; without one, asking for link faults alone is the user's error.
func TestZoneFaultScenarios(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Matrix = false
	var err error
	if cfg.Zones, err = topology.Parse("near:4:0.5ms,far:4:40ms±10ms"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range cfg.runs() {
		names = append(names, r.sc.Name)
	}
	want := "sliding_window/delayed sliding_window/delayed/store-stop sliding_window/delayed/store-pause sliding_window/delayed/store-slow " +
		"sliding_window/delayed/store-restart sliding_window/delayed/replica-kill sliding_window/delayed/partition sliding_window/delayed/partition-blackhole " +
		"sliding_window/delayed/link-slow sliding_window/delayed/flap"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("scenarios\n got %s\nwant %s", got, want)
	}
	for _, f := range ZoneFaults {
		p := cfg.planFault(result.Scenario{Fault: f}, nil)
		if p.Zone != "far" || p.Member != "zone-far" || p.Check() != nil || (f == result.FaultLinkSlow) != (p.Delay == LinkSlowDelay) {
			t.Errorf("%s: plan %+v (%v)", f, *p, p.Check())
		}
		if j := cfg.judging(result.Scenario{Fault: f}, result.Interval{}); j.CutNodes != 4 || j.LinkRTT != 100*time.Millisecond {
			t.Errorf("%s: judged with %d cut nodes, link round trip %v; want 4 and 100ms", f, j.CutNodes, j.LinkRTT)
		}
	}
	if spec := (sut{}).spec(cfg, result.Scenario{Fault: result.FaultSlow, Mode: "delayed"}); spec.StoreProxy || spec.Zones.String() != cfg.Zones.String() {
		t.Errorf("store-slow on zones: store proxy %v, zones %s: want the zone links slowed, no proxy", spec.StoreProxy, spec.Zones)
	}

	cfg.Zones = topology.Topology{}
	cfg.Faults = []string{result.FaultPartition}
	if err := cfg.check(); err == nil || !strings.Contains(err.Error(), "declare the zones with --zones") {
		t.Errorf("partition without zones: %v", err)
	}
	cfg.Faults, _ = ParseFaults([]string{"all"})
	if err := cfg.check(); err != nil {
		t.Errorf("all faults without zones: %v", err)
	}
	for _, r := range cfg.runs() {
		if result.LinkFault(r.sc.Fault) {
			t.Errorf("%s runs without zones", r.sc.Name)
		}
	}
}
