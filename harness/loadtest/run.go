package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fault"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/recorder"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/limiters"
)

// Config is a load test as the command line asks for it.
type Config struct {
	Provider string // fleet provider: docker | local
	Network  string // bridge | host
	// Spec is the traffic's recipe (time scale, background rate and clients, seed, replicas,
	// the replica a replica-kill routes around): what schedule.Build, the shards and the judge
	// take, and the time scale every duration of the run is scaled by.
	Spec         schedule.Spec
	Algorithm    limiters.Algorithm // the design under test: sliding_window
	Mode         limiters.Mode      // its mode: delayed
	Design       string             // delayed mode's design (limiters.Design): bounded | document; "" the replica's default, bounded
	SyncInterval time.Duration      // HS5 0.2 s, before scaling
	StoreTimeout time.Duration      // replica's store timeout (not scaled: it is about the network)
	FailOpen     bool               // run the fault scenarios (Faults)
	Matrix       bool               // run every other algorithm × mode as a comparison
	Only         string             // run only the scenarios whose name contains it, or one of its comma-separated parts
	// Store is "redis" (one Redis, default) or "cluster" (a Redis Cluster of 3 masters + 3
	// replicas; the fail-open scenarios then kill and pause one master).
	Store string
	// ClusterNodeTimeout is how long a silent master goes before its replica takes over
	// (cluster store; not scaled: it is about the network). Default 2 s.
	ClusterNodeTimeout time.Duration
	// StoreCPU, when set, gives the one Redis that share of a core (Docker only): a slow
	// store, whose calls take time in proportion to their work, as a busy Redis thread's do.
	StoreCPU float64
	// Zones places the replicas in zones, each with its own link to the store (--zones,
	// --topology, a target file's topology section); zero is no topology.
	Zones topology.Topology
	// Outage is how long the store stays down in a fail-open scenario, before scaling.
	Outage time.Duration
	// RecoveryGrace is how long after the store returns before the 1.1× gate applies again
	// (reconnection, circuit breaker, one sync); wall clock, not scaled.
	RecoveryGrace time.Duration
	Gates         accounting.Gates
	// Targets are the systems under test, in order: nil is the built-in replica (the
	// design, its fail-open scenarios and with Matrix the comparisons), a target file's
	// limiter otherwise. The first is gated, the others are comparisons beside it. Empty
	// is the built-in replica alone.
	Targets []*target.Target
	OutDir  string
	// Rules, when set, is the replicas' rule file in place of the document's rule at the
	// run's time scale: the scenario's algorithm is then only its name.
	Rules []byte
	// Schedule, when set, is the traffic every scenario sends in place of the documents'
	// (WithSchedule: harness loadtest --schedule FILE).
	Schedule *schedule.File
	// Shards is how many generator processes send each scenario (1: this one, in process);
	// ShardRunner runs them as processes (HarnessBinary, default this executable) or
	// containers (HarnessImage, default rlharness/harness:dev).
	Shards        int
	ShardRunner   string
	HarnessBinary string
	HarnessImage  string
	// BinDir holds prebuilt programs for the local provider (the HS2 kit's bin/): the
	// targets, redis-server and redis-cli, in place of go build and PATH.
	BinDir string
	// Commit is the source revision of the binary, for the summary; empty when unknown.
	Commit string
	// started is when Run began: it names the run in every scenario's scenario.json.
	started  time.Time
	Logger   *slog.Logger
	Progress io.Writer
	// Faults are the fault scenarios FailOpen runs (FailOpenFaults, a target's those that
	// apply to it); empty is all of them.
	Faults []string
	// killedNode is who answers for a refused connection to a killed node: a target file's
	// faults.killed_node (forTarget); empty is the harness.
	killedNode string
	// exactClock is the exact clock the scenarios' system gives (sut.exactClock, set by
	// forTarget): what --gate-clock auto gates on where the outcomes carry it.
	exactClock string
}

// latenessShare is how late, as a share of one slice at the run's time scale, the generator
// may send its 99th-percentile request. A request late by that much lands in the limiter's
// slices as the schedule meant; the boundary burst moves by at most 2 % of its own length.
const latenessShare = 0.02

// defaultGates are the requirements' thresholds; the lateness tolerance (0) follows the
// time scale, see latenessShare.
func defaultGates() accounting.Gates {
	g := accounting.DefaultGates()
	g.LatenessP99 = 0
	return g
}

// DefaultConfig is the document's design at its own time scale.
func DefaultConfig() Config {
	return Config{
		Provider: "docker", Network: fleet.NetworkBridge,
		Spec:      schedule.Spec{TimeScale: 1, Rate: 40_000, Clients: 200_000, Seed: 20260730, Replicas: limiters.DefaultNodes},
		Algorithm: limiters.SlidingWindow, Mode: limiters.ModeDelayed,
		SyncInterval: limiters.DefaultSyncInterval, StoreTimeout: limiters.DefaultStoreTimeout,
		FailOpen: true, Matrix: true, Outage: 30 * time.Second, RecoveryGrace: 2 * time.Second,
		Gates: defaultGates(), Shards: 1, ShardRunner: RunnerProcess, OutDir: "runs/latest",
	}
}

func (c Config) check() error {
	switch {
	case schedule.CheckTimeScale(c.Spec.TimeScale) != nil:
		return schedule.CheckTimeScale(c.Spec.TimeScale)
	case c.Spec.Rate <= 0:
		return fmt.Errorf("--rate must be > 0 requests/s (got %v)", c.Spec.Rate)
	case c.Spec.Clients <= 0:
		return fmt.Errorf("--clients must be > 0 (got %d)", c.Spec.Clients)
	case c.Spec.Replicas <= 0:
		return fmt.Errorf("--replicas must be > 0 (got %d)", c.Spec.Replicas)
	case c.Store != "" && c.Store != fleet.StoreRedis && c.Store != fleet.StoreCluster:
		return fmt.Errorf("--store %q: use redis (one Redis) or cluster (a Redis Cluster)", c.Store)
	case c.Store == fleet.StoreCluster && c.Provider != "local" && c.Network != fleet.NetworkHost:
		return errors.New("--store cluster runs on Docker's host networking only (its nodes announce their own 127.0.0.1 ports): add --network host, or use --provider local")
	case c.Design != "" && !slices.Contains(limiters.Designs(), limiters.Design(c.Design)):
		return fmt.Errorf("--design %q: use %s (the default, docs/design-bound.md) or %s (the document's delayed sync)", c.Design, limiters.DesignBounded, limiters.DesignDocument)
	case !c.Zones.IsZero() && c.Zones.Replicas() != c.Spec.Replicas && (len(c.Targets) == 0 || slices.Contains(c.Targets, nil)):
		return fmt.Errorf("--zones %s hold %d replicas, but --replicas is %d: make them agree", c.Zones, c.Zones.Replicas(), c.Spec.Replicas)
	case !c.Zones.IsZero() && c.Store == fleet.StoreCluster:
		return errors.New("--zones gives each zone a link to one Redis; a Redis Cluster's nodes announce their own addresses: leave --store cluster off")
	case c.Shards < 1:
		return fmt.Errorf("--shards must be >= 1 (got %d)", c.Shards)
	case c.Shards > 1 && slices.ContainsFunc(c.Targets, func(t *target.Target) bool { return t != nil }):
		return errors.New("--shards sends the built-in replica's schedule only: a target file's classes and request shape do not travel to the shards yet; run a --target without --shards")
	case c.ShardRunner != RunnerProcess && c.ShardRunner != RunnerContainer && c.ShardRunner != "":
		return fmt.Errorf("--shard-runner %q: use %s or %s", c.ShardRunner, RunnerProcess, RunnerContainer)
	}
	if err := c.zoneFaultsAlone(); err != nil {
		return err
	}
	if err := checkClock(c.Gates.Clock); err != nil {
		return err
	}
	r := limiters.Rule{Name: "x", Algorithm: c.Algorithm, Limit: 1, Window: time.Minute, Slices: 12, Burst: 1}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("--algorithm: %w", err)
	}
	switch c.Mode {
	case limiters.ModeCentral, limiters.ModeSplit, limiters.ModeDelayed:
	default:
		return fmt.Errorf("--mode %q: use central, split or delayed", c.Mode)
	}
	return nil
}

// latenessTolerance is the p99 lateness the generator may reach: as asked, or by default
// latenessShare of one slice at the run's time scale.
func (c Config) latenessTolerance() time.Duration {
	if c.Gates.LatenessP99 > 0 {
		return c.Gates.LatenessP99
	}
	slice := c.Spec.Window() / limiters.DefaultSlices
	return time.Duration(float64(slice) * latenessShare)
}

// scaled is d at the run's time scale: the schedule's Scale, so that the fleet's windows,
// the faults and the checks are timed as the schedule is.
func (c Config) scaled(d time.Duration) time.Duration { return c.Spec.Scale(d) }

// withWriters is c with a logger and a progress writer that discard where none was given.
func (c Config) withWriters() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// Run runs every scenario the config asks for, writes summary.json into OutDir and returns
// it. A gate that fails is not an error: the summary says so (Pass false).
func Run(ctx context.Context, cfg Config) (result.Summary, error) {
	if err := cfg.check(); err != nil {
		return result.Summary{}, err
	}
	cfg = cfg.withWriters()
	askedLateness := cfg.Gates.LatenessP99
	cfg.Gates.LatenessP99 = cfg.latenessTolerance()
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return result.Summary{}, fmt.Errorf("create the run directory: %w", err)
	}
	provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger, fleet.WithBinDir(cfg.BinDir))
	if err != nil {
		return result.Summary{}, err
	}
	sum, err := cfg.newSummary(askedLateness)
	if err != nil {
		return result.Summary{}, err
	}
	cfg.started = sum.StartedAt
	if cfg.Schedule != nil {
		sum.Config.Schedule = cfg.Schedule.Name
	}
	for _, run := range cfg.runs() {
		sc := run.sc
		if !cfg.only(sc.Name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(cfg.Progress, "== %s\n", sc.Name)
		res, err := runScenario(ctx, cfg.forTarget(run.sys.t, askedLateness), provider, sc, run.sys)
		if err != nil {
			res.Error = err.Error()
			res.Pass = false
			cfg.Logger.Error("scenario failed to run", "scenario", sc.Name, "err", err)
		}
		res = addScenario(&sum, res)
		printScenario(cfg.Progress, res)
		printCluster(cfg.Progress, res.Cluster)
		if err := writeSummary(cfg.OutDir, sum); err != nil { // a crash keeps what was measured
			return sum, err
		}
	}
	if len(sum.Scenarios) == 0 {
		return sum, fmt.Errorf("no scenario matches --only %q", cfg.Only)
	}
	if ctx.Err() != nil {
		sum.Interrupted = true
		sum.Failed = append(sum.Failed, "interrupted")
		sum.Settle()
	}
	sum.FinishedAt = time.Now().UTC()
	return sum, writeSummary(cfg.OutDir, sum)
}

// only reports whether the scenario named name runs: Only is empty, or one of its
// comma-separated parts is in the name.
func (c Config) only(name string) bool {
	if c.Only == "" {
		return true
	}
	for part := range strings.SplitSeq(c.Only, ",") {
		if part != "" && strings.Contains(name, part) {
			return true
		}
	}
	return false
}

// configSummary is what a summary and a scenario.json record of c's conditions: provider,
// networking, replicas, the design, the schedule's spec, every duration as it ran (at the
// time scale), limit the gated class's. The one builder of result.ConfigSummary for the load
// test, the judge of a killed run and the judge of shards.
func (c Config) configSummary(algorithm, mode string, limit int) result.ConfigSummary {
	return result.ConfigSummary{Provider: c.Provider, Network: fleet.Networking(c.Provider, c.Network),
		NetworkNote: fleet.NetworkingNote(c.Provider, c.Network), Replicas: c.Spec.Replicas,
		Algorithm: algorithm, Mode: mode, Design: c.designSummary(limiters.Mode(mode)), SyncInterval: c.scaled(c.SyncInterval),
		StoreTimeout: c.StoreTimeout, TimeScale: c.Spec.TimeScale, Window: c.Spec.Window(), Limit: limit,
		Rate: c.Spec.Rate, Clients: c.Spec.Clients, Seed: c.Spec.Seed, Outage: c.scaled(c.Outage), RecoveryGrace: c.RecoveryGrace,
		Store: c.clusterStore(), Zones: c.Zones.Zones}
}

// designSummary is the summary's design: delayed mode's design under test, empty in other modes.
func (c Config) designSummary(mode limiters.Mode) string {
	if mode != limiters.ModeDelayed {
		return ""
	}
	if c.Design == "" {
		return string(limiters.DesignBounded)
	}
	return c.Design
}

// newSummary is the run's summary before its first scenario: its conditions, which are the
// gated system's, and the document's model figures the run is judged beside.
func (c Config) newSummary(askedLateness time.Duration) (result.Summary, error) {
	m, err := model.RunRateLimit()
	if err != nil {
		return result.Summary{}, fmt.Errorf("run the document's model the run is judged beside: %w", err)
	}
	figures := m.Figures()
	gated := c.Targets[:min(len(c.Targets), 1)]
	first, limit := c, limiters.DefaultLimit
	if len(gated) == 1 && gated[0] != nil {
		first, limit = c.forTarget(gated[0], askedLateness), gated[0].Classes[0].Limit
		c.Logger.Info("target", "name", gated[0].Name, "time_scale", first.Spec.TimeScale, "replicas", first.Spec.Replicas)
	}
	sum := result.Summary{Model: &figures,
		StartedAt: time.Now().UTC(), Cores: runtime.NumCPU(), Commit: c.Commit,
		Config: first.configSummary(string(c.Algorithm), string(c.Mode), limit),
		Pass:   true,
	}
	if len(gated) == 1 && gated[0] != nil { // the design under test is the target file's, not the replica's
		sum.Config.Algorithm, sum.Config.Mode, sum.Config.Design, sum.Config.SyncInterval = gated[0].Algorithm, "target "+gated[0].Name, "", 0
		if m := gated[0].Metrics; m != nil {
			sum.Config.SyncInterval = m.SyncInterval
		}
	}
	return sum, nil
}

// addScenario adds a judged scenario to the summary with its outcome (result.ScenarioOutcome,
// once every check is in: the cluster store's, the shards' clock skew): its checks, and the
// run's outcome settled again. It returns the scenario as added.
func addScenario(sum *result.Summary, res result.ScenarioResult) result.ScenarioResult {
	res.Outcome = result.ScenarioOutcome(res)
	sum.Scenarios = append(sum.Scenarios, res)
	for _, c := range res.Checks {
		sum.Checks = append(sum.Checks, result.GateCheck{Scenario: res.Name, Gated: res.Gated, Check: c})
		if res.Gated && !c.Pass {
			sum.Failed = append(sum.Failed, res.Name+": "+c.Name)
		}
	}
	if res.Error != "" && res.Gated {
		sum.Failed = append(sum.Failed, res.Name+": "+res.Error)
		sum.NotMade = append(sum.NotMade, res.Name+": "+res.Error)
	}
	sum.Settle()
	return res
}

func writeSummary(dir string, s result.Summary) error {
	return result.Write(dir, result.SummaryFile, s)
}

// sendFunc sends a scenario's schedule at the fleet as traffic.Run does: from opts' start,
// calling onStart on the origin and sink once per outcome. The sharded sender returns its
// shards' records.
type sendFunc func(ctx context.Context, s *schedule.Schedule, fl fleet.Fleet, opts traffic.Options, sink func(traffic.Outcome) error) ([]result.Shard, error)

func (c Config) send(sc result.Scenario) sendFunc {
	if c.Shards > 1 {
		return c.sendShards(sc)
	}
	return func(ctx context.Context, s *schedule.Schedule, fl fleet.Fleet, opts traffic.Options, sink func(traffic.Outcome) error) ([]result.Shard, error) {
		_, err := traffic.Run(ctx, s, fl.ReplicaURLs(), opts, sink)
		return nil, err
	}
}

// runScenario runs one scenario on a fresh fleet and judges it: start the fleet, arm the
// faults, send the schedule, collect the store's figures, judge.
func runScenario(ctx context.Context, cfg Config, provider fleet.Provider, sc result.Scenario, sys sut) (result.ScenarioResult, error) {
	res := result.ScenarioResult{Scenario: sc}
	cfg = cfg.withWriters() // Run sets them; a test that calls runScenario alone may not
	// A killed replica's requests go to the others in the schedule itself, so that shards and
	// judges send and rebuild the same.
	cfg.Spec.Away = cfg.routedAway(sc, sys.t)
	r := &scenarioRun{cfg: cfg, sc: sc, sys: sys}
	var err error
	if r.sched, err = sys.schedule(cfg); err != nil {
		return res, err
	}
	if r.fl, err = sys.start(ctx, provider, sys.spec(cfg, sc)); err != nil {
		return res, fmt.Errorf("start the fleet: %w", err)
	}
	defer r.terminate(ctx)
	res.Conditions = r.fl.Conditions()
	if r.store, err = openStore(ctx, cfg, sys, r.fl); err != nil {
		return res, err
	}
	defer r.store.close()
	res.NoStore = r.store.none

	r.plan = cfg.faultPlan(sc, sys.t)
	r.outage = r.plan.outage
	res.Faults = r.plan.windows
	if r.col, err = newCollector(cfg, &r.sched, r.plan.windows, sc.Dir(cfg.OutDir), sys.status); err != nil {
		return res, err
	}
	defer r.col.close()
	if err := cfg.keepReplayed(sc.Dir(cfg.OutDir)); err != nil {
		return res, err
	}
	r.col.inFault = func(t time.Duration) bool {
		a := r.armed.Load()
		return a != nil && a.Contains(t, cfg.RecoveryGrace)
	}

	shards, err := r.send(ctx, &res)
	if err != nil {
		return res, err
	}
	r.store.figures(context.WithoutCancel(ctx), &res, int(r.col.sent.Load()), r.sched.Duration, cfg.Logger)
	r.judge(ctx, &res, shards)
	return res, nil
}

// scenarioRun is one scenario from its fleet's start to its verdict: what runScenario's
// steps share.
type scenarioRun struct {
	cfg   Config
	sc    result.Scenario
	sys   sut
	sched schedule.Schedule
	fl    fleet.Fleet
	store *storeMeter
	plan  faultPlan
	col   *collector
	// armed is the fault from the traffic's origin on; outage is its span, planned until
	// end measures it.
	armed  atomic.Pointer[fault.Armed]
	outage result.Interval

	// What runs on the traffic's origin, from begin to end.
	start     time.Time
	scraper   synchealth.Scraper
	syncWhy   string // why the replicas' sync health is not measured; "" when it is
	scraping  *synchealth.Running
	progress  <-chan struct{}
	stopWatch func() *result.ClusterFault
}

// terminate tears the fleet down, on a context that outlives the run's cancel.
func (r *scenarioRun) terminate(ctx context.Context) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := r.fl.Terminate(tctx); err != nil {
		r.cfg.Logger.Warn("fleet teardown", "err", err)
	}
}

// warmConns is how many connections per replica a scenario's generator opens, and warms,
// before its origin (traffic.Options.Warm): on 2 cores a cold fleet answered the first
// scenario's first requests up to 160 ms late, and the run was judged generator-bound.
const warmConns = 8

// send sends the schedule at the fleet. traffic.Run owns the start: it waits for a window
// edge of the replicas' epoch-aligned windows, so the schedule's window edges (the boundary
// burst's) are the limiters' own, and calls begin on that origin, the clock of every outcome.
// The sync health, the cluster's fault and the duration go into res.
func (r *scenarioRun) send(ctx context.Context, res *result.ScenarioResult) ([]result.Shard, error) {
	r.scraper, r.syncWhy = r.sys.syncScraper(r.cfg, r.sc, r.fl.ReplicaURLs())
	r.progress = closed()
	r.stopWatch = func() *result.ClusterFault { return nil }
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := r.sys.options(&r.sched)
	opts.Align = r.cfg.Spec.Window()
	opts.Warm = warmConns
	opts.OnStart = func(origin time.Time) error { return r.begin(ctx, runCtx, origin) }
	shards, runErr := r.cfg.send(r.sc)(runCtx, &r.sched, r.fl, opts, r.col.add)
	cancel()
	if err := r.end(ctx, res); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return shards, runErr
	}
	return shards, nil
}

// begin starts, on the traffic's origin, everything timed on it: the store's counters (so
// that they cover the traffic alone, not the fleet's start or the wait), the sync scrape, the
// cluster watch, the progress lines and the fault.
func (r *scenarioRun) begin(ctx, runCtx context.Context, origin time.Time) error {
	r.start = origin
	if rec := backendOf(r.fl); rec != nil {
		rec.Record()
	}
	// What a judge needs of the scenario if the run dies before summary.json: harness
	// judge rebuilds the schedule from it and judges outcomes.csv.
	if err := writeStarted(r.sc.Dir(r.cfg.OutDir), r.cfg, r.sc, r.sys, origin, r.plan.windows, r.plan.outage, r.fl.Conditions()); err != nil {
		return err
	}
	if err := r.store.reset(ctx); err != nil {
		return fmt.Errorf("reset the store's command stats: %w", err)
	}
	if len(r.scraper.URLs) > 0 {
		r.scraping = r.scraper.Start(runCtx, origin)
	}
	r.stopWatch = watchCluster(runCtx, r.fl, r.sc, origin, r.plan.outage.From)
	if r.cfg.Shards <= 1 { // shards' outcomes arrive once they are done
		r.progress = progress(runCtx, r.cfg.Progress, origin, &r.col.sent, &r.col.errs, len(r.sched.Requests))
	}
	if r.plan.fault != nil {
		r.armed.Store(fault.Arm(runCtx, r.fl, *r.plan.fault, origin, r.cfg.Logger))
	}
	return nil
}

// end stops what begin started once the traffic is over and records it in res: the sync
// health, the duration, the cluster's fault and the fault as it happened (measuredFault);
// its error is the fault injection's.
func (r *scenarioRun) end(ctx context.Context, res *result.ScenarioResult) error {
	res.Sync = &result.SyncHealth{Why: r.syncWhy}
	if r.scraping != nil {
		sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		h := r.scraping.Stop(sctx).Figures()
		stop()
		if r.syncWhy != "" { // scraped for the decisions made without the store alone
			h.Available, h.Why, h.Series = false, r.syncWhy, nil
		}
		res.Sync = &h
	}
	<-r.progress
	var err error
	if !r.start.IsZero() {
		res.Duration = time.Since(r.start)
	}
	if a := r.armed.Load(); a != nil {
		var ferr error
		if r.outage, ferr = measuredFault(res, r.col.acc, a, r.cfg, r.sc); ferr != nil && !errors.Is(ferr, fault.ErrNotMade) {
			err = fmt.Errorf("inject %s: %w", r.sc.Fault, ferr)
		}
	}
	res.Cluster = r.stopWatch()
	if rec := backendOf(r.fl); rec != nil && !r.start.IsZero() {
		arrivals := rec.Take()
		if werr := recorder.WriteFile(r.sc.Dir(r.cfg.OutDir), r.start, arrivals); werr != nil && err == nil {
			err = werr
		}
		r.col.acc.UseBackend()
		for _, a := range arrivals {
			r.col.acc.AddBackend(a.Index, a.At.Sub(r.start))
		}
	}
	return err
}

// backendOf is the recording backend behind fl's replicas; nil without one.
func backendOf(fl fleet.Fleet) *recorder.Recorder {
	if f, ok := fl.(fleet.Recorded); ok {
		return f.Backend()
	}
	return nil
}

// judge accounts for the outcomes and judges them: the gates and the document's claims, on a
// cluster store whether the store agrees with what the replicas accepted, and the shards'
// clock skew.
func (r *scenarioRun) judge(ctx context.Context, res *result.ScenarioResult, shards []result.Shard) {
	if boundedDesign(r.sc) && r.sys.t == nil && r.cfg.Rules == nil {
		res.Budget = budgetLoad(&r.sched, r.cfg.Spec.Replicas)
	}
	rep := r.col.acc.Report()
	fillResult(res, &rep, r.cfg, r.sc, r.col.probes, r.outage, r.col.faultLat)
	if r.cfg.Store == fleet.StoreCluster {
		if c, ok := storeAgreement(ctx, r.fl, r.cfg, r.sc, res, r.start, r.outage); ok {
			res.Checks = append(res.Checks, c)
			res.Pass = res.Pass && c.Pass
		}
	}
	if shards != nil {
		judgeSkew(res, shards, r.cfg.Gates.LatenessP99)
	}
}

// faultPlan is a scenario's fault as planned, in offsets from the traffic's origin: what
// harness/fault arms (planFault), the outage, and the windows the checks treat as the
// fault's (the outage and its recovery grace; store-restart's a sync interval more) until
// the measured ones replace them. A scenario without a fault has none of them.
type faultPlan struct {
	fault   *fault.Plan
	outage  result.Interval
	windows []result.Interval
}

func (c Config) faultPlan(sc result.Scenario, t *target.Target) faultPlan {
	p := c.planFault(sc, t)
	if p == nil {
		return faultPlan{}
	}
	outage := result.Interval{From: p.At, To: p.Until}
	return faultPlan{fault: p, outage: outage, windows: []result.Interval{{From: outage.From, To: c.recoveredAt(sc.Fault, outage)}}}
}

// collector takes a scenario's outcomes one at a time: the target's status as the harness's,
// then the outcomes file, the accounting, the probes' acceptance times, the latency inside the
// fault windows, and the counts the progress lines print.
type collector struct {
	status func(uint16) uint16
	// inFault says whether an outcome sent at t is in the fault, as far as is known when it
	// arrives; nil: never.
	inFault    func(t time.Duration) bool
	acc        *accounting.Accumulator
	w          *traffic.Writer
	probes     *probeTimes
	faultLat   *accounting.Latency
	sent, errs atomic.Int64
}

func newCollector(cfg Config, sched *schedule.Schedule, faults []result.Interval, dir string, status func(uint16) uint16) (*collector, error) {
	acc, err := cfg.accumulator(sched, faults)
	if err != nil {
		return nil, err
	}
	w, err := traffic.Replace(dir)
	if err != nil {
		return nil, err
	}
	return &collector{status: status, acc: acc, w: w, probes: newProbeTimes(sched), faultLat: accounting.NewLatency()}, nil
}

// add is the sink of the scenario's traffic.
func (c *collector) add(o traffic.Outcome) error {
	o.Code = c.status(o.Code)
	c.sent.Add(1)
	if o.Code == 0 || o.Code >= 500 {
		c.errs.Add(1)
	}
	c.probes.add(o)
	if o.Code != 0 && c.inFault != nil && c.inFault(o.Sent) {
		c.faultLat.Record(o.Latency)
	}
	if err := c.w.Write(o); err != nil {
		return err
	}
	return c.acc.Add(o)
}

func (c *collector) close() { c.w.Close() }

// storeMeter reads the counter store's work over a scenario's traffic: its commands (one
// Redis, or every master of a cluster store) and its CPU (one Redis only).
type storeMeter struct {
	fl           fleet.Fleet
	cluster      bool
	rdb          *redis.Client // one Redis the harness reads; nil on a cluster or without a store
	resetCluster func(context.Context) error
	closeCluster func()
	cpu          *cpuMeter
	cpuWhy       string // why the CPU is not measured, where it is not
	scripts      commandstats.Set
	none         bool // the target keeps its counters to itself
}

// openStore connects to the scenario's store, where the harness can read one.
func openStore(ctx context.Context, cfg Config, sys sut, fl fleet.Fleet) (*storeMeter, error) {
	m := &storeMeter{fl: fl, cluster: cfg.Store == fleet.StoreCluster, scripts: sys.scriptCommands(),
		cpuWhy: "the target keeps its counters to itself"}
	addr := sys.storeAddr(fl)
	m.none = addr == "" && !m.cluster
	switch {
	case m.cluster: // every master
		m.cpuWhy = "not measured on a cluster store"
		reset, closeServers, err := storeResetter(ctx, fl)
		if err != nil {
			return nil, fmt.Errorf("the cluster store before the run: %w", err)
		}
		m.resetCluster, m.closeCluster = reset, closeServers
	case addr != "":
		m.rdb = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		// Dial now: the counters are reset on the run's origin, where a first connection's
		// handshake would hold back the first requests (CI saw starts 40-110 ms late).
		if err := m.rdb.Ping(ctx).Err(); err != nil {
			m.rdb.Close()
			return nil, fmt.Errorf("reach the store at %s: %w", addr, err)
		}
	}
	m.cpu = &cpuMeter{rdb: m.rdb}
	return m, nil
}

// reset zeroes the store's command counts and reads its CPU, on the traffic's origin.
func (m *storeMeter) reset(ctx context.Context) error {
	if m.resetCluster != nil {
		if err := m.resetCluster(ctx); err != nil {
			return err
		}
	}
	if m.rdb != nil {
		if err := m.rdb.ConfigResetStat(ctx).Err(); err != nil {
			return err
		}
		m.cpu.start(ctx, time.Now())
	}
	return nil
}

// figures reads what the store did over the traffic into res: its commands and ops, per
// second of the schedule's duration d, and its CPU; a failed read is logged and its figures
// left at zero.
func (m *storeMeter) figures(ctx context.Context, res *result.ScenarioResult, requests int, d time.Duration, log *slog.Logger) {
	var err error
	if m.cluster {
		if res.StoreCommands, res.StoreOps, err = storeCommandsAll(ctx, m.fl, m.scripts); err != nil {
			log.Warn("store command stats", "err", err)
		}
	}
	res.StoreCPU, res.StoreCPUWhy = m.cpu.result(ctx, time.Now(), requests, m.cpuWhy)
	if m.rdb != nil {
		if res.StoreCommands, res.StoreOps, err = commandstats.Read(ctx, m.rdb, m.scripts); err != nil {
			log.Warn("store command stats", "err", err)
		}
	}
	if d > 0 {
		res.StoreCmdPerSec = float64(res.StoreCommands) / d.Seconds()
		res.StoreOpsPerSec = float64(res.StoreOps) / d.Seconds()
	}
}

func (m *storeMeter) close() {
	if m.rdb != nil {
		m.rdb.Close()
	}
	if m.closeCluster != nil {
		m.closeCluster()
	}
}

// scriptInternal are the commands the limiter's Lua scripts call inside Redis
// (limiters.ScriptCommands). INFO commandstats counts them beside the EVALSHA that ran them;
// they are work for the store but not round trips, so they are left out of the touches.
var scriptInternal = commandstats.NewSet(limiters.ScriptCommands...)

// closed is a channel that is already closed: a progress printer that never started.
func closed() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// progress prints elapsed time, rate and errors every two seconds until ctx ends.
func progress(ctx context.Context, w io.Writer, start time.Time, sent, errs *atomic.Int64, total int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				n := sent.Load()
				fmt.Fprintf(w, "   %5.1fs  %8d/%d sent  %7s req/s  %d errors\n",
					time.Since(start).Seconds(), n, total, result.Rate(float64(n-last)/2), errs.Load())
				last = n
			}
		}
	}()
	return done
}
