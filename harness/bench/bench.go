// Package bench measures how fast and cheap the limiter is, as ratios measured side by side
// in one run, because absolute figures on a shared machine drift: the in-process
// decision cost beside x/time/rate, the fleet's ceiling beside no-op replicas, the store's
// commands in central and delayed sync, a peer limiter (go-redis/redis_rate) in the same
// run, the store's memory per tracked client in each counter layout, and the latency the
// limiter adds. Run measures; Figures turns the measurements into the table with each
// figure's target and conditions; WriteTable prints it.
package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/edgeproof/rlharness/limiters"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/internal/commandstats"
)

// Fleet names in bench.json, one per target or mode measured.
const (
	FleetNoop    = "noop"
	FleetDelayed = string(limiters.ModeDelayed)
	FleetCentral = string(limiters.ModeCentral)
	FleetPeer    = string(limiters.ModePeerGCRA)
)

// Config is a bench run as the command line asks for it.
type Config struct {
	Provider string   // fleet provider: docker | local
	Networks []string // docker networking modes to measure, in order: host, bridge
	Replicas int      // HS4: 8
	Step     time.Duration
	Search   Search
	Clients  int // background clients each step draws from (HS1)
	Seed     uint64
	// MaxLateness is the generator's p99 lateness a step may have and still be sustained
	// (0: the load test's gate, accounting.DefaultLatenessP99).
	MaxLateness time.Duration
	// MemoryClients are loaded into each counter layout (HS1: 200,000).
	MemoryClients int
	RedisServer   string // redis-server for the memory figure; default BinDir's, else from PATH
	// BinDir holds prebuilt programs for the local provider (the HS2 kit's bin/): the
	// targets, redis-server and redis-cli, in place of go build and PATH.
	BinDir string
	// Skip parts of the run.
	NoDecisions, NoMemory, NoFleet, NoPeer bool
	// NoCluster skips figure 7 (a Redis Cluster store); ClusterRate is its offered rate.
	NoCluster   bool
	ClusterRate float64
	// NoGenerator skips plain Vegeta's search and the generator profiles; GeneratorOnly
	// measures only the generator (the no-op fleet with the harness's sender and with plain
	// Vegeta, and both profiles), none of the limiter fleets.
	NoGenerator, GeneratorOnly bool
	// ProfileDir, when set, receives the generator profiles' raw pprof files.
	ProfileDir string
	// Baseline, when set, is an earlier bench.json whose generator profiles the report
	// shows beside this run's (before and after a change to the generator).
	Baseline string
	// Slice, when set, measures one replica's share of HS2 system by system (harness bench
	// --slice) in place of the other figures.
	Slice    *SliceConfig
	Commit   string
	Logger   *slog.Logger
	Progress io.Writer
}

// DefaultConfig fits `make bench` on 2 cores in about five minutes: host networking, 5 s
// steps, the document's 200,000 clients.
func DefaultConfig() Config {
	return Config{
		Provider: "docker", Networks: []string{fleet.NetworkHost}, Replicas: model.Nodes,
		Step: 5 * time.Second, Search: DefaultSearch(), Clients: model.TrackedClients,
		Seed: model.DistSeed, MemoryClients: model.TrackedClients, ClusterRate: DefaultClusterRate,
	}
}

func (c Config) check() error {
	switch {
	case c.Replicas <= 0:
		return fmt.Errorf("--replicas must be > 0 (got %d)", c.Replicas)
	case c.Step < time.Second:
		return fmt.Errorf("--step must be at least 1s (got %v): shorter steps measure the generator's start", c.Step)
	case c.Clients <= 0 || c.MemoryClients <= 0:
		return fmt.Errorf("--clients and --memory-clients must be > 0 (got %d, %d)", c.Clients, c.MemoryClients)
	case !c.NoFleet && len(c.Networks) == 0:
		return errors.New("--network: name at least one of host, bridge")
	case c.GeneratorOnly && (c.NoGenerator || c.NoFleet):
		return errors.New("--generator-only measures the generator on the no-op fleet: drop --no-generator and --no-fleet")
	}
	for _, n := range c.Networks {
		if n != fleet.NetworkHost && n != fleet.NetworkBridge {
			return fmt.Errorf("--network %q: use host or bridge", n)
		}
	}
	if c.Slice != nil {
		if len(c.Networks) != 1 {
			return errors.New("--slice measures one networking mode: give one --network")
		}
		if err := c.Slice.check(c.Provider); err != nil {
			return err
		}
	}
	return c.Search.check()
}

// Run measures everything the config asks for and returns bench.json's content with its
// table filled in. A part that cannot be measured is recorded in Errors and its figures are
// marked not measured; the error returned is for a config that cannot run at all, or ctx.
func Run(ctx context.Context, cfg Config) (result.Bench, error) {
	if err := cfg.check(); err != nil {
		return result.Bench{}, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.RedisServer == "" && cfg.BinDir != "" {
		var err error
		if cfg.RedisServer, err = fleet.ToolIn(cfg.BinDir, "redis-server"); err != nil {
			return result.Bench{}, err
		}
	}
	b := result.Bench{StartedAt: time.Now().UTC(), Commit: cfg.Commit, Cores: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0), MaxLateness: cfg.gates().LatenessP99}
	if cfg.Baseline != "" {
		old, err := result.Read[result.Bench](filepath.Dir(cfg.Baseline), filepath.Base(cfg.Baseline))
		if err != nil {
			return result.Bench{}, fmt.Errorf("--baseline: %w", err)
		}
		if len(old.Profiles) == 0 {
			return result.Bench{}, fmt.Errorf("--baseline %s holds no generator profiles: give a bench.json from a run that measured the generator", cfg.Baseline)
		}
		b.Baseline = &result.ProfileBaseline{From: cfg.Baseline, Commit: old.Commit, StartedAt: old.StartedAt, Profiles: old.Profiles}
	}
	if cfg.Slice != nil {
		var err error
		b.Slice, err = runSlice(ctx, cfg)
		if err != nil && ctx.Err() == nil {
			b.Errors = append(b.Errors, "slice: "+err.Error())
		}
		b.FinishedAt = time.Now().UTC()
		b.Figures = Figures(b)
		return b, ctx.Err()
	}
	if !cfg.NoDecisions {
		fmt.Fprintln(cfg.Progress, "== 1. in-process decision cost (testing.B, beside x/time/rate)")
		b.Decisions = Decisions("")
		for _, d := range b.Decisions {
			fmt.Fprintf(cfg.Progress, "   %-26s %8.1f ns/op %3d allocs/op  %.2fx x/time/rate\n", d.Name, d.NsPerOp, d.AllocsPerOp, d.VsRate)
		}
	}
	if !cfg.NoMemory && ctx.Err() == nil {
		fmt.Fprintf(cfg.Progress, "== 5. store memory: %d clients through each counter layout\n", cfg.MemoryClients)
		m, err := Memory(ctx, cfg.RedisServer, cfg.MemoryClients, cfg.Seed)
		b.Memory = m
		if err != nil {
			b.Errors = append(b.Errors, "memory: "+err.Error())
		}
		for _, l := range m {
			fmt.Fprintf(cfg.Progress, "   %-62s %7.1f B/client (MEMORY USAGE %6.1f), loaded in %.1fs\n", l.Name, l.PerClient, l.SampleUsage, l.LoadTime)
		}
	}
	if !cfg.NoFleet {
		provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger, fleet.WithBinDir(cfg.BinDir))
		if err != nil {
			return b, err
		}
		networks := cfg.Networks
		if cfg.Provider == fleet.ProviderLocal { // loopback whatever is asked: measure it once
			networks = networks[:1]
		}
		for _, network := range networks {
			if ctx.Err() != nil {
				break
			}
			fl, profiles, err := fleets(ctx, cfg, provider, network)
			b.Fleets = append(b.Fleets, fl...)
			b.Profiles = append(b.Profiles, profiles...)
			if err != nil {
				b.Errors = append(b.Errors, fmt.Sprintf("fleets (%s): %v", network, err))
				cfg.Logger.Error("fleet measurement failed", "network", network, "err", err)
			}
		}
	}
	if !cfg.NoCluster && !cfg.GeneratorOnly && ctx.Err() == nil {
		provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger, fleet.WithBinDir(cfg.BinDir))
		if err != nil {
			return b, err
		}
		b.Cluster = Cluster(ctx, cfg, provider)
		if b.Cluster.Error != "" {
			b.Errors = append(b.Errors, "cluster: "+b.Cluster.Error)
		}
	}
	b.FinishedAt = time.Now().UTC()
	b.Figures = Figures(b)
	return b, ctx.Err()
}

// fleets measures, in one networking mode: the ceilings of 8 no-op replicas (the harness's
// sender against them is the generator's ceiling), of plain Vegeta's constant-rate attack on
// the same replicas, of 8 limiter replicas in delayed sync and of the peer, searched in turn
// step by step; then each generator profiled over one step at the lower generator ceiling;
// then, at the same shared rate (half the lower of the no-op and delayed ceilings), each
// fleet once for its p99 and the store's commands in central and delayed sync and for the
// peer; then the no-op and delayed fleets in turn, a few runs each at the shared rate and
// at half of it, for the latency the limiter adds.
func fleets(ctx context.Context, cfg Config, provider fleet.Provider, network string) ([]result.FleetBench, []result.Profile, error) {
	b := newFleetBench(cfg, provider, network)
	defer func() {
		for _, m := range b.all {
			m.stop(ctx, cfg.Logger)
		}
	}()
	if err := b.ceilings(ctx); err != nil {
		return b.out(), b.profiles, err
	}
	if cfg.GeneratorOnly {
		return b.out(), b.profiles, nil
	}
	err := b.steadyRuns(ctx)
	return b.out(), b.profiles, err
}

// fleetBench is fleets' measurement in one networking mode: its fleets and what they gave.
type fleetBench struct {
	cfg      Config
	provider fleet.Provider
	network  string
	noop     *member
	delayed  *member
	central  *member
	searched []*member          // the fleets whose ceilings are searched: no-op, delayed, the peer
	all      []*member          // searched and central, in the order of the figures
	vg       *result.FleetBench // plain Vegeta on the no-op fleet; nil when not measured
	profiles []result.Profile
}

func newFleetBench(cfg Config, provider fleet.Provider, network string) *fleetBench {
	b := &fleetBench{cfg: cfg, provider: provider, network: network}
	b.noop = &member{name: FleetNoop, spec: fleet.Spec{Target: fleet.TargetNoop, Replicas: cfg.Replicas, Network: network}}
	b.delayed = &member{name: FleetDelayed, spec: fleet.Spec{Target: fleet.TargetReplica, Mode: limiters.ModeDelayed, Design: limiters.DesignBounded, Replicas: cfg.Replicas, Network: network}}
	b.central = &member{name: FleetCentral, spec: fleet.Spec{Target: fleet.TargetReplica, Mode: limiters.ModeCentral, Replicas: cfg.Replicas, Network: network}}
	peer := &member{name: FleetPeer, spec: fleet.Spec{Target: fleet.TargetReplica, Mode: limiters.ModePeerGCRA, Replicas: cfg.Replicas, Network: network}}
	b.searched = []*member{b.noop, b.delayed}
	switch {
	case cfg.GeneratorOnly:
		b.searched = b.searched[:1]
	case !cfg.NoPeer:
		b.searched = append(b.searched, peer)
	}
	b.all = append(b.searched[:len(b.searched):len(b.searched)], b.central)
	if cfg.GeneratorOnly {
		b.all = b.searched
	}
	return b
}

// out is every fleet's figures so far, plain Vegeta's after the no-op fleet's.
func (b *fleetBench) out() []result.FleetBench {
	var fs []result.FleetBench
	for _, m := range b.all {
		m.res.Network = b.network
		fs = append(fs, m.res)
		if m == b.noop && b.vg != nil {
			b.vg.Network, b.vg.Conditions = b.network, b.noop.res.Conditions
			fs = append(fs, *b.vg)
		}
	}
	return fs
}

// ceilings starts the searched fleets and searches their ceilings step by step in turn,
// plain Vegeta's on the no-op fleet among them, then profiles both generators.
func (b *fleetBench) ceilings(ctx context.Context) error {
	cfg := b.cfg
	for _, m := range b.searched {
		if err := m.start(ctx, cfg, b.provider); err != nil {
			return err
		}
	}
	var names []string
	var sends []Sender
	for _, m := range b.searched {
		names = append(names, m.name)
		sends = append(sends, m.sender(cfg))
		if m == b.noop && !cfg.NoGenerator {
			b.vg = &result.FleetBench{Name: FleetVegeta}
			names = append(names, FleetVegeta+" (plain, on the no-op fleet)")
			sends = append(sends, vegetaSender(cfg, b.noop.vegeta(cfg)))
		}
	}
	fmt.Fprintf(cfg.Progress, "== 2/4. ceilings, %s networking, %d replicas each: %s, step by step in turn (%s steps)\n", fleet.Networking(cfg.Provider, b.network), cfg.Replicas, strings.Join(names, ", "), cfg.Step)
	cs, errs := cfg.Search.Interleave(ctx, sends...)
	k := 0
	for _, m := range b.searched {
		for _, res := range []*result.FleetBench{&m.res, b.vg} {
			if res == b.vg && (m != b.noop || b.vg == nil) {
				continue
			}
			res.Ceiling, res.Capped, res.Steps = cs[k].Rate, cs[k].Capped, cs[k].Steps
			if errs[k] != nil {
				res.Error = errs[k].Error()
			}
			k++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if b.vg != nil {
		var err error
		if b.profiles, err = profileGenerators(ctx, cfg, b.noop, b.vg.Ceiling); err != nil {
			return err
		}
	}
	return nil
}

// steadyRuns runs every searched fleet at one shared rate (half the lower of the no-op and
// delayed ceilings), then the latency the limiter adds (figure 6: the no-op and delayed
// fleets in turn, a few runs each, at the shared rate and at half of it), then the central
// fleet at the shared rate alone.
func (b *fleetBench) steadyRuns(ctx context.Context) error {
	cfg := b.cfg
	shared := sharedRate(b.noop.res.Ceiling, b.delayed.res.Ceiling, cfg.Search.Min)
	fmt.Fprintf(cfg.Progress, "== 3/4/6. steady runs at %s req/s (half the lower ceiling), %s networking\n", result.Rate(shared), fleet.Networking(cfg.Provider, b.network))
	for _, m := range b.searched {
		if err := m.steady(ctx, cfg, shared); err != nil {
			return err
		}
	}
	if err := latencyRounds(ctx, cfg, b.noop, b.delayed, latencyRates(shared, cfg.Search.Min)); err != nil {
		return err
	}
	for _, m := range b.searched {
		if m != b.delayed {
			m.stop(ctx, cfg.Logger)
		}
	}
	if err := b.central.start(ctx, cfg, b.provider); err != nil {
		return err
	}
	return b.central.steady(ctx, cfg, shared)
}

// sharedRate is the rate every fleet is measured at side by side: half the lower ceiling
// ("half the measured ceiling"), at least min.
func sharedRate(a, b, floor float64) float64 {
	c := math.Min(a, b)
	if c <= 0 {
		c = math.Max(a, b)
	}
	return math.Max(math.Round(c/2), floor)
}

// member is one fleet of the run and what it measured.
type member struct {
	name string
	spec fleet.Spec
	fl   fleet.Fleet
	rdb  *redis.Client
	res  result.FleetBench
	// A slice's system: what being one node of the fleet means to it, and for a target
	// file's limiter its request shape, statuses and scripts' commands (loadtest.DriveTarget).
	notion  string
	shape   func(*schedule.Schedule) traffic.Options
	status  func(uint16) uint16
	scripts commandstats.Set
}

func (m *member) start(ctx context.Context, cfg Config, provider fleet.Provider) error {
	m.res.Name = m.name
	fl, err := provider.Start(ctx, m.spec)
	if err != nil {
		m.res.Error = err.Error()
		return fmt.Errorf("start the %s fleet: %w", m.name, err)
	}
	m.fl = fl
	m.res.Conditions = fl.Conditions()
	if m.spec.Target != fleet.TargetNoop {
		m.rdb = redis.NewClient(&redis.Options{Addr: fl.RedisAddr(), MaxRetries: -1})
	}
	return nil
}

func (m *member) stop(ctx context.Context, log *slog.Logger) {
	if m.fl == nil {
		return
	}
	if m.rdb != nil {
		_ = m.rdb.Close()
		m.rdb = nil
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := m.fl.Terminate(tctx); err != nil {
		log.Warn("fleet teardown", "fleet", m.name, "err", err)
	}
	m.fl = nil
}

// gates are what a step is judged on: the load test's, with --max-lateness where given.
func (cfg Config) gates() accounting.Gates {
	g := accounting.DefaultGates()
	if cfg.MaxLateness > 0 {
		g.LatenessP99 = cfg.MaxLateness
	}
	return g
}

func (m *member) stepper(cfg Config) *stepper {
	s := &stepper{
		urls: m.fl.ReplicaURLs(), d: cfg.Step, clients: cfg.Clients, seed: cfg.Seed,
		gates: cfg.gates(), timeout: 2 * time.Second, shape: m.shape, status: m.status,
	}
	if cfg.Slice != nil {
		// Each system's first traffic is its steady run: warmed as a load test's scenario is,
		// its figures are read from the origin on, after the warm-up.
		r := cfg.Slice.recipe(cfg.Seed)
		s.slice, s.warm = &r, sliceWarm
		if m.spec.Target == fleet.TargetReplica {
			n := synchealth.Replica()
			s.degraded = &synchealth.Scraper{URLs: s.urls, Names: synchealth.Names{Path: n.Path, StoreErrors: n.StoreErrors, Degraded: n.Degraded}, Every: synchealth.MaxEvery}
		}
	}
	return s
}

// sender is the fleet's step sender for a ceiling search, printing each step.
func (m *member) sender(cfg Config) Sender {
	s := m.stepper(cfg)
	return func(ctx context.Context, rate float64) (result.Step, error) {
		st, err := s.send(ctx, rate)
		if err == nil {
			printStep(cfg, m.name, st)
		}
		return st, err
	}
}

func printStep(cfg Config, name string, st result.Step) {
	fmt.Fprintf(cfg.Progress, "   %-9s %7s req/s asked  %7s achieved  p99 %7.2f ms  lateness p99 %7.2f ms  %d errors  %s\n",
		name, result.Rate(st.Rate), result.Rate(st.Achieved), ms(st.Latency.P99), ms(st.Lateness.P99), st.Errors, verdict(st))
}

// steady runs the fleet at rate for one step and counts the store's commands over it; in a
// slice, for the slice's steady length, reading too what the replica's process, this one
// and the store's memory grew by over its traffic.
func (m *member) steady(ctx context.Context, cfg Config, rate float64) error {
	s := m.stepper(cfg)
	var cpu storeCPU
	var pm *processMeter
	if cfg.Slice != nil {
		s.d = cfg.Slice.Steady
		pm = &processMeter{m: m}
		s.after = pm.stop
	}
	if m.rdb != nil || pm != nil {
		s.before = func(ctx context.Context) error {
			if m.rdb != nil {
				if err := m.rdb.ConfigResetStat(ctx).Err(); err != nil {
					return fmt.Errorf("reset the store's command stats: %w", err)
				}
				cpu.start(ctx, m.rdb)
			}
			if pm != nil {
				pm.start(ctx)
			}
			return nil
		}
	}
	st, err := s.send(ctx, rate)
	if err != nil {
		m.res.Error = err.Error()
		return fmt.Errorf("%s steady run: %w", m.name, err)
	}
	m.res.Steady = &st
	if pm != nil {
		pm.record(&m.res, st)
	}
	if m.rdb != nil {
		touches, ops, err := commandstats.Read(context.WithoutCancel(ctx), m.rdb, m.scriptCommands())
		if err != nil {
			m.res.Error = err.Error()
			return fmt.Errorf("%s store commands: %w", m.name, err)
		}
		m.res.StoreCommands, m.res.StoreOps = touches, ops
		m.res.StoreCmdPerSec = float64(touches) / st.Duration.Seconds()
		if st.Answered > 0 {
			m.res.StoreCmdPerRequest = float64(touches) / float64(st.Answered)
			m.res.StoreScriptCmdPerRequest = float64(ops-touches) / float64(st.Answered)
		}
		m.res.StoreCPU, m.res.StoreCPUWhy = cpu.result(context.WithoutCancel(ctx), m.rdb, st.Answered)
	}
	fmt.Fprintf(cfg.Progress, "   %-9s %7s req/s asked  %7s achieved  p99 %6.2f ms  store %8.1f commands/s  %s\n",
		m.name, result.Rate(st.Rate), result.Rate(st.Achieved), ms(st.Latency.P99), m.res.StoreCmdPerSec, verdict(st))
	if pm != nil {
		printCost(cfg, m.res)
	}
	return nil
}

func verdict(st result.Step) string {
	if st.Sustained {
		return "sustained"
	}
	return "NOT sustained: " + st.Why
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
