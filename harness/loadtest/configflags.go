package loadtest

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/limiters"
)

// TimeScaleFlag defines --time-scale on f into dst, its default dst's value; note, when set,
// follows the usage. Every command that scales a run declares it here, and every one
// checks it with schedule.CheckTimeScale.
func TimeScaleFlag(f *pflag.FlagSet, dst *float64, note string) {
	usage := "multiply every duration by F (0 < F <= 1) and every rate by 1/F"
	if note != "" {
		usage += "; " + note
	}
	f.Float64Var(dst, "time-scale", *dst, usage)
}

// SpecFlags defines the flags of a schedule.Spec on f into spec, their defaults spec's
// values: --time-scale (with note, TimeScaleFlag's), --rate, --clients, --seed. --replicas
// means a fleet to one command and the indexes requests are spread over to another, so each
// command declares its own.
func SpecFlags(f *pflag.FlagSet, spec *schedule.Spec, note string) {
	TimeScaleFlag(f, &spec.TimeScale, note)
	f.Float64Var(&spec.Rate, "rate", spec.Rate, "background population's aggregate rate asked, requests/s over all shards (HS2: 40000)")
	f.IntVar(&spec.Clients, "clients", spec.Clients, "background clients (HS1)")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "seed of the schedule (clients, arrivals, replicas): the same on every shard")
}

// GateFlags defines the generator's gates on f into g, their defaults g's values:
// --max-lateness, --min-rate-ratio and --gate-clock, as loadtest, hunt and judge read them.
func GateFlags(f *pflag.FlagSet, g *accounting.Gates) {
	f.DurationVar(&g.LatenessP99, "max-lateness", g.LatenessP99, "generator-bound when the p99 lateness of sends exceeds this (0: 2% of a slice at the time scale, 20ms at 0.2); the judge's tolerance of clock skew between shards too")
	f.Float64Var(&g.MinRateRatio, "min-rate-ratio", g.MinRateRatio, "generator-bound when achieved/asked rate falls below this")
	f.StringVar(&g.Clock, "gate-clock", g.Clock, "the clock overshoot and false rejects are gated on: arrival (what a limiter could know: a request arrived between its send and its answer) or client (the client's send times); the other is always shown beside it (judge: default the clock the run was gated on)")
}

// SystemFlags are the flags of the systems under test that loadtest and hunt share: the
// built-in design (--replicas, --algorithm, --mode, --design, --sync-interval,
// --store-timeout), the target files (--target), the fault's timing (--outage,
// --recovery-grace) and the generator's gates, read into a Config. The time scale is
// TimeScaleFlag's (hunt) or SpecFlags' (loadtest).
type SystemFlags struct {
	cfg             *Config
	algorithm, mode string
	targets         []string
	zones, topoFile string
}

// NewSystemFlags defines the systems' flags on f into cfg, their defaults cfg's values.
func NewSystemFlags(f *pflag.FlagSet, cfg *Config) *SystemFlags {
	s := &SystemFlags{cfg: cfg, algorithm: string(cfg.Algorithm), mode: string(cfg.Mode)}
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
	GateFlags(f, &cfg.Gates)
	return s
}

// Apply puts what the flags name into the config: the design's algorithm and mode, and the
// target files, loaded (a file that does not parse is the user's error, with its line).
func (s *SystemFlags) Apply() error {
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
		if path == BuiltinTarget {
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

// ScenarioFlags are the flags of which scenarios a load test runs and on what store:
// --fail-open, --faults, --matrix, --only, --store, --store-cpu, --cluster-node-timeout,
// and how they are sent: --shards, --shard-runner, --harness-image.
type ScenarioFlags struct {
	cfg    *Config
	faults []string
}

// NewScenarioFlags defines the scenarios' flags on f into cfg, their defaults cfg's values
// where it has them.
func NewScenarioFlags(f *pflag.FlagSet, cfg *Config) *ScenarioFlags {
	s := &ScenarioFlags{cfg: cfg}
	f.BoolVar(&cfg.FailOpen, "fail-open", cfg.FailOpen, "also run the fault scenarios, those of --faults (on --store cluster: master-kill and master-pause)")
	f.StringSliceVar(&s.faults, "faults", []string{"all"}, "the fault scenarios --fail-open runs: all, or some of store-stop, store-pause, store-slow, store-restart, replica-kill")
	f.StringVar(&cfg.Store, "store", "redis", "counter store: redis (one Redis) or cluster (a Redis Cluster of 3 masters + 3 replicas; docker needs --network host)")
	f.Float64Var(&cfg.StoreCPU, "store-cpu", 0, "give the one Redis this share of a core (docker provider: its CPU quota), a slow store whose calls take time in proportion to their work; 0: no limit")
	f.DurationVar(&cfg.ClusterNodeTimeout, "cluster-node-timeout", 2*time.Second, "--store cluster: how long a silent master goes before its replica takes over (not scaled)")
	f.BoolVar(&cfg.Matrix, "matrix", cfg.Matrix, "also run every other algorithm x mode as a comparison")
	f.StringVar(&cfg.Only, "only", "", "run only the scenarios whose name contains this text (or one of several, comma-separated)")
	f.IntVar(&cfg.Shards, "shards", cfg.Shards, "generator shards per scenario, each sending its share of the clients (1: in this process)")
	f.StringVar(&cfg.ShardRunner, "shard-runner", cfg.ShardRunner, "how shards run: process (harness attack on this machine) or container (the harness image, host networking)")
	f.StringVar(&cfg.HarnessImage, "harness-image", DefaultHarnessImage, "the container runner's image (scripts/build-images.sh harness)")
	return s
}

// Apply puts what the flags name into the config: the fault scenarios, parsed.
func (s *ScenarioFlags) Apply() error {
	var err error
	s.cfg.Faults, err = ParseFaults(s.faults)
	return err
}
