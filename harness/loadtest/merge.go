package loadtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// JudgeConfig says how `harness judge` judges merged shards.
type JudgeConfig struct {
	Gates  accounting.Gates // zero LatenessP99: 2 % of a slice at the run's time scale
	OutDir string           // where summary.json (and the merged outcomes.csv) go
	Commit string           // the binary's source revision, for the summary
}

// ShardDir is shard i's directory under a run directory: what the loadtest's runners and the
// Kubernetes Job write, and what FindShards looks for.
func ShardDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%d", i)) }

// FindShards lists the shard.json files under paths: each path is a shard's directory, its
// shard.json, or a directory whose immediate subdirectories are shards' (a shared volume).
func FindShards(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("shard outcomes: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, result.ShardFile)); err == nil {
			out = append(out, filepath.Join(p, result.ShardFile))
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*", result.ShardFile))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no %s, neither itself nor in a subdirectory: give the directories harness attack wrote", p, result.ShardFile)
		}
		out = append(out, found...)
	}
	return out, nil
}

// loadShards reads and cross-checks the shards of one run: one schedule, one start, one N,
// every index from 0 to N-1 exactly once.
func loadShards(files []string) ([]result.Shard, []string, error) {
	shards := make([]result.Shard, 0, len(files))
	dirs := make([]string, 0, len(files))
	for _, f := range files {
		m, err := result.Read[result.Shard](filepath.Dir(f), filepath.Base(f))
		if err != nil {
			return nil, nil, err
		}
		shards = append(shards, m)
		dirs = append(dirs, filepath.Dir(f))
	}
	if len(shards) == 0 {
		return nil, nil, errors.New("no shards to judge")
	}
	first := shards[0]
	seen := make(map[int]string)
	for k, m := range shards {
		switch {
		case m.Shards != first.Shards:
			return nil, nil, fmt.Errorf("%s is shard %d of %d, %s of %d: the shards are from different runs", dirs[k], m.Shard, m.Shards, dirs[0], first.Shards)
		case m.ScheduleDigest != first.ScheduleDigest:
			return nil, nil, fmt.Errorf("%s sent the schedule file of digest %q, %s of %q: the shards are from different runs", dirs[k], m.ScheduleDigest, dirs[0], first.ScheduleDigest)
		case m.Schedule != first.Schedule:
			return nil, nil, fmt.Errorf("%s built its schedule from %+v, %s from %+v: the shards are from different runs", dirs[k], m.Schedule, dirs[0], first.Schedule)
		case !m.Start.Equal(first.Start):
			return nil, nil, fmt.Errorf("%s started at %s, %s at %s: give every shard the same --start", dirs[k], m.Start.Format(time.RFC3339Nano), dirs[0], first.Start.Format(time.RFC3339Nano))
		case m.Scenario != first.Scenario || m.Algorithm != first.Algorithm || m.Mode != first.Mode:
			return nil, nil, fmt.Errorf("%s is scenario %q (%s/%s), %s is %q (%s/%s): the shards are from different runs", dirs[k], m.Scenario, m.Algorithm, m.Mode, dirs[0], first.Scenario, first.Algorithm, first.Mode)
		}
		if d, dup := seen[m.Shard]; dup {
			return nil, nil, fmt.Errorf("shard %d is in both %s and %s: give each shard once", m.Shard, d, dirs[k])
		}
		seen[m.Shard] = dirs[k]
	}
	for i := range first.Shards {
		if _, ok := seen[i]; !ok {
			return nil, nil, fmt.Errorf("shard %d of %d is missing: its clients' outcomes are not among the directories given", i, first.Shards)
		}
	}
	return shards, dirs, nil
}

// Judge merges the outcomes of a run's shards and judges the whole run with the load test's
// accounting and gates: every client's requests are on one shard, so its counts are whole.
// It adds the shards' clock skew as a generator check, writes OutDir/summary.json and the
// merged outcomes, and returns the summary. A gate that fails is not an error.
func Judge(paths []string, jc JudgeConfig) (result.Summary, error) {
	run, err := openShards(paths, jc)
	if err != nil {
		return result.Summary{}, err
	}
	// The merged outcomes are written afresh: judging twice must not append twice.
	w, err := traffic.Replace(run.sc.Dir(jc.OutDir))
	if err != nil {
		return result.Summary{}, err
	}
	defer w.Close()
	res, err := run.judge(w)
	if err != nil {
		return result.Summary{}, err
	}
	sum := run.summary(res, jc.Commit)
	if err := writeSummary(jc.OutDir, sum); err != nil {
		return sum, err
	}
	return sum, w.Close()
}

// shardedRun is a sharded run as the judge reads it: the shards' records and directories,
// the load test's config for their schedule, the whole schedule rebuilt as every shard built
// it, and the scenario the shards name.
type shardedRun struct {
	shards []result.Shard
	dirs   []string
	cfg    Config
	sched  schedule.Schedule
	sc     result.Scenario
}

// openShards reads and cross-checks the shards under paths and rebuilds their schedule.
func openShards(paths []string, jc JudgeConfig) (shardedRun, error) {
	if err := checkClock(jc.Gates.Clock); err != nil {
		return shardedRun{}, err
	}
	files, err := FindShards(paths)
	if err != nil {
		return shardedRun{}, err
	}
	shards, dirs, err := loadShards(files)
	if err != nil {
		return shardedRun{}, err
	}
	first := shards[0]
	cfg := DefaultConfig()
	cfg.Spec = first.Schedule
	cfg.exactClock = sut{}.exactClock() // shards send the built-in replica's schedule only
	if jc.Gates != (accounting.Gates{}) {
		cfg.Gates = jc.Gates
	}
	cfg.Gates.LatenessP99 = cfg.latenessTolerance()
	if jc.OutDir == "" {
		return shardedRun{}, errors.New("judge: no output directory for summary.json")
	}
	sched, err := shardsSchedule(first, dirs[0])
	if err != nil {
		return shardedRun{}, err
	}
	sc := result.Scenario{Name: first.Scenario, Algorithm: first.Algorithm, Mode: first.Mode, Gated: true}
	if sc.Name == "" {
		sc.Name = "attack"
	}
	return shardedRun{shards: shards, dirs: dirs, cfg: cfg, sched: sched, sc: sc}, nil
}

// judge merges the shards' outcomes in shard order into w and the accounting, and judges the
// whole run as the load test judges a scenario, with the shards' clock skew beside it.
func (r *shardedRun) judge(w *traffic.Writer) (result.ScenarioResult, error) {
	acc, err := accounting.New(&r.sched, nil)
	if err != nil {
		return result.ScenarioResult{}, err
	}
	probes := newProbeTimes(&r.sched)
	order := make([]int, len(r.shards))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return r.shards[a].Shard - r.shards[b].Shard })
	for _, k := range order {
		m := r.shards[k]
		if _, err := traffic.ReadFile(filepath.Join(r.dirs[k], traffic.OutcomesFile), func(o traffic.Outcome) error {
			if o.Index >= len(r.sched.Requests) || o.Index < 0 {
				return fmt.Errorf("outcome for request %d, but the schedule has %d", o.Index, len(r.sched.Requests))
			}
			if got := r.sched.Requests[o.Index].Client; int(got)%m.Shards != m.Shard {
				return fmt.Errorf("request %d is client %d's, which shard %d sends, not shard %d", o.Index, got, int(got)%m.Shards, m.Shard)
			}
			probes.add(o)
			if err := w.Write(o); err != nil {
				return err
			}
			return acc.Add(o)
		}); err != nil {
			return result.ScenarioResult{}, fmt.Errorf("shard %d: %w", m.Shard, err)
		}
	}
	rep := acc.Report()
	first := r.shards[0]
	res := result.ScenarioResult{Scenario: r.sc, Conditions: result.Conditions{Provider: "shards", Replicas: first.Schedule.Replicas, Target: fmt.Sprint(first.Targets)}}
	// The judge has the outcomes but not the store's counters: the central and delayed modes'
	// claims are about store commands, so they are left to a run that read them.
	claimed := r.sc
	if limiters.Mode(claimed.Mode) != limiters.ModeSplit {
		claimed.Mode = ""
	}
	fillResult(&res, &rep, r.cfg, claimed, probes, result.Interval{}, accounting.NewLatency())
	judgeSkew(&res, r.shards, r.cfg.Gates.LatenessP99)
	return res, nil
}

// summary is the sharded run's summary.json around its judged scenario; a shard's error
// fails the scenario.
func (r *shardedRun) summary(res result.ScenarioResult, commit string) result.Summary {
	first, cfg := r.shards[0], r.cfg
	sum := result.Summary{
		StartedAt: first.Start.UTC(), Cores: runtime.NumCPU(), Commit: commit,
		Config: cfg.configSummary(r.sc.Algorithm, r.sc.Mode, limiters.DefaultLimit),
		Pass:   true,
	}
	// The shards knew their schedule and their targets' URLs, not the fleet behind them.
	sum.Config.Provider, sum.Config.Network, sum.Config.NetworkNote, sum.Config.Design = "shards", "", "", ""
	sum.Config.SyncInterval, sum.Config.StoreTimeout, sum.Config.Outage, sum.Config.RecoveryGrace, sum.Config.Store = 0, 0, 0, 0, ""
	var errs []string
	for _, m := range r.shards {
		sum.FinishedAt = maxTime(sum.FinishedAt, m.FinishedAt.UTC())
		if m.Error != "" {
			errs = append(errs, fmt.Sprintf("shard %d: %s", m.Shard, m.Error))
		}
	}
	if len(errs) > 0 {
		res.Error, res.Pass = strings.Join(errs, "; "), false
	}
	addScenario(&sum, res)
	return sum
}

// judgeSkew records the shards' clock skew and, with more than one shard, gates it beside the
// generator's own checks: shards whose clocks disagree by more than the lateness tolerance
// did not send one schedule on one clock, so the run is generator-bound.
func judgeSkew(res *result.ScenarioResult, shards []result.Shard, tolerance time.Duration) {
	res.Shards = len(shards)
	if len(shards) < 2 {
		return
	}
	sk := clockSkew(shards, tolerance)
	res.ClockSkew = &sk
	detail := fmt.Sprintf("largest offset difference between two hosts' shards, ± half of each round trip, over %d shards", len(shards))
	fig := float64(sk.Max) / float64(time.Millisecond)
	if !sk.Measured {
		detail = "shards ran on several hosts and some recorded no clock offset (give every shard --clock-ref): the skew is unbounded"
		fig = float64(time.Hour / time.Millisecond)
	}
	c := accounting.NewCheck("shard clock skew (ms)", fig, accounting.OpAtMost, float64(tolerance)/float64(time.Millisecond), detail)
	res.Checks = append(res.Checks, c)
	if !c.Pass {
		res.Pass, res.GeneratorBound = false, true
		for i := range res.Claims {
			res.Claims[i].Inconclusive = true
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// shardsSchedule is the whole schedule the shards sent: the schedule file a shard kept beside
// its outcomes (checked against the digest every shard recorded), or the one their spec
// builds.
func shardsSchedule(m result.Shard, dir string) (schedule.Schedule, error) {
	if m.ScheduleFile == "" {
		return wholeSchedule(m.Schedule)
	}
	path := filepath.Join(dir, m.ScheduleFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("the shards sent a schedule file: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m.ScheduleDigest {
		return schedule.Schedule{}, fmt.Errorf("%s is not the schedule file the shards sent (its digest differs from shard.json's)", path)
	}
	f, err := schedule.Decode(bytes.NewReader(b))
	if err != nil {
		return schedule.Schedule{}, fmt.Errorf("%s: %w", path, err)
	}
	return f.Schedule, nil
}
