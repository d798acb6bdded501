package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/internal/procstat"
	"github.com/edgeproof/rlharness/limiters"
)

// Names of the built-in systems of a slice (harness bench --slice); a target file's system
// is named by its file.
const (
	SliceNoop     = FleetNoop                       // the no-op target: the floor of every figure
	SliceBounded  = string(limiters.DesignBounded)  // the replica, delayed sync, the bounded design
	SliceDocument = string(limiters.DesignDocument) // the replica, delayed sync, the document's design
	SlicePeer     = "redis_rate"                    // the replica in --mode peer-gcra: go-redis/redis_rate
)

// Targets of one replica's share of HS2 (make bench-slice, docs/bench.md), judged on the slice.
const (
	TargetSliceCPURatio   = 1.2 // the bounded replica's CPU per decision <= 1.2 × the no-op replica's
	TargetSliceStoreBusy  = 0.5 // Redis under half busy at its share of a core
	TargetSliceCeilingVsP = 1.5 // the bounded replica's ceiling >= 1.5 × redis_rate's
)

// SliceConfig is one replica's share of HS2 (harness bench --slice): the replica runs as
// node Node of Nodes, sent Rate req/s drawn from Clients clients plus the probes' share for
// its node (schedule.BuildSlice), time-scaled as make loadtest, with its Redis held to
// StoreCPU of a core so that the store is as busy per request as with Nodes nodes.
type SliceConfig struct {
	Rate        float64 // HS2 / HS4: 5,000
	Clients     int     // HS1 / HS4: 25,000
	Node, Nodes int     // 0 of HS4's 8
	TimeScale   float64 // 0.2, as make loadtest
	StoreCPU    float64 // 1 / HS4 of a core
	// Steady is how long each system's steady run lasts: one window at the time scale.
	Steady time.Duration
	// Systems are measured in this order after the no-op replica, which is always first:
	// SliceBounded, SliceDocument, SlicePeer, or a target file's path.
	Systems []string
	// SteadyOnly measures the steady runs alone, the costs a plan fits (make plan-reference):
	// no latency rounds, no ceiling search, whose figures then read not measured.
	SteadyOnly bool
}

// DefaultSlice is one replica's share of the documents' load.
func DefaultSlice() SliceConfig {
	return SliceConfig{
		Rate: model.PeakRate / model.Nodes, Clients: model.TrackedClients / model.Nodes, Node: 0, Nodes: model.Nodes,
		TimeScale: 0.2, StoreCPU: 1.0 / model.Nodes, Steady: 12 * time.Second,
		Systems: []string{SliceNoop, SliceBounded, SliceDocument, SlicePeer, "targets/peers/envoy-ratelimit.yaml"},
	}
}

// DefaultSliceSearch searches each system's ceiling from the slice's rate: up by 1.5× to four
// times it (down by 1.5× from a first step that fails), one bisection, failures confirmed.
func DefaultSliceSearch(rate float64) Search {
	return Search{Start: rate, Min: 100, Max: 4 * rate, Factor: 1.5, Refine: 1, MaxSteps: 6, Confirm: true}
}

// Step is a slice's default step: one window at its time scale. The bounded design's store
// calls are made past a client's budget in a window, so a shorter step sends each client
// fewer requests a window than the rate does in the long run and finds a higher ceiling
// (8,438 req/s in 5 s steps was 8,000 failing open in a 12 s run on this machine).
func (c SliceConfig) Step() time.Duration { return c.window() }

func (c SliceConfig) check(provider string) error {
	switch {
	case !(c.Rate > 0) || c.Clients <= 0:
		return fmt.Errorf("--slice: the rate and the clients must be > 0 (got %v, %d)", c.Rate, c.Clients)
	case c.Nodes < 1 || c.Node < 0 || c.Node >= c.Nodes:
		return fmt.Errorf("--slice: node %d of %d: want 0 <= node < nodes", c.Node, c.Nodes)
	case schedule.CheckTimeScale(c.TimeScale) != nil:
		return schedule.CheckTimeScale(c.TimeScale)
	case c.StoreCPU < 0 || c.StoreCPU > 1:
		return fmt.Errorf("--store-cpu %v: give a share of one core in (0, 1], or 0 for none", c.StoreCPU)
	case c.StoreCPU > 0 && provider == fleet.ProviderLocal:
		return fmt.Errorf("--store-cpu %v holds Redis to a share of a core with a container's CPU quota: use --provider docker, or --store-cpu 0 to run Redis unheld (its figures then describe an unheld Redis)", c.StoreCPU)
	case c.Steady < time.Second:
		return fmt.Errorf("--slice-steady must be at least 1s (got %v)", c.Steady)
	}
	seen := map[string]bool{}
	for _, s := range c.Systems {
		if seen[s] {
			return fmt.Errorf("--slice-systems names %s twice", s)
		}
		seen[s] = true
	}
	if !seen[SliceBounded] {
		return fmt.Errorf("--slice-systems must name %s: the slice's targets are the bounded design's", SliceBounded)
	}
	return nil
}

// recipe is the slice's traffic as each step builds it, at the rate and length it asks.
func (c SliceConfig) recipe(seed uint64) schedule.Slice {
	return schedule.Slice{TimeScale: c.TimeScale, Rate: c.Rate, Clients: c.Clients, Node: c.Node, Nodes: c.Nodes, Duration: c.Steady, Seed: seed}
}

// window is the documents' window at the slice's time scale: the replicas' rule window.
func (c SliceConfig) window() time.Duration { return c.recipe(0).Window() }

// sliceMembers are the slice's systems as members of the run, the no-op replica first.
func sliceMembers(cfg Config, network string) ([]*member, error) {
	sc := *cfg.Slice
	names := append([]string{SliceNoop}, sc.Systems...)
	var out []*member
	for _, name := range names {
		if name == SliceNoop && len(out) > 0 {
			continue
		}
		m, err := sliceMember(sc, name, network)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// sliceMember is one system of the slice on a fleet of one replica told it is node Node of
// Nodes, with its Redis held to StoreCPU of a core.
func sliceMember(sc SliceConfig, name, network string) (*member, error) {
	replica := func(mode limiters.Mode, design limiters.Design) fleet.Spec {
		return fleet.Spec{Target: fleet.TargetReplica, Mode: mode, Design: design, Replicas: 1, NodeCount: sc.Nodes,
			Rules: loadtest.RulesYAML(limiters.SlidingWindow, sc.window()), SyncInterval: schedule.Spec{TimeScale: sc.TimeScale}.Scale(limiters.DefaultSyncInterval),
			Network: network, StoreCPU: sc.StoreCPU}
	}
	of := fmt.Sprintf("node %d of %d", sc.Node, sc.Nodes)
	rule := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow, Limit: limiters.DefaultLimit, Window: sc.window(), Slices: limiters.DefaultSlices}
	switch name {
	case SliceNoop:
		return &member{name: name, spec: fleet.Spec{Target: fleet.TargetNoop, Replicas: 1, Network: network, StoreCPU: sc.StoreCPU},
			notion: "none: answers 200 without deciding"}, nil
	case SliceBounded:
		spec := replica(limiters.ModeDelayed, limiters.DesignBounded)
		return &member{name: name, spec: spec, notion: fmt.Sprintf("%s: decides up to %d of a client's requests a window alone (its budget as one of %d), past that one store call each; reads the store's epoch every %v",
			of, limiters.BoundsFor(&rule, sc.Nodes).Budget, sc.Nodes, spec.SyncInterval)}, nil
	case SliceDocument:
		spec := replica(limiters.ModeDelayed, limiters.DesignDocument)
		return &member{name: name, spec: spec, notion: fmt.Sprintf("%s: decides on its own counts and the fleet's last view, pushes its counts and pulls the view every %v", of, spec.SyncInterval)}, nil
	case SlicePeer:
		return &member{name: name, spec: replica(limiters.ModePeerGCRA, ""),
			notion: "none: one Redis script (GCRA) per decision, whatever the fleet's size"}, nil
	}
	t, err := target.Load(name)
	if err != nil {
		return nil, fmt.Errorf("--slice-systems %s: a system is %s, %s, %s or a target file: %w", name, SliceBounded, SliceDocument, SlicePeer, err)
	}
	if !t.Store.Managed {
		return nil, fmt.Errorf("--slice-systems %s: the slice holds the system's Redis to a share of a core, and the harness does not run this target's store (store.redis is not managed)", name)
	}
	d, err := loadtest.DriveTarget(t, network)
	if err != nil {
		return nil, fmt.Errorf("--slice-systems %s: %w", name, err)
	}
	d.Spec.Replicas, d.Spec.NodeCount, d.Spec.StoreCPU = 1, sc.Nodes, sc.StoreCPU
	notion := "none: its target file gives it no node index or count, so every replica decides alike"
	if usesNodes(t.Start) {
		notion = fmt.Sprintf("%s, as its target file's {{node}} and {{nodes}} tell it", of)
	}
	if w := t.Window(); w != sc.window() {
		notion += fmt.Sprintf("; its window is its file's %v, not the slice's %v", w, sc.window())
	}
	return &member{name: t.Name, spec: d.Spec, shape: d.Traffic, status: d.Status, scripts: d.Scripts, notion: notion}, nil
}

// usesNodes says whether a target's start names its node or the fleet's size anywhere.
func usesNodes(s target.Start) bool {
	var all []string
	all = append(all, s.Command...)
	for _, v := range s.Env {
		all = append(all, v)
	}
	for _, f := range s.Files {
		all = append(all, string(f.Content))
	}
	for _, a := range all {
		if strings.Contains(a, target.VarNode) || strings.Contains(a, target.VarNodes) {
			return true
		}
	}
	return false
}

// runSlice measures the slice: every system's fleet started; the no-op replica's steady run
// at the rate asked, stepped down where it fell behind its schedule twice (the most this
// machine sends); every other system's steady run at that rate (sent again once where it
// fell behind); the p99 the bounded design adds over
// the no-op replica in rounds taken in turn; then every system's ceiling, searched step by
// step in turn.
func runSlice(ctx context.Context, cfg Config) (*result.SliceBench, error) {
	sc := *cfg.Slice
	network := cfg.Networks[0]
	out := &result.SliceBench{Traffic: sc.recipe(cfg.Seed), Rate: sc.Rate, StoreCPU: sc.StoreCPU}
	provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger, fleet.WithBinDir(cfg.BinDir))
	if err != nil {
		return out, err
	}
	members, err := sliceMembers(cfg, network)
	if err != nil {
		return out, err
	}
	defer func() {
		for _, m := range members {
			m.stop(ctx, cfg.Logger)
		}
	}()
	collect := func() {
		out.Systems = out.Systems[:0]
		for _, m := range members {
			m.res.Network, m.res.Nodes = network, m.notion
			out.Systems = append(out.Systems, m.res)
		}
	}
	defer collect()
	var errs []error
	var up []*member
	fmt.Fprintf(cfg.Progress, "== slice: one replica as node %d of %d, %s req/s from %s clients and the probes' share, time scale %g, %s, %s networking\n",
		sc.Node, sc.Nodes, result.Rate(sc.Rate), result.Rate(float64(sc.Clients)), sc.TimeScale, heldTo(sc.StoreCPU), fleet.Networking(cfg.Provider, network))
	for _, m := range members {
		if err := m.start(ctx, cfg, provider); err != nil {
			errs = append(errs, err)
			cfg.Logger.Error("slice system did not start", "system", m.name, "err", err)
			fmt.Fprintf(cfg.Progress, "   %-16s did not start: %v\n", m.name, err)
			continue
		}
		up = append(up, m)
	}
	noop, bounded := memberNamed(up, SliceNoop), memberNamed(up, SliceBounded)
	if noop == nil || bounded == nil {
		return out, errors.Join(append(errs, errors.New("the slice needs the no-op replica and the bounded design running: see above"))...)
	}
	fmt.Fprintf(cfg.Progress, "== steady runs of %.0f s, one system after another\n", sc.Steady.Seconds())
	out.Rate, out.RateWhy, err = settleRate(ctx, cfg, noop, sc.Rate)
	if err != nil {
		return out, errors.Join(append(errs, err)...)
	}
	for _, m := range up[1:] {
		if _, err := confirmedSteady(ctx, cfg, m, out.Rate); err != nil {
			errs = append(errs, err)
		}
	}
	if sc.SteadyOnly {
		fmt.Fprintln(cfg.Progress, "== no latency rounds, no ceiling search (--steady-only)")
		return out, errors.Join(errs...)
	}
	if ctx.Err() == nil {
		if err := latencyRounds(ctx, cfg, noop, bounded, []float64{out.Rate}); err != nil {
			errs = append(errs, err)
		}
	}
	if ctx.Err() == nil {
		fmt.Fprintf(cfg.Progress, "== ceilings, step by step in turn (%s steps)\n", cfg.Step)
		var sends []Sender
		for _, m := range up {
			sends = append(sends, m.sender(cfg))
		}
		cs, serrs := cfg.Search.Interleave(ctx, sends...)
		for k, m := range up {
			m.res.Ceiling, m.res.Capped, m.res.Steps = cs[k].Rate, cs[k].Capped, cs[k].Steps
			if serrs[k] != nil {
				m.res.Error = serrs[k].Error()
				errs = append(errs, serrs[k])
			}
		}
	}
	return out, errors.Join(errs...)
}

// sliceWarm is how many connections a slice's step opens and warms before its origin: the
// load test's 8 per replica.
const sliceWarm = 8

// sliceRateTries is how often the slice's rate steps down by sliceRateStep when the no-op
// replica's steady run fell behind its schedule at it.
const (
	sliceRateTries = 3
	sliceRateStep  = 0.8
)

// settleRate is the rate every steady run is sent at: the rate asked where the no-op
// replica's steady run at it kept its schedule, else the highest of a few lower rates at
// which it did (the most this machine sends), why saying so. A run that fell behind is sent
// again once before the rate steps down, as a search confirms a failed step: on a shared
// machine one neighbour's burst can put a run behind. A run that failed otherwise (errors)
// keeps the rate: its figures are not measured, and say why.
func settleRate(ctx context.Context, cfg Config, noop *member, asked float64) (rate float64, why string, err error) {
	rate = asked
	var behind []string
	for try := 0; ; try++ {
		st, err := confirmedSteady(ctx, cfg, noop, rate)
		if err != nil {
			return rate, "", err
		}
		if st.Sustained || !st.GeneratorBound || st.Errors > 0 || try == sliceRateTries {
			break
		}
		behind = append(behind, fmt.Sprintf("%s (twice; %s)", result.Rate(rate), st.Why))
		rate = math.Round(rate * sliceRateStep)
	}
	if len(behind) > 0 {
		why = fmt.Sprintf("asked %s req/s; the no-op replica's steady run fell behind its schedule at %s, so every system ran at %s req/s, the most this machine sent",
			result.Rate(asked), strings.Join(behind, ", "), result.Rate(rate))
		if !noop.res.Steady.Sustained {
			why = fmt.Sprintf("asked %s req/s; the no-op replica's steady run fell behind its schedule at every rate tried (%s, and %s: %s): every figure of the steady runs is not measured",
				result.Rate(asked), strings.Join(behind, ", "), result.Rate(rate), noop.res.Steady.Why)
		}
	}
	return rate, why, nil
}

// confirmedSteady is m's steady run at rate, sent again once when it fell behind its
// schedule; the second run's figures stand.
func confirmedSteady(ctx context.Context, cfg Config, m *member, rate float64) (*result.Step, error) {
	if err := m.steady(ctx, cfg, rate); err != nil {
		return nil, err
	}
	if st := m.res.Steady; st.Sustained || !st.GeneratorBound || st.Errors > 0 {
		return st, nil
	}
	if err := m.steady(ctx, cfg, rate); err != nil {
		return nil, err
	}
	return m.res.Steady, nil
}

func memberNamed(ms []*member, name string) *member {
	for _, m := range ms {
		if m.name == name {
			return m
		}
	}
	return nil
}

// processMeter reads what a slice's steady run cost around its traffic: the replica's
// process and this one (the generator) from /proc, and the store's memory.
type processMeter struct {
	m              *member
	pid            int
	replica, self  [2]procstat.Usage
	replicaErr     error
	selfErr        error
	mem            [2]int64
	keys           int64
	memErr         error
	startedReading bool
}

func (p *processMeter) start(ctx context.Context) {
	p.startedReading = true
	if pf, ok := p.m.fl.(fleet.Processes); ok {
		p.pid, p.replicaErr = pf.PID(ctx, fleet.ReplicaMember(0))
	} else {
		p.replicaErr = errors.New("the fleet's members are not processes of this host")
	}
	if p.replicaErr == nil {
		p.replica[0], p.replicaErr = procstat.Read(p.pid)
	}
	if p.m.rdb != nil {
		p.mem[0], p.memErr = usedMemory(ctx, p.m.rdb)
	}
	p.self[0], p.selfErr = procstat.Self() // last: nearest the traffic
}

func (p *processMeter) stop(ctx context.Context) {
	if !p.startedReading {
		return
	}
	var err error
	if p.self[1], err = procstat.Self(); p.selfErr == nil {
		p.selfErr = err
	}
	if p.replicaErr == nil {
		p.replica[1], p.replicaErr = procstat.Read(p.pid)
	}
	if p.m.rdb != nil && p.memErr == nil {
		if p.mem[1], p.memErr = usedMemory(ctx, p.m.rdb); p.memErr == nil {
			p.keys, p.memErr = p.m.rdb.DBSize(ctx).Result()
		}
	}
}

// record puts what the run cost into res: each figure, or why it was not measured.
func (p *processMeter) record(res *result.FleetBench, st result.Step) {
	if !p.startedReading {
		res.ReplicaWhy, res.GeneratorWhy, res.StoreMemoryWhy = "the steady run did not start", "the steady run did not start", "the steady run did not start"
		return
	}
	res.Replica, res.ReplicaWhy = processCost(p.pid, p.replica, p.replicaErr, st.Answered, st.Clients, "answered")
	res.Generator, res.GeneratorWhy = processCost(0, p.self, p.selfErr, st.Requests, st.Clients, "sent")
	switch {
	case p.m.rdb == nil:
		res.StoreMemoryWhy = "no store: the no-op target keeps nothing"
	case p.memErr != nil:
		res.StoreMemoryWhy = p.memErr.Error()
	case st.Clients == 0:
		res.StoreMemoryWhy = "the run sent no client"
	default:
		res.StoreMemory = &result.StoreMemory{UsedBefore: p.mem[0], UsedAfter: p.mem[1], Keys: p.keys,
			PerClient: float64(p.mem[1]-p.mem[0]) / float64(st.Clients)}
	}
}

// processCost is what a process cost between two readings over n requests (what says
// which: answered or sent) and clients distinct clients; why it was not measured otherwise.
func processCost(pid int, u [2]procstat.Usage, err error, n, clients int, what string) (*result.ProcessCost, string) {
	if err != nil {
		return nil, err.Error()
	}
	c, err := u[1].Since(u[0])
	switch {
	case err != nil:
		return nil, err.Error()
	case n == 0:
		return nil, "no request was " + what
	case c.CPU <= 0:
		return nil, fmt.Sprintf("the process spent no CPU over %v: it is not what served the run", c.Wall)
	}
	out := &result.ProcessCost{PID: pid, CPUSeconds: c.CPU.Seconds(), WallSeconds: c.Wall.Seconds(), Cores: c.Cores,
		CPUPerRequestUs: c.CPU.Seconds() * 1e6 / float64(n), RSSBefore: u[0].RSS, RSSAfter: u[1].RSS}
	if clients > 0 {
		out.RSSPerClient = float64(u[1].RSS-u[0].RSS) / float64(clients)
	}
	return out, ""
}

// scripts are the commands a member's scripts run inside the store: its target file's, or
// the built-in limiters' and redis_rate's.
func (m *member) scriptCommands() commandstats.Set {
	if m.scripts != nil {
		return m.scripts
	}
	return scriptInternal
}
