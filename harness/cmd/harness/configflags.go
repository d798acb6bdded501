package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/bench"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/limiters"
)

// The flags of the commands that share them, bound to the configs the library packages take
// as values: the command line is the edge, harness/loadtest and harness/bench never see it.
// (attackflags.go: the schedule's spec and the time scale, which several commands share, and
// the attack command's line, which the load test's shard runner and deploy write.)

// gateFlags defines the generator's gates on f into g, their defaults g's values:
// --max-lateness, --min-rate-ratio and --gate-clock, as loadtest, hunt and judge read them.
func gateFlags(f *pflag.FlagSet, g *accounting.Gates) {
	f.DurationVar(&g.LatenessP99, "max-lateness", g.LatenessP99, "generator-bound when the p99 lateness of sends exceeds this (0: 2% of a slice at the time scale, 20ms at 0.2); the judge's tolerance of clock skew between shards too")
	f.Float64Var(&g.MinRateRatio, "min-rate-ratio", g.MinRateRatio, "generator-bound when achieved/asked rate falls below this")
	f.StringVar(&g.Clock, "gate-clock", g.Clock, "the clock overshoot and false rejects are gated on: auto (the target's exact clock where its outcomes carry one, else arrival bounds), decision (when the limiter says it decided: the built-in replica's X-RateLimit-Decided-At, a target file's clock.decided_at), backend (when an admission reached the recording backend behind a proxy: clock.backend), arrival (what a limiter could know: a request arrived between its send and its answer) or client (the client's send times); the others are always shown beside it (judge: default the clock the run was asked to gate on)")
}

// systemFlags are the flags of the systems under test that loadtest and hunt share: the
// built-in design (--replicas, --algorithm, --mode, --design, --sync-interval,
// --store-timeout), the target files (--target), the fault's timing (--outage,
// --recovery-grace) and the generator's gates, read into a Config. The time scale is
// timeScaleFlag's (hunt) or specFlags' (loadtest).
type systemFlags struct {
	cfg             *loadtest.Config
	algorithm, mode string
	targets         []string
	zones, topoFile string
}

// newSystemFlags defines the systems' flags on f into cfg, their defaults cfg's values.
func newSystemFlags(f *pflag.FlagSet, cfg *loadtest.Config) *systemFlags {
	s := &systemFlags{cfg: cfg, algorithm: string(cfg.Algorithm), mode: string(cfg.Mode)}
	f.IntVar(&cfg.Spec.Replicas, "replicas", cfg.Spec.Replicas, "limiter replicas of the built-in design (HS4)")
	f.StringVar(&s.algorithm, "algorithm", s.algorithm, "the built-in design's algorithm: fixed_window, sliding_window or token_bucket")
	f.StringVar(&s.mode, "mode", s.mode, "the built-in design's mode: central, split or delayed")
	f.StringVar(&cfg.Design, "design", cfg.Design, "delayed mode's design: bounded (an unsynced budget per client, past it one store call; docs/design-bound.md) or document (the document's delayed sync); empty: the replica's default, bounded; loadtest --matrix runs the other as a comparison")
	f.DurationVar(&cfg.SyncInterval, "sync-interval", cfg.SyncInterval, "delayed-sync interval before scaling (HS5)")
	f.DurationVar(&cfg.StoreTimeout, "store-timeout", cfg.StoreTimeout, "replicas' store call timeout (not scaled)")
	f.StringArrayVar(&s.targets, "target", nil, "a target file describing the limiter to test (repeatable; \"replica\" is the built-in design, the default)")
	f.StringVar(&s.zones, "zones", "", "place the replicas in zones, each with its own link to the store: name:replicas:one-way latency[±jitter], comma-separated, as near:4:0.5ms,far:4:40ms±10ms (docs/zones.md); the zones hold --replicas (a target file's replicas) together")
	f.StringVar(&s.topoFile, "topology", "", "a topology file declaring the zones (docs/zones.md), in place of --zones")
	f.DurationVar(&cfg.Outage, "outage", cfg.Outage, "how long the store (or the killed replica) stays down in a fault scenario, before scaling; store-restart starts it again at once")
	f.DurationVar(&cfg.RecoveryGrace, "recovery-grace", cfg.RecoveryGrace, "time after the store returns before the 1.1x gate applies again (not scaled)")
	gateFlags(f, &cfg.Gates)
	return s
}

// Apply puts what the flags name into the config: the design's algorithm and mode, and the
// target files, loaded (a file that does not parse is the user's error, with its line).
func (s *systemFlags) Apply() error {
	s.cfg.Algorithm, s.cfg.Mode = limiters.Algorithm(s.algorithm), limiters.Mode(s.mode)
	var err error
	switch {
	case s.zones != "" && s.topoFile != "":
		return errors.New("--zones and --topology both declare the zones: give one")
	case s.zones != "":
		s.cfg.Zones, err = topology.Parse(s.zones)
	case s.topoFile != "":
		s.cfg.Zones, err = topology.Load(s.topoFile)
	}
	if err != nil {
		return err
	}
	s.cfg.Targets = nil
	for _, path := range s.targets {
		if path == loadtest.BuiltinTarget {
			s.cfg.Targets = append(s.cfg.Targets, nil)
			continue
		}
		t, err := target.Load(path)
		if err != nil {
			return err
		}
		s.cfg.Targets = append(s.cfg.Targets, t)
	}
	return nil
}

// scenarioFlags are the flags of which scenarios a load test runs and on what store:
// --fail-open, --faults, --matrix, --only, --store, --store-cpu, --cluster-node-timeout,
// and how they are sent: --shards, --shard-runner, --harness-image.
type scenarioFlags struct {
	cfg    *loadtest.Config
	faults []string
}

// newScenarioFlags defines the scenarios' flags on f into cfg, their defaults cfg's values
// where it has them.
func newScenarioFlags(f *pflag.FlagSet, cfg *loadtest.Config) *scenarioFlags {
	s := &scenarioFlags{cfg: cfg}
	f.BoolVar(&cfg.FailOpen, "fail-open", cfg.FailOpen, "also run the fault scenarios, those of --faults (on --store cluster: master-kill and master-pause)")
	f.StringSliceVar(&s.faults, "faults", []string{"all"}, "the fault scenarios --fail-open runs: all, or some of store-stop, store-pause, store-slow, store-restart, replica-kill, and on a topology (--zones) partition, partition-blackhole, link-slow, flap")
	f.StringVar(&cfg.Store, "store", "redis", "counter store: redis (one Redis) or cluster (a Redis Cluster of 3 masters + 3 replicas; docker needs --network host)")
	f.Float64Var(&cfg.StoreCPU, "store-cpu", 0, "give the one Redis this share of a core (docker provider: its CPU quota), a slow store whose calls take time in proportion to their work; 0: no limit")
	f.DurationVar(&cfg.ClusterNodeTimeout, "cluster-node-timeout", 2*time.Second, "--store cluster: how long a silent master goes before its replica takes over (not scaled)")
	f.BoolVar(&cfg.Matrix, "matrix", cfg.Matrix, "also run every other algorithm x mode as a comparison")
	f.StringVar(&cfg.Only, "only", "", "run only the scenarios whose name contains this text (or one of several, comma-separated)")
	f.IntVar(&cfg.Shards, "shards", cfg.Shards, "generator shards per scenario, each sending its share of the clients (1: in this process)")
	f.StringVar(&cfg.ShardRunner, "shard-runner", cfg.ShardRunner, "how shards run: process (harness attack on this machine) or container (the harness image, host networking)")
	f.StringVar(&cfg.HarnessImage, "harness-image", loadtest.DefaultHarnessImage, "the container runner's image (scripts/build-images.sh harness)")
	return s
}

// Apply puts what the flags name into the config: the fault scenarios, parsed.
func (s *scenarioFlags) Apply() error {
	var err error
	s.cfg.Faults, err = loadtest.ParseFaults(s.faults)
	return err
}

// benchFlags are harness bench's own flags read into a Config: what to measure, the ceiling
// search, and --slice's (SliceConfig). The provider, --bin-dir and --out are the command's
// shared set.
type benchFlags struct {
	cfg      *bench.Config
	networks string
	slice    bool
	sliceCfg bench.SliceConfig
}

// newBenchFlags defines the bench's flags on f into cfg, their defaults cfg's values and
// DefaultSlice's.
func newBenchFlags(f *pflag.FlagSet, cfg *bench.Config) *benchFlags {
	b := &benchFlags{cfg: cfg, sliceCfg: bench.DefaultSlice()}
	networks := strings.Join(cfg.Networks, ",")
	f.StringVar(&b.networks, "network", networks, "docker networking modes to measure, comma-separated: host, bridge")
	f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas in every fleet (HS4)")
	f.DurationVar(&cfg.Step, "step", cfg.Step, "length of each fixed-rate step and steady run")
	f.Float64Var(&cfg.Search.Start, "start-rate", cfg.Search.Start, "ceiling search: first rate asked, req/s")
	f.Float64Var(&cfg.Search.Max, "max-rate", cfg.Search.Max, "ceiling search: highest rate asked, req/s")
	f.Float64Var(&cfg.Search.Factor, "factor", cfg.Search.Factor, "ceiling search: step-up factor")
	f.IntVar(&cfg.Search.Refine, "refine", cfg.Search.Refine, "ceiling search: bisections after the first failed step")
	f.IntVar(&cfg.Search.MaxSteps, "max-steps", cfg.Search.MaxSteps, "ceiling search: most steps per fleet")
	f.IntVar(&cfg.Clients, "clients", cfg.Clients, "background clients each step draws from (HS1)")
	f.IntVar(&cfg.MemoryClients, "memory-clients", cfg.MemoryClients, "clients loaded into each counter layout (HS1)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the schedules and samples")
	f.DurationVar(&cfg.MaxLateness, "max-lateness", 0, "a step whose generator p99 lateness exceeds this is not sustained (0: the load test's 10ms); raise it only to measure costs on a machine shared with other work, which bench.json records")
	f.BoolVar(&cfg.NoDecisions, "no-decisions", false, "skip figure 1 (in-process decisions)")
	f.BoolVar(&cfg.NoMemory, "no-memory", false, "skip figure 5 (store memory)")
	f.BoolVar(&cfg.NoFleet, "no-fleet", false, "skip the fleets (figures 2, 3, 4, 6)")
	f.BoolVar(&cfg.NoPeer, "no-peer", false, "skip the peer limiter (figure 4)")
	f.BoolVar(&cfg.NoCluster, "no-cluster", false, "skip figure 7 (delayed sync on a Redis Cluster: store commands beside one Redis, memory per shard)")
	f.Float64Var(&cfg.ClusterRate, "cluster-rate", cfg.ClusterRate, "figure 7: the offered rate of the one-Redis and cluster steady runs, req/s")
	f.BoolVar(&cfg.NoGenerator, "no-generator", false, "skip plain Vegeta's search and the generator profiles (figure 2's generator ceiling)")
	f.BoolVar(&cfg.GeneratorOnly, "generator-only", false, "measure only the generator: the no-op fleet with the harness's sender and with plain Vegeta, and their profiles")
	f.StringVar(&cfg.ProfileDir, "profile-dir", "", "write the generator profiles' raw pprof files here (go tool pprof); default: the run directory")
	f.StringVar(&cfg.Baseline, "baseline", "", "an earlier bench.json whose generator profiles the report shows beside this run's (before/after)")
	f.BoolVar(&b.slice, "slice", false, "measure one replica's share of HS2, system by system, instead of the other figures (the flags below)")
	f.Float64Var(&b.sliceCfg.Rate, "rate", b.sliceCfg.Rate, "--slice: req/s sent to the one replica (HS2 / HS4); stepped down to the most this machine sends where the no-op replica falls behind")
	f.IntVar(&b.sliceCfg.Node, "node", b.sliceCfg.Node, "--slice: the replica's node index")
	f.IntVar(&b.sliceCfg.Nodes, "nodes", b.sliceCfg.Nodes, "--slice: the fleet size the replica is told (HS4)")
	timeScaleFlag(f, &b.sliceCfg.TimeScale, "--slice only, as make loadtest (window 12 s at 0.2)")
	f.Float64Var(&b.sliceCfg.StoreCPU, "store-cpu", b.sliceCfg.StoreCPU, "--slice: the share of a core each system's Redis is held to (docker: its CPU quota), 1/HS4 so it is as busy per request as with HS4 nodes; 0: not held")
	f.DurationVar(&b.sliceCfg.Steady, "steady", b.sliceCfg.Steady, "--slice: length of each system's steady run (one window at time scale 0.2)")
	f.BoolVar(&b.sliceCfg.SteadyOnly, "steady-only", false, "--slice: only the steady runs, the costs harness plan fits: no latency rounds, no ceiling search")
	f.StringSliceVar(&b.sliceCfg.Systems, "systems", b.sliceCfg.Systems, "--slice: the systems after the no-op replica: bounded, document, redis_rate, or a target file with a store the harness runs")
	return b
}

// sliceOnly are --slice's own flags, refused without it.
var sliceOnly = []string{"rate", "node", "nodes", "time-scale", "store-cpu", "steady", "systems", "steady-only"}

// Apply puts the parsed flags into the config: the networks, and with --slice its settings:
// the clients default to HS1 / HS4, the steps to one window and the search to one from the
// slice's rate, unless the command line set them. Without --slice its flags are refused.
func (b *benchFlags) Apply(f *pflag.FlagSet) error {
	cfg, slice := b.cfg, &b.sliceCfg
	cfg.Networks = nil
	for _, n := range strings.Split(b.networks, ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.Networks = append(cfg.Networks, n)
		}
	}
	if !b.slice {
		for _, n := range sliceOnly {
			if f.Changed(n) {
				return fmt.Errorf("--%s is a --slice flag: add --slice, or leave it out", n)
			}
		}
		return nil
	}
	if f.Changed("clients") {
		slice.Clients = cfg.Clients
	}
	if !f.Changed("step") {
		cfg.Step = slice.Step()
	}
	search := bench.DefaultSliceSearch(slice.Rate)
	for _, v := range []struct {
		flag     string
		to, from *float64
	}{{"start-rate", &cfg.Search.Start, &search.Start}, {"max-rate", &cfg.Search.Max, &search.Max}, {"factor", &cfg.Search.Factor, &search.Factor}} {
		if !f.Changed(v.flag) {
			*v.to = *v.from
		}
	}
	if !f.Changed("refine") {
		cfg.Search.Refine = search.Refine
	}
	if !f.Changed("max-steps") {
		cfg.Search.MaxSteps = search.MaxSteps
	}
	cfg.Search.Min = min(cfg.Search.Min, cfg.Search.Start)
	cfg.Slice = slice
	return nil
}
