package loadtest

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// writeStarted writes the scenario's result.Started into its directory at the traffic's origin.
func writeStarted(dir string, cfg Config, sc result.Scenario, sys sut, origin time.Time, faults []result.Interval, outage result.Interval, cond result.Conditions) error {
	st := result.Started{
		Run: cfg.started, Scenario: sc, Schedule: cfg.Spec, Start: origin, Faults: faults, Outage: outage,
		Lateness: cfg.Gates.LatenessP99, MinRateRatio: cfg.Gates.MinRateRatio, GateClock: cfg.Gates.Clock, ExactClock: cfg.exactClock, KilledNode: cfg.killedNode, Shards: cfg.shardCount(),
		SyncInterval: cfg.SyncInterval, OutageAsked: cfg.Outage,
		Config:     cfg.configSummary(sc.Algorithm, sc.Mode, sys.classes()[0].Limit),
		Conditions: cond, Commit: cfg.Commit, Cores: runtime.NumCPU(),
	}
	if sys.t != nil {
		st.Classes = sys.classes()
	}
	if cfg.Schedule != nil {
		st.ScheduleFile = ReplayedFile
	}
	st.Config.Network = cond.Network // as the fleet reported it
	return result.Write(dir, result.StartedFile, st)
}

// shardCount is how many generator processes send a scenario.
func (c Config) shardCount() int { return max(c.Shards, 1) }

// Killed says whether dir holds a load test's scenarios that a judge can judge again: a
// scenario directory with scenario.json (a run that was killed before it wrote summary.json,
// or during a later scenario).
func Killed(dir string) bool {
	found, _ := filepath.Glob(filepath.Join(dir, "*", result.StartedFile))
	return len(found) > 0
}

// startedRun is what a run directory holds of its newest run: the scenarios it started, in
// order, their directories, and the summary it wrote (zero when it wrote none, or when the
// summary is an earlier run's).
type startedRun struct {
	starts  []result.Started
	dirs    []string
	summary result.Summary
	written bool // summary.json is this run's
}

func readStarted(dir string) (startedRun, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*", result.StartedFile))
	if err != nil {
		return startedRun{}, err
	}
	if len(found) == 0 {
		return startedRun{}, fmt.Errorf("%s holds no scenario of a load test (no */%s): give a run directory harness loadtest wrote", dir, result.StartedFile)
	}
	var all []result.Started
	var dirs []string
	for _, f := range found {
		st, err := result.Read[result.Started](filepath.Dir(f), result.StartedFile)
		if err != nil {
			return startedRun{}, err
		}
		all, dirs = append(all, st), append(dirs, filepath.Dir(f))
	}
	// The run is the newest one whose scenarios are here: a run directory used again (make
	// loadtest's runs/latest) holds the scenarios of earlier runs that this one did not run.
	newest := slices.MaxFunc(all, func(a, b result.Started) int { return a.Start.Compare(b.Start) }).Run
	var order []int
	for i, st := range all {
		if st.Run.Equal(newest) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return all[a].Start.Compare(all[b].Start) })
	var r startedRun
	for _, i := range order {
		r.starts, r.dirs = append(r.starts, all[i]), append(r.dirs, dirs[i])
	}
	sum, err := result.Read[result.Summary](dir, result.SummaryFile)
	switch {
	case err == nil && sum.StartedAt.Equal(newest):
		r.summary, r.written = sum, true
	case err == nil || errors.Is(err, os.ErrNotExist): // none, or an earlier run's
	default:
		return startedRun{}, err
	}
	return r, nil
}

// unjudged are the indexes of the scenarios the run started that its summary lacks.
func (r startedRun) unjudged() []int {
	judged := map[string]bool{}
	for _, s := range r.summary.Scenarios {
		judged[s.Name] = true
	}
	var out []int
	for i, st := range r.starts {
		if !judged[st.Scenario.Name] {
			out = append(out, i)
		}
	}
	return out
}

// Unjudged names the scenarios of the newest run in dir that it started but its summary.json
// does not hold, when it did not finish (no summary.json, or one without finished_at): what
// a kill left for harness judge. A run still going on looks the same.
func Unjudged(dir string) []string {
	r, err := readStarted(dir)
	if err != nil || (r.written && (!r.summary.FinishedAt.IsZero() || r.summary.Incomplete)) {
		return nil
	}
	var names []string
	for _, i := range r.unjudged() {
		names = append(names, r.starts[i].Scenario.Name)
	}
	return names
}

// JudgeKilled judges what a killed load test wrote in dir: every scenario that summary.json
// does not hold (all of them when there is none) is judged from its scenario.json and
// outcomes.csv, on the part of its schedule whose every request has an outcome (the
// outcomes before the kill). The store's counters and the replicas' metrics went with the
// run, so the store and sync figures are not measured and the claims about store commands
// are left out. The summary, the scenarios summary.json held and these, is written to
// jc.OutDir marked incomplete; a gate that fails is not an error.
func JudgeKilled(dir string, jc JudgeConfig) (result.Summary, error) {
	r, err := readStarted(dir)
	if err != nil {
		return result.Summary{}, err
	}
	if jc.OutDir == "" {
		jc.OutDir = dir
	}
	sum := r.summary
	if !r.written {
		first := r.starts[0]
		sum = result.Summary{StartedAt: first.Run, Commit: first.Commit, Cores: first.Cores, Config: first.Config, Pass: true}
		if m, err := model.RunRateLimit(); err == nil {
			f := m.Figures()
			sum.Model = &f
		}
	}
	var again []string
	for _, i := range r.unjudged() {
		st := r.starts[i]
		res, err := judgeStarted(st, r.dirs[i], jc)
		if err != nil {
			res = result.ScenarioResult{Scenario: st.Scenario, Conditions: st.Conditions, Error: err.Error()}
		}
		addScenario(&sum, res)
		again = append(again, st.Scenario.Name)
	}
	if len(again) == 0 {
		return sum, fmt.Errorf("%s/summary.json holds every scenario the run started: it finished; harness report %s renders it", dir, dir)
	}
	sum.Incomplete = true
	sum.IncompleteWhy = fmt.Sprintf("the run was killed before it finished: %s judged afterwards by harness judge from the outcomes written before the kill (store and sync figures not measured)",
		strings.Join(again, ", "))
	sum.Failed = append(sum.Failed, "incomplete: the run was killed during "+again[len(again)-1])
	sum.Settle()
	if jc.Commit != "" && sum.Commit == "" {
		sum.Commit = jc.Commit
	}
	for _, d := range r.dirs {
		sum.FinishedAt = maxTime(sum.FinishedAt, lastWritten(d))
	}
	return sum, writeSummary(jc.OutDir, sum)
}

// judgeStarted judges one scenario of a killed run from its outcomes.
func judgeStarted(st result.Started, dir string, jc JudgeConfig) (result.ScenarioResult, error) {
	cfg := startedConfig(st, jc)
	whole, outcomes, err := startedOutcomes(dir, st)
	if err != nil {
		return result.ScenarioResult{}, err
	}
	sched, ok := answeredPrefix(&whole, outcomes)
	if !ok {
		return result.ScenarioResult{}, fmt.Errorf("%s: no request has an outcome: the run was killed before this scenario's traffic was written", dir)
	}
	acc, err := cfg.accumulator(&sched, st.Faults)
	if err != nil {
		return result.ScenarioResult{}, err
	}
	probes := newProbeTimes(&sched)
	faultLat := accounting.NewLatency()
	for _, o := range outcomes {
		if o.Index >= len(sched.Requests) {
			continue
		}
		probes.add(o)
		for _, f := range st.Faults {
			if f.Contains(o.Sent) && o.Code != 0 {
				faultLat.Record(o.Latency)
			}
		}
		if err := acc.Add(o); err != nil {
			return result.ScenarioResult{}, err
		}
	}
	if err := readBackend(dir, st, acc); err != nil {
		return result.ScenarioResult{}, err
	}
	if a := st.Schedule.Away; a != nil && cfg.killedNodeRefusals() == target.BlameHarness {
		// The planned outage stands for the measured one, which went with the run.
		acc.SetDeadReplica(a.Replica, result.Interval{From: a.From, To: max(a.To, st.Outage.To)})
	}
	res := result.ScenarioResult{Scenario: st.Scenario, Conditions: st.Conditions, Faults: st.Faults, NoStore: true,
		StoreCPUWhy: "not measured: the run was killed", Sync: &result.SyncHealth{Why: "not measured: the run was killed"}}
	res.Shards = st.Shards
	rep := acc.Report()
	// The store's counters went with the run: the claims about store commands are left out,
	// as the shards' judge leaves them.
	claimed := st.Scenario
	if limiters.Mode(claimed.Mode) != limiters.ModeSplit {
		claimed.Mode = ""
	}
	fillResult(&res, &rep, cfg, claimed, probes, st.Outage, faultLat)
	res.Duration = sched.Duration
	res.Incomplete = fmt.Sprintf("killed %.1f s into the scenario: judged on the %d of %d requests scheduled before %.1f s, every one of which has an outcome",
		lastSent(outcomes).Seconds(), len(sched.Requests), len(whole.Requests), sched.Duration.Seconds())
	if len(sched.Requests) == len(whole.Requests) {
		res.Incomplete = "every request has an outcome: the run was killed after this scenario's traffic, before its summary"
	}
	return res, nil
}

// startedOutcomes is a started scenario's whole schedule, rebuilt as it was sent (its
// classes, the documents' when it names none), and the outcomes its directory holds.
func startedOutcomes(dir string, st result.Started) (schedule.Schedule, []traffic.Outcome, error) {
	classes := st.Classes
	if len(classes) == 0 {
		classes = schedule.DefaultClasses()
	}
	sched, err := startedSchedule(dir, st, classes)
	if err != nil {
		return schedule.Schedule{}, nil, err
	}
	outcomes, err := readOutcomes(dir, len(sched.Requests))
	return sched, outcomes, err
}

// startedConfig is the config a started scenario ran with, as far as a judge needs it, and
// jc's gates where it gives them: the gate clock the run recorded unless jc names one.
func startedConfig(st result.Started, jc JudgeConfig) Config {
	cfg := DefaultConfig()
	c := st.Config
	cfg.Spec = st.Schedule
	cfg.Provider, cfg.Network, cfg.StoreTimeout, cfg.killedNode, cfg.exactClock = c.Provider, c.Network, c.StoreTimeout, st.KilledNode, st.ExactClock
	if c.Store != "" {
		cfg.Store = c.Store
	}
	if st.SyncInterval > 0 { // as asked, before scaling; a scenario.json without them: the defaults
		cfg.SyncInterval, cfg.Outage = st.SyncInterval, st.OutageAsked
	}
	cfg.RecoveryGrace, cfg.Shards = c.RecoveryGrace, st.Shards
	cfg.Zones = topology.Topology{Zones: c.Zones}
	cfg.Gates.LatenessP99, cfg.Gates.MinRateRatio, cfg.Gates.Clock = st.Lateness, st.MinRateRatio, st.GateClock
	if jc.Gates != (accounting.Gates{}) {
		cfg.Gates = jc.Gates
		if cfg.Gates.LatenessP99 == 0 {
			cfg.Gates.LatenessP99 = st.Lateness
		}
		if cfg.Gates.Clock == "" {
			cfg.Gates.Clock = st.GateClock
		}
	}
	return cfg
}

// readOutcomes reads a scenario's outcomes: its outcomes.csv, or with shards those the
// shards wrote (the merged file is written as they finish). Outcomes for requests beyond
// the schedule are an error: they are from another run.
func readOutcomes(dir string, n int) ([]traffic.Outcome, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "shard-*", traffic.OutcomesFile))
	if len(files) == 0 {
		files = []string{filepath.Join(dir, traffic.OutcomesFile)}
	}
	var out []traffic.Outcome
	for _, f := range files {
		if _, err := traffic.ReadFile(f, func(o traffic.Outcome) error {
			if o.Index < 0 || o.Index >= n {
				return fmt.Errorf("outcome for request %d, but the schedule has %d: the outcomes are from another run", o.Index, n)
			}
			out = append(out, o)
			return nil
		}); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return out, nil
}

// answeredPrefix is the schedule cut before its first request without an outcome: a
// request the generator sent gets an outcome (an answer or an error), so every request
// before that one was sent and answered before the kill, and the part after it is not
// known. ok is false when no request has an outcome.
func answeredPrefix(s *schedule.Schedule, outcomes []traffic.Outcome) (schedule.Schedule, bool) {
	seen := make([]bool, len(s.Requests))
	for _, o := range outcomes {
		seen[o.Index] = true
	}
	k := slices.Index(seen, false)
	if k < 0 {
		return *s, true
	}
	cut := s.Requests[k].At
	k, _ = slices.BinarySearchFunc(s.Requests, cut, func(r schedule.Request, t time.Duration) int { return cmp.Compare(r.At, t) })
	if k == 0 || cut <= 0 {
		return schedule.Schedule{}, false
	}
	p := *s
	p.Requests, p.Duration = s.Requests[:k], cut
	return p, true
}

func lastSent(outcomes []traffic.Outcome) time.Duration {
	var t time.Duration
	for _, o := range outcomes {
		t = max(t, o.Sent)
	}
	return t
}

// lastWritten is when the scenario's outcomes were last written: when the run died, near enough.
func lastWritten(dir string) time.Time {
	var t time.Time
	files, _ := filepath.Glob(filepath.Join(dir, "*", traffic.OutcomesFile))
	for _, f := range append(files, filepath.Join(dir, traffic.OutcomesFile)) {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(t) {
			t = st.ModTime()
		}
	}
	return t.UTC()
}

// startedSchedule is a started scenario's whole schedule: the schedule file it replayed, or
// the one its spec builds.
func startedSchedule(dir string, st result.Started, classes []schedule.Class) (schedule.Schedule, error) {
	if st.ScheduleFile != "" {
		f, err := schedule.ReadFile(filepath.Join(dir, st.ScheduleFile))
		return f.Schedule, err
	}
	return schedule.Build(st.Schedule, classes)
}
