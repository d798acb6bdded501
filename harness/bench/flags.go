package bench

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/edgeproof/rlharness/harness/loadtest"
)

// Flags are harness bench's own flags read into a Config: what to measure, the ceiling
// search, and --slice's (SliceConfig). The provider, --bin-dir and --out are the command's
// shared set.
type Flags struct {
	cfg      *Config
	networks string
	slice    bool
	sliceCfg SliceConfig
}

// NewFlags defines the bench's flags on f into cfg, their defaults cfg's values and
// DefaultSlice's.
func NewFlags(f *pflag.FlagSet, cfg *Config) *Flags {
	b := &Flags{cfg: cfg, sliceCfg: DefaultSlice()}
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
	loadtest.TimeScaleFlag(f, &b.sliceCfg.TimeScale, "--slice only, as make loadtest (window 12 s at 0.2)")
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
func (b *Flags) Apply(f *pflag.FlagSet) error {
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
	search := DefaultSliceSearch(slice.Rate)
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
