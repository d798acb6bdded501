package loadtest

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/limiters"
)

// ReplayedFile is the copy of a replayed schedule file a scenario keeps in its directory:
// what was sent, byte for byte, for a judge and a reader.
const ReplayedFile = "schedule.json"

// WithSchedule is c replaying f (harness loadtest --schedule): every system runs one
// scenario, f's traffic exactly (its offsets, clients and replicas, from a window edge since
// the epoch, no background population), with f's store fault at f's offsets when it has one.
// The built-in replica runs at f's time scale and replica count, and f's design unless c
// names one; a target file runs at its own, which must be f's.
func (c Config) WithSchedule(f *schedule.File) (Config, error) {
	if c.Shards > 1 {
		return c, fmt.Errorf("--schedule is sent from this process: drop --shards (harness attack --schedule sends a schedule file from shards)")
	}
	if f.TimeScale > 0 {
		c.Spec.TimeScale = f.TimeScale
	}
	c.Spec.Replicas = max(f.Replicas, f.Schedule.Replicas())
	if c.Design == "" {
		c.Design = f.Design
	}
	c.Schedule, c.FailOpen, c.Matrix = f, false, false
	for _, t := range c.Targets {
		if t == nil {
			continue
		}
		if w := t.Window(); f.Align > 0 && w != f.Align {
			return c, fmt.Errorf("the schedule %q was made for a %v window; target %s declares %v: replay it on the system it was made for", f.Name, f.Align, t.Name, w)
		}
		if need := f.Schedule.Replicas(); need > t.Start.Replicas && t.Start.Kind != target.StartURL {
			return c, fmt.Errorf("the schedule %q sends to %d replicas; target %s starts %d", f.Name, need, t.Name, t.Start.Replicas)
		}
	}
	return c, nil
}

// replayScenarios are the scenarios of a replay: one per system, gated for the first.
func (c Config) replayRuns(targets []*target.Target) []run {
	f := c.Schedule
	fault := ""
	if f.Fault != nil {
		fault = f.Fault.Kind
	}
	var out []run
	for k, t := range targets {
		if t == nil {
			sc := Scenarios(c.Algorithm, c.Mode, limiters.Design(c.Design), false, false)[0]
			sc.Name, sc.Fault, sc.Gated = "schedule/"+f.Name, fault, k == 0
			out = append(out, run{sc: sc})
			continue
		}
		sc := result.Scenario{Name: t.Name + "/schedule-" + f.Name, Algorithm: t.Algorithm, Fault: fault, Target: t.Name, Gated: k == 0}
		out = append(out, run{sc: sc, sys: sut{t: t}})
	}
	return out
}

// replayed is the schedule file's traffic, checked against the run's window; its requests
// are a copy, so that nothing the run does reaches the file's.
func (c Config) replayed() (schedule.Schedule, error) {
	f := c.Schedule
	s := f.Schedule
	s.Requests = slices.Clone(s.Requests)
	if w := c.Spec.Window(); f.Align > 0 && w != f.Align {
		return s, fmt.Errorf("the schedule %q was made for a %v window; this run's is %v (time scale %g)", f.Name, f.Align, w, c.Spec.TimeScale)
	}
	return s, nil
}

// replayOutage is the replayed file's store fault, if it has one, in place of the load
// test's own timing.
func (c Config) replayOutage() (result.Interval, bool) {
	if c.Schedule == nil || c.Schedule.Fault == nil {
		return result.Interval{}, false
	}
	return result.Interval{From: c.Schedule.Fault.From, To: c.Schedule.Fault.To}, true
}

// keepReplayed writes the replayed schedule into the scenario's directory.
func (c Config) keepReplayed(dir string) error {
	if c.Schedule == nil {
		return nil
	}
	return schedule.WriteFile(filepath.Join(dir, ReplayedFile), c.Schedule)
}
