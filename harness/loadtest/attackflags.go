package loadtest

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// AttackFlags is `harness attack`'s command line read into an AttackConfig. The shard runner
// (attackArgs) and deploy's manifests write that command line and the command reads it here,
// so a test can put all three side by side (TestEveryPathBuildsOneSchedule).
type AttackFlags struct {
	ac           AttackConfig
	shard, start string
}

// NewAttackFlags defines the attack command's flags on f, with the load test's defaults.
func NewAttackFlags(f *pflag.FlagSet) *AttackFlags {
	a := &AttackFlags{ac: AttackConfig{Schedule: DefaultConfig().Spec}}
	ac := &a.ac
	f.StringVar(&a.shard, "shard", "0/1", "this shard and the count, i/N from 0; '$JOB_COMPLETION_INDEX/N' or '/N' reads i from the environment")
	f.StringArrayVar(&ac.Targets, "target", nil, "a replica's base URL (http://host:port), once per replica index; fewer are reused in turn")
	f.StringVar(&a.start, "start", "", "the run's origin, the same for every shard (RFC 3339); empty: the next window edge")
	f.StringVar(&ac.ClockRef, "clock-ref", "", "Redis host:port whose TIME every shard reads to measure its clock offset")
	SpecFlags(f, &ac.Schedule, "")
	f.IntVar(&ac.Schedule.Replicas, "replicas", 0, "replica indexes the requests are spread over (0: one per --target)")
	f.StringVar(&ac.Scenario, "scenario", "attack", "the run's name in the judge's summary")
	f.StringVar(&ac.Algorithm, "algorithm", "", "what the target runs (fixed_window, sliding_window, token_bucket), for the document's claims")
	f.StringVar(&ac.Mode, "mode", "", "the target's mode (central, split, delayed), for the document's claims")
	f.StringVar(&ac.OutDir, "out", "runs/attack", "run directory; this shard writes DIR/shard-<i>")
	f.StringVar(&ac.ScheduleFile, "schedule", "", "a schedule file (harness hunt writes them) as the whole schedule, in place of the one the flags above build; every shard is given the same file")
	return a
}

// Config is the attack the parsed flags ask for: the shard of --shard, its index read from
// getenv(JobIndexEnv) where the flag says so, and the start of --start.
func (a *AttackFlags) Config(getenv func(string) string) (AttackConfig, error) {
	ac := a.ac
	i, n, err := ParseShard(a.shard, getenv)
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
