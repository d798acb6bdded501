package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// timeScaleFlag defines --time-scale on f into dst, its default dst's value; note, when set,
// follows the usage. Every command that scales a run declares it here, and every one
// checks it with schedule.CheckTimeScale.
func timeScaleFlag(f *pflag.FlagSet, dst *float64, note string) {
	usage := "multiply every duration by F (0 < F <= 1) and every rate by 1/F"
	if note != "" {
		usage += "; " + note
	}
	f.Float64Var(dst, "time-scale", *dst, usage)
}

// specFlags defines the flags of a schedule.Spec on f into spec, their defaults spec's
// values: --time-scale (with note, timeScaleFlag's), --rate, --clients, --seed. --replicas
// means a fleet to one command and the indexes requests are spread over to another, so each
// command declares its own.
func specFlags(f *pflag.FlagSet, spec *schedule.Spec, note string) {
	timeScaleFlag(f, &spec.TimeScale, note)
	f.Float64Var(&spec.Rate, "rate", spec.Rate, "background population's aggregate rate asked, requests/s over all shards (HS2: 40000)")
	f.IntVar(&spec.Clients, "clients", spec.Clients, "background clients (HS1)")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "seed of the schedule (clients, arrivals, replicas): the same on every shard")
}

// attackFlags is `harness attack`'s command line read into a loadtest.AttackConfig. The
// load test's shard runner (loadtest.AttackArgs) and deploy's manifests write that command
// line and the command reads it here; TestEveryCommandLineReadsBack puts the three side by
// side.
type attackFlags struct {
	ac           loadtest.AttackConfig
	shard, start string
}

// newAttackFlags defines the attack command's flags on f, with the load test's defaults.
func newAttackFlags(f *pflag.FlagSet) *attackFlags {
	a := &attackFlags{ac: loadtest.AttackConfig{Schedule: loadtest.DefaultConfig().Spec}}
	ac := &a.ac
	f.StringVar(&a.shard, "shard", "0/1", "this shard and the count, i/N from 0; '$JOB_COMPLETION_INDEX/N' or '/N' reads i from the environment")
	f.StringArrayVar(&ac.Targets, "target", nil, "a replica's base URL (http://host:port), once per replica index; fewer are reused in turn")
	f.StringVar(&a.start, "start", "", "the run's origin, the same for every shard (RFC 3339); empty: the next window edge")
	f.StringVar(&ac.ClockRef, "clock-ref", "", "Redis host:port whose TIME every shard reads to measure its clock offset")
	specFlags(f, &ac.Schedule, "")
	f.IntVar(&ac.Schedule.Replicas, "replicas", 0, "replica indexes the requests are spread over (0: one per --target)")
	f.StringVar(&ac.Scenario, "scenario", "attack", "the run's name in the judge's summary")
	f.StringVar(&ac.Algorithm, "algorithm", "", "what the target runs (fixed_window, sliding_window, token_bucket), for the document's claims")
	f.StringVar(&ac.Mode, "mode", "", "the target's mode (central, split, delayed), for the document's claims")
	f.StringVar(&ac.OutDir, "out", "runs/attack", "run directory; this shard writes DIR/shard-<i>")
	f.StringVar(&ac.ScheduleFile, "schedule", "", "a schedule file (harness hunt writes them) as the whole schedule, in place of the one the flags above build; every shard is given the same file")
	return a
}

// Config is the attack the parsed flags ask for: the shard of --shard, its index read from
// getenv(loadtest.JobIndexEnv) where the flag says so, and the start of --start.
func (a *attackFlags) Config(getenv func(string) string) (loadtest.AttackConfig, error) {
	ac := a.ac
	i, n, err := loadtest.ParseShard(a.shard, getenv)
	if err != nil {
		return ac, err
	}
	ac.Shard, ac.Shards = i, n
	if a.start != "" {
		t, err := time.Parse(time.RFC3339Nano, a.start)
		if err != nil {
			return ac, fmt.Errorf("--start %q: want an RFC 3339 time such as 2026-12-03T08:00:00Z: %w", a.start, err)
		}
		ac.Start = t
	}
	return ac, nil
}
