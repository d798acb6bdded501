package loadtest

import (
	"github.com/spf13/pflag"

	"github.com/edgeproof/rlharness/harness/schedule"
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
