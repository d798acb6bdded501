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
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/limiters"
)

// Config is a load test as the command line asks for it.
type Config struct {
	Provider     string             // fleet provider: docker | local
	Network      string             // bridge | host
	Replicas     int                // HS4: 8
	Algorithm    limiters.Algorithm // the design under test: sliding_window
	Mode         limiters.Mode      // its mode: delayed
	Design       string             // the replica's delayed-sync design (REPLICA_DESIGN): document | bounded; "" its default
	SyncInterval time.Duration      // HS5 0.2 s, before scaling
	StoreTimeout time.Duration      // replica's store timeout (not scaled: it is about the network)
	TimeScale    float64            // every duration ×F, every rate ×1/F
	Rate         float64            // background population's asked aggregate rate, req/s as sent
	Clients      int                // HS1: 200,000
	Seed         uint64
	FailOpen     bool // run the fault scenarios (Faults)
	Matrix       bool // run every other algorithm × mode as a comparison
	Only         string
	// Store is "redis" (one Redis, default) or "cluster" (a Redis Cluster of 3 masters + 3
	// replicas; the fail-open scenarios then kill and pause one master).
	Store string
	// ClusterNodeTimeout is how long a silent master goes before its replica takes over
	// (cluster store; not scaled: it is about the network). Default 2 s.
	ClusterNodeTimeout time.Duration
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
	// Shards is how many generator processes send each scenario (1: this one, in process);
	// ShardRunner runs them as processes (HarnessBinary, default this executable) or
	// containers (HarnessImage, default rlharness/harness:dev).
	Shards        int
	ShardRunner   string
	HarnessBinary string
	HarnessImage  string
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
	// away is the replica a replica-kill scenario's schedule routes around (routedAway).
	away *schedule.Away
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
		Provider: "docker", Network: fleet.NetworkBridge, Replicas: limiters.DefaultNodes,
		Algorithm: limiters.SlidingWindow, Mode: limiters.ModeDelayed,
		SyncInterval: limiters.DefaultSyncInterval, StoreTimeout: limiters.DefaultStoreTimeout,
		TimeScale: 1, Rate: 40_000, Clients: 200_000, Seed: 20260730,
		FailOpen: true, Matrix: true, Outage: 30 * time.Second, RecoveryGrace: 2 * time.Second,
		Gates: defaultGates(), Shards: 1, ShardRunner: RunnerProcess, OutDir: "runs/latest",
	}
}

func (c Config) check() error {
	switch {
	case !(c.TimeScale > 0) || c.TimeScale > 1:
		return fmt.Errorf("--time-scale must be in (0, 1] (got %v): 1 is real time, 0.1 ten times faster", c.TimeScale)
	case c.Rate <= 0:
		return fmt.Errorf("--rate must be > 0 requests/s (got %v)", c.Rate)
	case c.Clients <= 0:
		return fmt.Errorf("--clients must be > 0 (got %d)", c.Clients)
	case c.Replicas <= 0:
		return fmt.Errorf("--replicas must be > 0 (got %d)", c.Replicas)
	case c.Store != "" && c.Store != fleet.StoreRedis && c.Store != fleet.StoreCluster:
		return fmt.Errorf("--store %q: use redis (one Redis) or cluster (a Redis Cluster)", c.Store)
	case c.Store == fleet.StoreCluster && c.Provider != "local" && c.Network != fleet.NetworkHost:
		return errors.New("--store cluster runs on Docker's host networking only (its nodes announce their own 127.0.0.1 ports): add --network host, or use --provider local")
	case c.Design != "" && c.Design != DesignDocument && c.Design != DesignBounded:
		return fmt.Errorf("--design %q: use %s (the document's delayed sync) or %s (docs/design-bound.md)", c.Design, DesignDocument, DesignBounded)
	case c.Shards < 1:
		return fmt.Errorf("--shards must be >= 1 (got %d)", c.Shards)
	case c.Shards > 1 && slices.ContainsFunc(c.Targets, func(t *target.Target) bool { return t != nil }):
		return errors.New("--shards sends the built-in replica's schedule only: a target file's classes and request shape do not travel to the shards yet; run a --target without --shards")
	case c.ShardRunner != RunnerProcess && c.ShardRunner != RunnerContainer && c.ShardRunner != "":
		return fmt.Errorf("--shard-runner %q: use %s or %s", c.ShardRunner, RunnerProcess, RunnerContainer)
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
	slice := c.ScheduleSpec().Window() / limiters.DefaultSlices
	return time.Duration(float64(slice) * latenessShare)
}

// scaled is d at the run's time scale: the schedule's Scale, so that the fleet's windows,
// the faults and the checks are timed as the schedule is.
func (c Config) scaled(d time.Duration) time.Duration { return c.ScheduleSpec().Scale(d) }

// The summary's types live in harness/result, which a report can read without Docker.
type (
	Summary        = result.Summary
	ConfigSummary  = result.ConfigSummary
	GateCheck      = result.GateCheck
	ScenarioResult = result.ScenarioResult
	ProbeResult    = result.ProbeResult
)

// Run runs every scenario the config asks for, writes summary.json into OutDir and returns
// it. A gate that fails is not an error: the summary says so (Pass false).
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if err := cfg.check(); err != nil {
		return Summary{}, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	askedLateness := cfg.Gates.LatenessP99
	cfg.Gates.LatenessP99 = cfg.latenessTolerance()
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("create the run directory: %w", err)
	}
	provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger)
	if err != nil {
		return Summary{}, err
	}
	m, err := model.RunRateLimit()
	if err != nil {
		return Summary{}, fmt.Errorf("run the document's model the run is judged beside: %w", err)
	}
	figures := m.Figures()
	// The summary's conditions are the gated system's.
	gated := cfg.Targets[:min(len(cfg.Targets), 1)]
	first, limit := cfg, limiters.DefaultLimit
	if len(gated) == 1 && gated[0] != nil {
		first, limit = cfg.forTarget(gated[0], askedLateness), gated[0].Classes[0].Limit
		cfg.Logger.Info("target", "name", gated[0].Name, "time_scale", first.TimeScale, "replicas", first.Replicas)
	}
	window := first.ScheduleSpec().Window()
	sum := Summary{Model: &figures,
		StartedAt: time.Now().UTC(), Cores: runtime.NumCPU(), Commit: cfg.Commit,
		Config: ConfigSummary{Provider: cfg.Provider, Network: fleet.Networking(cfg.Provider, cfg.Network), Replicas: first.Replicas,
			Algorithm: string(cfg.Algorithm), Mode: string(cfg.Mode), Design: cfg.Design, SyncInterval: cfg.scaled(cfg.SyncInterval),
			StoreTimeout: cfg.StoreTimeout, TimeScale: first.TimeScale, Window: window, Limit: limit,
			Rate: cfg.Rate, Clients: cfg.Clients, Seed: cfg.Seed, Outage: first.scaled(cfg.Outage), RecoveryGrace: cfg.RecoveryGrace,
			Store: cfg.clusterStore()},
		Pass: true,
	}
	cfg.started = sum.StartedAt
	if len(gated) == 1 && gated[0] != nil { // the design under test is the target file's
		sum.Config.Algorithm, sum.Config.Mode, sum.Config.SyncInterval = gated[0].Algorithm, "target "+gated[0].Name, 0
	}
	for _, run := range cfg.runs() {
		sc := run.sc
		if cfg.Only != "" && !strings.Contains(sc.Name, cfg.Only) {
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
		addScenario(&sum, res)
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
		sum.Pass, sum.Interrupted = false, true
		sum.Failed = append(sum.Failed, "interrupted")
	}
	sum.FinishedAt = time.Now().UTC()
	return sum, writeSummary(cfg.OutDir, sum)
}

// addScenario adds a judged scenario to the summary: its checks, and, when it is gated, its
// verdict.
func addScenario(sum *Summary, res ScenarioResult) {
	sum.Scenarios = append(sum.Scenarios, res)
	for _, c := range res.Checks {
		sum.Checks = append(sum.Checks, GateCheck{Scenario: res.Name, Gated: res.Gated, Check: c})
		if res.Gated && !c.Pass {
			sum.Failed = append(sum.Failed, res.Name+": "+c.Name)
		}
	}
	if res.Gated {
		sum.Pass = sum.Pass && res.Pass
		sum.GeneratorBound = sum.GeneratorBound || res.GeneratorBound
	}
	if res.Error != "" && res.Gated {
		sum.Failed = append(sum.Failed, res.Name+": "+res.Error)
	}
}

func writeSummary(dir string, s Summary) error { return result.Write(dir, result.SummaryFile, s) }

// ScheduleSpec is what the config's schedule is built from, as shards and the judge see it:
// the built-in replica's, the document's rule for every client.
func (c Config) ScheduleSpec() schedule.Spec {
	return schedule.Spec{TimeScale: c.TimeScale, Rate: c.Rate, Clients: c.Clients, Seed: c.Seed, Replicas: c.Replicas, Away: c.away}
}

// withSchedule is c with the schedule of spec: ScheduleSpec's inverse, for the judge.
func (c Config) withSchedule(s schedule.Spec) Config {
	c.TimeScale, c.Rate, c.Clients, c.Seed, c.Replicas, c.away = s.TimeScale, s.Rate, s.Clients, s.Seed, s.Replicas, s.Away
	return c
}

// sendFunc sends a scenario's schedule at the fleet as traffic.Run does: from opts' start,
// calling onStart on the origin and sink once per outcome. The sharded sender returns its
// shards' records.
type sendFunc func(ctx context.Context, s *schedule.Schedule, fl fleet.Fleet, opts traffic.Options, sink func(traffic.Outcome) error) ([]result.Shard, error)

func (c Config) send(sc Scenario) sendFunc {
	if c.Shards > 1 {
		return c.sendShards(sc)
	}
	return func(ctx context.Context, s *schedule.Schedule, fl fleet.Fleet, opts traffic.Options, sink func(traffic.Outcome) error) ([]result.Shard, error) {
		_, err := traffic.Run(ctx, s, fl.ReplicaURLs(), opts, sink)
		return nil, err
	}
}

func runScenario(ctx context.Context, cfg Config, provider fleet.Provider, sc Scenario, sys sut) (ScenarioResult, error) {
	res := ScenarioResult{Scenario: sc}
	// The fault's plan, in offsets from the start of the traffic; a killed replica's
	// requests go to the others in the schedule itself, so shards and judges send and
	// rebuild the same.
	plan := cfg.planFault(sc, sys.t)
	cfg.away = cfg.routedAway(sc, sys.t)
	window := cfg.ScheduleSpec().Window()
	sched, err := sys.schedule(cfg)
	if err != nil {
		return res, err
	}
	dir := sc.Dir(cfg.OutDir)
	fl, err := sys.start(ctx, provider, sys.spec(cfg, sc))
	if err != nil {
		return res, fmt.Errorf("start the fleet: %w", err)
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := fl.Terminate(tctx); err != nil {
			cfg.Logger.Warn("fleet teardown", "err", err)
		}
	}()
	res.Conditions = fl.Conditions()

	var rdb *redis.Client
	res.NoStore = sys.storeAddr(fl) == "" && cfg.Store != fleet.StoreCluster
	if addr := sys.storeAddr(fl); addr != "" && cfg.Store != fleet.StoreCluster { // a cluster: every master, below
		rdb = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer rdb.Close()
		// Dial now: the counters are reset on the run's origin, where a first connection's
		// handshake would hold back the first requests (CI saw starts 40-110 ms late).
		if err := rdb.Ping(ctx).Err(); err != nil {
			return res, fmt.Errorf("reach the store at %s: %w", addr, err)
		}
	}

	// The fault's planned windows, until the measured ones replace them: scenario.json's, for
	// a judge of a run killed before it ends.
	var faults []accounting.Interval
	var outage accounting.Interval
	var armed *fault.Armed // from the traffic's origin on
	if plan != nil {
		outage = accounting.Interval{From: plan.At, To: plan.Until}
		faults = []accounting.Interval{{From: outage.From, To: cfg.recoveredAt(sc.Fault, outage)}}
	}
	acc, err := accounting.New(&sched, faults)
	if err != nil {
		return res, err
	}
	w, err := traffic.Replace(dir)
	if err != nil {
		return res, err
	}
	defer w.Close()

	probes := newProbeTimes(&sched)
	faultLat := newLatency()
	var sent, errs atomic.Int64
	sink := func(o traffic.Outcome) error {
		o.Code = sys.status(o.Code)
		sent.Add(1)
		if o.Code == 0 || o.Code >= 500 {
			errs.Add(1)
		}
		probes.add(o)
		if armed != nil && o.Code != 0 && armed.Contains(o.Sent, cfg.RecoveryGrace) {
			faultLat.record(o.Latency)
		}
		if err := w.Write(o); err != nil {
			return err
		}
		return acc.Add(o)
	}

	var resetCluster func(context.Context) error
	if cfg.Store == fleet.StoreCluster {
		reset, closeServers, err := storeResetter(ctx, fl)
		if err != nil {
			return res, fmt.Errorf("the cluster store before the run: %w", err)
		}
		defer closeServers()
		resetCluster = reset
	}
	cpu := &cpuMeter{rdb: rdb}
	cpuWhy := "the target keeps its counters to itself"
	if cfg.Store == fleet.StoreCluster {
		cpuWhy = "not measured on a cluster store"
	}
	scraper, syncWhy := sys.syncScraper(cfg, sc, fl.ReplicaURLs())
	var scraping *synchealth.Running
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// traffic.Run owns the start: it waits for a window edge of the replicas' epoch-aligned
	// windows, so the schedule's window edges (the boundary burst's) are the limiters' own,
	// and calls onStart on that origin, the clock of every outcome. The store's counters and
	// the fault windows are timed on it too.
	var start time.Time
	progressDone := closed()
	stopWatch := func() *result.ClusterFault { return nil }
	onStart := func(origin time.Time) error {
		start = origin
		// What a judge needs of the scenario if the run dies before summary.json: harness
		// judge rebuilds the schedule from it and judges outcomes.csv.
		if err := writeStarted(dir, cfg, sc, sys, origin, faults, outage, res.Conditions); err != nil {
			return err
		}
		// The store's command counts cover the traffic alone, not the fleet's start or the wait.
		if resetCluster != nil {
			if err := resetCluster(ctx); err != nil {
				return fmt.Errorf("reset the store's command stats: %w", err)
			}
		}
		if rdb != nil {
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				return fmt.Errorf("reset the store's command stats: %w", err)
			}
			cpu.start(ctx, time.Now())
		}
		if len(scraper.URLs) > 0 {
			scraping = scraper.Start(runCtx, origin)
		}
		stopWatch = watchCluster(runCtx, fl, sc, origin, outage.From)
		if cfg.Shards <= 1 { // shards' outcomes arrive once they are done
			progressDone = progress(runCtx, cfg.Progress, origin, &sent, &errs, len(sched.Requests))
		}
		if plan != nil {
			armed = fault.Arm(runCtx, fl, *plan, origin, cfg.Logger)
		}
		return nil
	}
	opts := sys.options(&sched)
	opts.Align, opts.OnStart = window, onStart
	shards, runErr := cfg.send(sc)(runCtx, &sched, fl, opts, sink)
	cancel()
	res.Sync = &result.SyncHealth{Why: syncWhy}
	if scraping != nil {
		sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		h := scraping.Stop(sctx).Figures()
		stop()
		if syncWhy != "" { // scraped for the decisions made without the store alone
			h.Available, h.Why, h.Series = false, syncWhy, nil
		}
		res.Sync = &h
	}
	<-progressDone
	if !start.IsZero() {
		res.Duration = time.Since(start)
	}
	if armed != nil {
		var ferr error
		if outage, ferr = measuredFault(&res, acc, armed, cfg, sc); ferr != nil && runErr == nil && !errors.Is(ferr, fault.ErrNotMade) {
			runErr = fmt.Errorf("inject %s: %w", sc.Fault, ferr)
		}
	}
	res.Cluster = stopWatch()
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return res, runErr
	}

	if cfg.Store == fleet.StoreCluster {
		res.StoreCommands, res.StoreOps, err = storeCommandsAll(context.WithoutCancel(ctx), fl, sys.scriptCommands())
		if err != nil {
			cfg.Logger.Warn("store command stats", "err", err)
		}
	}
	res.StoreCPU, res.StoreCPUWhy = cpu.result(context.WithoutCancel(ctx), time.Now(), int(sent.Load()), cpuWhy)
	if rdb != nil {
		res.StoreCommands, res.StoreOps, err = commandstats.Read(context.WithoutCancel(ctx), rdb, sys.scriptCommands())
		if err != nil {
			cfg.Logger.Warn("store command stats", "err", err)
		}
	}
	if sched.Duration > 0 {
		res.StoreCmdPerSec = float64(res.StoreCommands) / sched.Duration.Seconds()
		res.StoreOpsPerSec = float64(res.StoreOps) / sched.Duration.Seconds()
	}
	rep := acc.Report()
	fillResult(&res, &rep, cfg, sc, probes, outage, faultLat)
	if cfg.Store == fleet.StoreCluster {
		if c, ok := storeAgreement(ctx, fl, cfg, sc, &res, start, outage); ok {
			res.Checks = append(res.Checks, c)
			res.Pass = res.Pass && c.Pass
		}
	}
	if shards != nil {
		judgeSkew(&res, shards, cfg.Gates.LatenessP99)
	}
	return res, nil
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
