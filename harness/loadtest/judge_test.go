package loadtest

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/harness/verdict"
	"github.com/edgeproof/rlharness/limiters"
)

// A hand-made run: limit 4 per 1 s window (time scale 1/60), two probe clients, one
// request every 100 ms each, answered with the given codes.
func handMade(t *testing.T, codes map[string][]uint16) (*schedule.Schedule, []traffic.Outcome) {
	t.Helper()
	ids := []string{"probe-" + schedule.PatternBoundary, "probe-" + schedule.PatternIntermittent}
	var parts []schedule.Schedule
	for _, id := range ids {
		p := schedule.Schedule{Duration: 3 * time.Second,
			Clients: []schedule.Client{{ID: id, Limit: 4, Window: time.Second, Probe: true}}}
		for i := range codes[id] {
			p.Requests = append(p.Requests, schedule.Request{At: time.Duration(i) * 100 * time.Millisecond})
		}
		parts = append(parts, p)
	}
	s := schedule.Merge(parts...)
	var outs []traffic.Outcome
	next := map[int32]int{}
	for i, r := range s.Requests {
		code := codes[s.Clients[r.Client].ID][next[r.Client]]
		next[r.Client]++
		outs = append(outs, traffic.Outcome{Index: i, Code: code, Sent: r.At, Latency: time.Millisecond})
	}
	return &s, outs
}

func judge(t *testing.T, sc result.Scenario, s *schedule.Schedule, outs []traffic.Outcome, faults []result.Interval, edit ...func(*Config)) result.ScenarioResult {
	t.Helper()
	acc, err := accounting.New(s, faults)
	if err != nil {
		t.Fatal(err)
	}
	probes := newProbeTimes(s)
	for _, o := range outs {
		probes.add(o)
		if err := acc.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Spec.TimeScale = 1.0 / 60
	cfg.Gates.LatenessP99 = time.Second
	cfg.Gates.MinRateRatio = 0
	for _, e := range edit {
		e(&cfg)
	}
	rep := acc.Report()
	res := result.ScenarioResult{Scenario: sc}
	var outage result.Interval
	if len(faults) > 0 {
		outage = result.Interval{From: faults[0].From, To: faults[0].To - cfg.RecoveryGrace}
	}
	fillResult(&res, &rep, cfg, sc, probes, outage, accounting.NewLatency())
	return res
}

func check(t *testing.T, res result.ScenarioResult, name string) result.Check {
	t.Helper()
	for _, c := range res.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %v", name, res.Checks)
	return result.Check{}
}

func TestFixedWindowBoundaryFailsTheGateAndConfirmsTheClaim(t *testing.T) {
	// Eight accepted within 0.8 s: x2 the limit of 4.
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     {200, 200, 200, 200, 200, 200, 200, 200},
		"probe-" + schedule.PatternIntermittent: {200, 200},
	})
	res := judge(t, result.Scenario{Name: "fixed", Algorithm: string(limiters.FixedWindow), Mode: "delayed", Gated: true}, s, outs, nil)
	if c := check(t, res, "max overshoot"); c.Pass || c.Figure != 2 {
		t.Errorf("max overshoot = %v, want a failure at 2", c)
	}
	if res.Pass {
		t.Error("scenario passed with a client at 2x its limit")
	}
	if len(res.Claims) == 0 || !res.Claims[0].Confirmed {
		t.Errorf("claims = %+v, want the boundary claim confirmed", res.Claims)
	}
}

func TestTokenBucketFalseRejectIsCaught(t *testing.T) {
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     {200},
		"probe-" + schedule.PatternIntermittent: {200, 200, 429, 429}, // 4 in a window: at the limit
	})
	res := judge(t, result.Scenario{Name: "bucket", Algorithm: string(limiters.TokenBucket), Mode: "central", Gated: true}, s, outs, nil)
	if c := check(t, res, "false rejects"); c.Pass || c.Figure != 2 {
		t.Errorf("false rejects = %v, want a failure at 2", c)
	}
	if !res.Claims[0].Confirmed {
		t.Errorf("token bucket claim not confirmed: %+v", res.Claims[0])
	}
}

func TestFailOpenGates(t *testing.T) {
	// Outage [0.2 s, 0.5 s) + grace: 8 accepted during it (2x), then 3 after: within bounds.
	codes := []uint16{200, 200, 200, 200, 200, 200, 200, 200}
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     codes,
		"probe-" + schedule.PatternIntermittent: {200, 503},
	})
	grace := DefaultConfig().RecoveryGrace
	faults := []result.Interval{{From: 200 * time.Millisecond, To: 500*time.Millisecond + grace}}
	res := judge(t, result.Scenario{Name: "stop", Algorithm: string(limiters.SlidingWindow), Mode: "delayed", Fault: result.FaultStop, Gated: true}, s, outs, faults)
	if c := check(t, res, "overshoot during the outage"); !c.Pass || c.Figure != 2 || c.Threshold != 8 {
		t.Errorf("overshoot during the outage = %v, want pass at 2 <= 8", c)
	}
	if c := check(t, res, "5xx responses"); c.Pass || c.Figure != 1 {
		t.Errorf("5xx check = %v, want a failure at 1", c)
	}
	if c := check(t, res, "overshoot after recovery"); !c.Pass {
		t.Errorf("after recovery = %v, want pass (nothing accepted after the grace)", c)
	}
	if c := check(t, res, "errors while the store is away"); !c.Pass || c.Figure != 0 {
		t.Errorf("errors while the store is away = %v, want a pass at 0: the 503 at 0.1 s came before the outage", c)
	}
	for _, c := range res.Checks {
		if c.Name == "max overshoot" {
			t.Error("the 1.1x gate applies across an outage")
		}
	}
}

// A limiter that hangs while its store is away (envoy's ratelimit waits REDIS_TIMEOUT) sends
// no 5xx, but its clients time out: that is the outage the fail-open promise forbids.
func TestFailOpenGateCatchesTimeoutsDuringTheOutage(t *testing.T) {
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     {200, 200, 200, 200, 200, 200, 200, 200},
		"probe-" + schedule.PatternIntermittent: {200, 200, 200, 200},
	})
	faults := []result.Interval{{From: 200 * time.Millisecond, To: 500 * time.Millisecond}}
	timeouts := 0
	for i := range outs {
		if faults[0].Contains(outs[i].Sent) {
			outs[i].Code, outs[i].Err = 0, traffic.ErrTimeout
			timeouts++
		}
	}
	sc := result.Scenario{Name: "pause", Algorithm: string(limiters.SlidingWindow), Mode: "delayed", Fault: result.FaultPause, Gated: true}
	res := judge(t, sc, s, outs, faults)
	if c := check(t, res, "5xx responses"); !c.Pass {
		t.Errorf("5xx check = %v, want a pass: no status at all came back", c)
	}
	if c := check(t, res, "errors while the store is away"); c.Pass || c.Figure != float64(timeouts) || timeouts == 0 {
		t.Errorf("errors while the store is away = %v, want a failure at %d timeouts", c, timeouts)
	}
	if res.Pass {
		t.Error("a limiter whose clients timed out during the outage passed the fail-open gates")
	}
}

func TestClaimsOfAGeneratorBoundRunAreInconclusive(t *testing.T) {
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     {200, 200, 200, 200, 200, 200, 200, 200},
		"probe-" + schedule.PatternIntermittent: {200},
	})
	sc := result.Scenario{Name: "fixed", Algorithm: string(limiters.FixedWindow), Mode: "split"}
	res := judge(t, sc, s, outs, nil, func(c *Config) { c.Gates.MinRateRatio = 2 }) // cannot be met
	if !res.GeneratorBound {
		t.Fatal("a run below its asked rate is not generator-bound")
	}
	for _, c := range res.Claims {
		if !c.Inconclusive || c.Verdict() != "inconclusive (generator-bound)" {
			t.Errorf("claim %q judged %q on a generator-bound run", c.Text, c.Verdict())
		}
	}
	if res = judge(t, sc, s, outs, nil); res.Claims[0].Inconclusive || res.Claims[0].Verdict() != "confirmed" {
		t.Errorf("boundary claim on a faithful run: %q", res.Claims[0].Verdict())
	}
}

func TestLatenessToleranceFollowsTheTimeScale(t *testing.T) {
	tests := []struct {
		scale float64
		asked time.Duration
		want  time.Duration
	}{
		{1, 0, 100 * time.Millisecond}, // 2 % of a 5 s slice
		{0.2, 0, 20 * time.Millisecond},
		{0.1, 0, 10 * time.Millisecond},
		{0.2, 3 * time.Millisecond, 3 * time.Millisecond}, // --max-lateness wins
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Spec.TimeScale, cfg.Gates.LatenessP99 = tt.scale, tt.asked
		if got := cfg.latenessTolerance(); got != tt.want {
			t.Errorf("scale %g, asked %v: tolerance %v, want %v", tt.scale, tt.asked, got, tt.want)
		}
	}
}

// TestClaimVerdictGeneratorBound: a generator-bound run's claim is inconclusive, but a sync
// that failed is still said.
func TestClaimVerdictGeneratorBound(t *testing.T) {
	for _, tt := range []struct {
		c    result.Claim
		want string
	}{
		{result.Claim{Inconclusive: true, Confirmed: true}, "inconclusive (generator-bound)"},
		{result.Claim{Inconclusive: true}, "inconclusive (generator-bound)"},
		{result.Claim{Inconclusive: true, Why: "sync failing (3 of 9 exchanges failed)"}, "inconclusive (generator-bound; sync failing (3 of 9 exchanges failed))"},
		{result.Claim{Inconclusive: true, NotMeasured: true, Why: "no sync metrics"}, "inconclusive (generator-bound; no sync metrics)"},
	} {
		if got := tt.c.Verdict(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestSyncScraperPerSystem: the built-in replica is scraped in delayed mode, every five of
// its (scaled) intervals; a target by the names its file gives; the others say why not.
func TestSyncScraperPerSystem(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Spec.TimeScale = 0.2
	urls := []string{"http://127.0.0.1:1"}
	named := &target.Target{Name: "mine", Metrics: &target.Metrics{Path: "/stats", Exchanges: "rl_sync_total", ViewAge: "rl_age_seconds", SyncInterval: time.Second}}
	tests := []struct {
		name  string
		sys   sut
		mode  limiters.Mode
		names synchealth.Names
		every time.Duration
		why   string
	}{
		{"built-in, delayed", sut{}, limiters.ModeDelayed, synchealth.Replica(), 200 * time.Millisecond, ""},
		// No sync, but its decisions made without the store are read (a central replica whose
		// store calls time out decides alone).
		{"built-in, central", sut{}, limiters.ModeCentral, synchealth.Names{Path: "/metrics", StoreErrors: "rlreplica_store_errors_total", Degraded: "rlreplica_degraded_decisions_total"},
			time.Second, "central mode does not sync with the store"},
		{"target without metrics", sut{t: &target.Target{Name: "envoy"}}, "", synchealth.Names{}, 0, "the target file envoy names no metrics (see its metrics: field)"},
		{"target with metrics", sut{t: named}, "", synchealth.Names{Path: "/stats", Exchanges: "rl_sync_total", ViewAge: "rl_age_seconds"}, 2 * time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, why := tt.sys.syncScraper(cfg, result.Scenario{Mode: string(tt.mode)}, urls)
			if why != tt.why || s.Names != tt.names || s.Every != tt.every || (why == "" && len(s.URLs) != 1) {
				t.Errorf("scraper %+v, %q; want names %+v every %v, %q", s, why, tt.names, tt.every, tt.why)
			}
		})
	}
}

func TestStoreCostLine(t *testing.T) {
	for _, tt := range []struct {
		r    result.ScenarioResult
		want string
	}{
		{result.ScenarioResult{StoreCmdPerSec: 186, StoreCommands: 6700, StoreOps: 109_900, Requests: 31200, StoreCPU: &result.StoreCPU{Percent: 4.8, MsPerKiloRequest: 55.48}},
			"store: 186 commands/s; per request 0.215 round trips, 3.308 commands inside scripts; Redis CPU 4.8 % of a core (55.48 ms per 1,000 requests)"},
		{result.ScenarioResult{StoreCPUWhy: "the store started again between its CPU readings"},
			"store: 0 commands/s; per request 0.000 round trips, 0.000 commands inside scripts; Redis CPU not measured: the store started again between its CPU readings"},
		{result.ScenarioResult{}, "store: 0 commands/s; per request 0.000 round trips, 0.000 commands inside scripts; Redis CPU not measured"},
	} {
		if got := storeCost(tt.r); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

// The verdict's conditions state what ran: loopback for the local provider, rates grouped
// by thousands (never 4e+04).
func TestVerdictStatesLoopbackAndGroupsRates(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Provider, cfg.Network = "local", "bridge"
	sum := result.Summary{Cores: 16, Config: result.ConfigSummary{Provider: cfg.Provider, Network: fleet.Networking(cfg.Provider, cfg.Network), Replicas: 8, TimeScale: 0.2}, Pass: true,
		Scenarios: []result.ScenarioResult{{Scenario: result.Scenario{Name: "sliding_window/delayed", Gated: true}, Requests: 1_000_000,
			AskedRate: 40000, AchievedRate: 39876.4, StoreCmdPerSec: 40, Pass: true}}}
	var b strings.Builder
	WriteVerdict(&b, sum)
	printScenario(&b, sum.Scenarios[0])
	out := b.String()
	for _, want := range []string{"local provider, loopback network", "39,876 of 40,000 req/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "bridge") || strings.Contains(out, "e+04") {
		t.Errorf("verdict says bridge or an exponent:\n%s", out)
	}
}

// A central scenario whose replicas decided without their store (store calls past the
// timeout, the breaker open) let the fallback's acceptances through: the boundary burst's
// 745 of 600 is not the sliced window's, so its claim is not measured, and the overshoot
// says why; with every decision made over the store, the same figure refutes the claim.
func TestDecisionsWithoutTheStoreVoidTheAlgorithmsClaims(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Spec.TimeScale = 0.2
	sc := result.Scenario{Name: "sliding_window/central", Algorithm: string(limiters.SlidingWindow), Mode: string(limiters.ModeCentral)}
	scenario := func(deg *result.Degraded) *result.ScenarioResult {
		return &result.ScenarioResult{Scenario: sc, StoreCmdPerSec: 900, AchievedRate: 1000,
			Probes: []result.ProbeResult{{ClientReport: result.ClientReport{ID: "probe-" + schedule.PatternBoundary, Limit: 600, BusiestAccepted: 745, Overshoot: 745.0 / 600}}},
			Sync:   &result.SyncHealth{Why: "central mode does not sync with the store", Degraded: deg}}
	}
	deg := &result.Degraded{Decisions: 145, TimedOut: 10, BreakerOpen: 135, From: "rlreplica_degraded_decisions_total"}
	for _, tt := range []struct {
		name    string
		deg     *result.Degraded
		verdict string
	}{
		{"every decision over the store", &result.Degraded{From: "rlreplica_degraded_decisions_total"}, "not confirmed"},
		{"not scraped", nil, "not confirmed"},
		{"145 decisions without the store", deg,
			"not measured: 145 decisions without the store (store calls: 10 timed out, 0 failed, 135 skipped by the open breaker): the fail-open fallback, not the algorithm over the store, decided those, one limit per node"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := verdict.Claims(scenario(tt.deg), cfg.judging(sc, result.Interval{}), sc)
			if len(cs) != 2 {
				t.Fatalf("%d claims, want the sliced window's and central's cost", len(cs))
			}
			if got := cs[0].Verdict(); got != tt.verdict {
				t.Errorf("sliced window claim: %q, want %q", got, tt.verdict)
			}
			if cs[1].NotMeasured != (tt.deg == deg) {
				t.Errorf("central's store cost: %s", cs[1].Verdict())
			}
		})
	}
	// The overshoot gate still fails (the promise was broken), and says who broke it.
	s, outs := handMade(t, map[string][]uint16{
		"probe-" + schedule.PatternBoundary:     {200, 200, 200, 200, 200, 200, 200, 200},
		"probe-" + schedule.PatternIntermittent: {200, 200},
	})
	acc, err := accounting.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if err := acc.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	rep := acc.Report()
	r := &result.ScenarioResult{Scenario: sc, Sync: &result.SyncHealth{Degraded: deg}}
	c := DefaultConfig()
	c.Spec.TimeScale = 1.0 / 60
	fillResult(r, &rep, c, sc, newProbeTimes(s), result.Interval{}, accounting.NewLatency())
	if oc := check(t, *r, "max overshoot"); oc.Pass || !strings.Contains(oc.Detail, "145 decisions without the store") {
		t.Errorf("overshoot check %+v: want it failed, naming the decisions made without the store", oc)
	}
}

// The verdict and each scenario's rows carry the clocks line: both clocks of both promises,
// the gated one named, so the client's view is printed whichever clock gates.
func TestVerdictPrintsTheClocksLine(t *testing.T) {
	clocks := &result.Clocks{Gate: result.ClockClient, OvershootClient: 1.2, OvershootArrival: 1.05, FalseRejectsArrival: 1, FalseRejectsClient: 3, ArrivalWidth: 20 * time.Millisecond}
	sum := result.Summary{Config: result.ConfigSummary{Provider: "local", Network: "loopback"}, Pass: true,
		Scenarios: []result.ScenarioResult{{Scenario: result.Scenario{Name: "sliding_window/delayed", Gated: true}, Clocks: clocks}}}
	var b strings.Builder
	WriteVerdict(&b, sum)
	printScenario(&b, sum.Scenarios[0])
	want := "clocks: gated on the client's send times; overshoot x1.200 (client) x1.050 (arrival ±20ms p99); false rejects 3 (client) 1 (arrival ±20ms p99)"
	if n := strings.Count(b.String(), want); n != 2 {
		t.Errorf("%d clocks lines %q, want one in the verdict and one in the scenario's rows:\n%s", n, want, b.String())
	}
}

// The verdict table's columns hold its longest scenario and check names: every row's result
// starts where the header's does, a 40-character check name and a 47-character scenario
// name included.
func TestVerdictColumnsHoldTheLongestNames(t *testing.T) {
	sum := result.Summary{Config: result.ConfigSummary{Provider: "docker", Network: "host"}, Checks: []result.GateCheck{
		{Scenario: "traefik-redis", Gated: true, Check: result.Check{Name: "false rejects", Op: "==", Pass: true}},
		{Scenario: "traefik-redis/store-slow", Gated: true, Check: result.Check{Name: "answer time while the store is slow (ms)", Figure: 303.103, Op: "<=", Threshold: 100}},
		{Scenario: "sliding_window/delayed-document/store-restart", Gated: true, Check: result.Check{Name: "overshoot across the restart", Figure: 1.2, Op: "<=", Threshold: 1.1}},
		{Scenario: "a comparison scenario whose name is longer than any gated one", Check: result.Check{Name: "a comparison's check, not in the table at all", Op: "==", Pass: true}},
	}}
	var b strings.Builder
	WriteVerdict(&b, sum)
	var table []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "scenario ") || strings.HasPrefix(l, "traefik-redis") || strings.HasPrefix(l, "sliding_window") {
			table = append(table, l)
		}
	}
	if len(table) != 4 {
		t.Fatalf("%d table lines, want the header and 3 gated checks:\n%s", len(table), b.String())
	}
	at := strings.Index(table[0], "  result")
	for _, l := range table[1:] {
		if i := max(strings.Index(l, "  pass"), strings.Index(l, "  FAIL")); i != at {
			t.Errorf("the result starts at %d, the header's at %d:\n%s\n%s", i, at, table[0], l)
		}
	}
	if want := len("sliding_window/delayed-document/store-restart") + 1 + len("answer time while the store is slow (ms)") + 1 + 12 + 1 + 4 + 1 + 10; at != want {
		t.Errorf("the result column starts at %d, want %d: the columns are not as wide as their longest names", at, want)
	}
}
