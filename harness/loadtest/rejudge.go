package loadtest

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/recorder"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
)

// JudgeRunDir judges a load test's run directory: a finished run again (Rejudge), one a kill
// cut short from what it wrote (JudgeKilled).
func JudgeRunDir(dir string, jc JudgeConfig) (result.Summary, error) {
	if err := checkClock(jc.Gates.Clock); err != nil {
		return result.Summary{}, err
	}
	if r, err := readStarted(dir); err == nil && r.written && !r.summary.FinishedAt.IsZero() && len(r.unjudged()) == 0 {
		return Rejudge(dir, jc)
	}
	return JudgeKilled(dir, jc)
}

// checkClock says what is wrong with a --gate-clock; empty is allowed: the default (a load
// test's arrival bounds, a judge's the run's own clock) stands in.
func checkClock(clock string) error {
	if clock == "" {
		return nil
	}
	_, err := accounting.ParseClock(clock)
	if err != nil {
		return fmt.Errorf("--gate-clock: %w", err)
	}
	return nil
}

// Rejudge judges a finished load test in dir again from what it wrote, as the run judged it:
// every scenario's outcomes on its whole schedule, on the fault windows and outage the run
// measured, with the store's, the sync's and the fault's figures its summary.json holds (they
// went with the fleet) and the checks only the live run could make (the cluster store's
// agreement, the shards' clock skew) carried over. jc's gates replace the run's where given,
// its gate clock too; both clocks are counted either way. The summary is written to jc.OutDir.
func Rejudge(dir string, jc JudgeConfig) (result.Summary, error) {
	r, err := readStarted(dir)
	if err != nil {
		return result.Summary{}, err
	}
	if !r.written || r.summary.FinishedAt.IsZero() {
		return result.Summary{}, fmt.Errorf("%s: the run did not finish (no summary.json of its own, or one without finished_at): harness judge judges what it wrote, marked incomplete", dir)
	}
	if jc.OutDir == "" {
		jc.OutDir = dir
	}
	old := r.summary
	sum := old
	sum.Scenarios, sum.Checks, sum.Failed, sum.Pass, sum.GeneratorBound = nil, nil, nil, true, false
	for i, st := range r.starts {
		k := slices.IndexFunc(old.Scenarios, func(s result.ScenarioResult) bool { return s.Name == st.Scenario.Name })
		if k < 0 {
			continue
		}
		res := old.Scenarios[k]
		if res.Error == "" {
			if res, err = rejudgeScenario(st, r.dirs[i], res, jc); err != nil {
				return result.Summary{}, fmt.Errorf("judge %s again: %w", st.Scenario.Name, err)
			}
		}
		addScenario(&sum, res)
	}
	sum.Settle() // an interrupted run stays interrupted
	return sum, writeSummary(jc.OutDir, sum)
}

// rejudgeScenario judges one finished scenario again from its outcomes; old is what the run
// made of it.
func rejudgeScenario(st result.Started, dir string, old result.ScenarioResult, jc JudgeConfig) (result.ScenarioResult, error) {
	cfg := startedConfig(st, jc)
	sched, outcomes, err := startedOutcomes(dir, st)
	if err != nil {
		return old, err
	}
	faults := old.Faults
	if faults == nil {
		faults = st.Faults
	}
	acc, err := cfg.accumulator(&sched, faults)
	if err != nil {
		return old, err
	}
	probes := newProbeTimes(&sched)
	for _, o := range outcomes {
		probes.add(o)
		if err := acc.Add(o); err != nil {
			return old, err
		}
	}
	if err := readBackend(dir, st, acc); err != nil {
		return old, err
	}
	outage := st.Outage
	if t := old.FaultTiming; t != nil { // as measuredFault measured it
		outage = t.Outage()
		if outage.To == 0 {
			outage.To = max(old.Duration, outage.From+1)
		}
		if st.Scenario.Fault == result.FaultKill && t.Began > 0 && cfg.killedNodeRefusals() == target.BlameHarness {
			from := outage.From
			if a := st.Schedule.Away; a != nil {
				from = min(from, a.From)
			}
			acc.SetDeadReplica(cfg.Spec.Replicas-1, result.Interval{From: from, To: outage.To})
		}
	}
	if st.ScheduleFile != "" {
		cfg.Schedule = &schedule.File{} // a replayed schedule: the documents' claims are not about it
	}
	res := old
	res.Checks, res.Claims, res.Probes, res.PeakRatios, res.Clocks = nil, nil, nil, nil, nil
	rep := acc.Report()
	fillResult(&res, &rep, cfg, st.Scenario, probes, outage, nil)
	names := map[string]bool{}
	for _, c := range res.Checks {
		names[c.Name] = true
	}
	for _, c := range old.Checks { // made by the live run alone
		if !names[c.Name] && liveOnly(c.Name) {
			res.Checks = append(res.Checks, c)
			res.Pass = res.Pass && c.Pass
		}
	}
	return res, nil
}

// liveOnly says whether a check is one only the live run can make: it reads the store or the
// shards' records, not the outcomes.
func liveOnly(name string) bool {
	return name == "store agrees with the accepted" || name == "shard clock skew (ms)"
}

// readBackend gives acc what reached the recording backend of a scenario that ran behind
// one (its backend.csv); a run killed before the scenario's traffic was over has none, and
// its promises are then counted without the backend's clock.
func readBackend(dir string, st result.Started, acc *accounting.Accumulator) error {
	if st.ExactClock != result.ClockBackend {
		return nil
	}
	err := recorder.ReadFile(filepath.Join(dir, recorder.File), func(i int, at time.Duration) { acc.AddBackend(i, at) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		acc.UseBackend()
	}
	return err
}
