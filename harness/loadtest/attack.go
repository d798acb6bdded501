package loadtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// JobIndexEnv is the variable a Kubernetes Indexed Job sets to the pod's completion index:
// the shard index when --shard is "$JOB_COMPLETION_INDEX/N" or just "/N".
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// ParseShard reads "i/N" (0 <= i < N). An index that is empty or the literal
// $JOB_COMPLETION_INDEX is taken from getenv(JobIndexEnv), so the same command line serves
// every pod of an Indexed Job.
func ParseShard(s string, getenv func(string) string) (i, n int, err error) {
	idx, count, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("--shard %q: want i/N, e.g. 0/4 (shards numbered from 0) or $%s/4", s, JobIndexEnv)
	}
	if idx == "" || idx == "$"+JobIndexEnv || idx == "${"+JobIndexEnv+"}" {
		idx = getenv(JobIndexEnv)
		if idx == "" {
			return 0, 0, fmt.Errorf("--shard %q takes its index from $%s, which is not set (Kubernetes sets it in an Indexed Job)", s, JobIndexEnv)
		}
	}
	i, err1 := strconv.Atoi(idx)
	n, err2 := strconv.Atoi(count)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("--shard %q: %w", s, err)
	}
	if n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %d/%d: want 0 <= i < N (shards numbered from 0)", i, n)
	}
	return i, n, nil
}

// AttackConfig is one generator shard as `harness attack` asks for it.
type AttackConfig struct {
	Schedule      schedule.Spec
	Shard, Shards int
	Scenario      string // names the run in the judge's summary
	Algorithm     string // what the target runs, for the document's claims (optional)
	Mode          string
	Targets       []string // one base URL per replica index; fewer are reused round-robin
	// Start is the origin every shard is given; zero: the next window edge since the epoch,
	// which shards started within one window of each other also agree on.
	Start    time.Time
	ClockRef string          // Redis host:port whose TIME every shard reads; "" measures nothing
	OutDir   string          // the run directory: the shard writes OutDir/shard-<i>
	Options  traffic.Options // connection settings; Start and Align are set from the above
	Progress io.Writer
	Commit   string // the binary's source revision, for shard.json
	// ScheduleFile, when set, is a schedule file (harness hunt writes them) that is the whole
	// schedule in place of the one Schedule builds (harness attack --schedule).
	ScheduleFile string

	file   *schedule.File // ScheduleFile read
	digest string         // its SHA-256
}

// Attack builds the whole schedule from the spec, sends the shard's clients' requests from
// the start instant and writes outcomes.csv (indexes into the whole schedule) and shard.json
// into OutDir/shard-<i>. The returned error is the run's; shard.json records it too.
func Attack(ctx context.Context, ac AttackConfig) (result.Shard, error) {
	if ac.Progress == nil {
		ac.Progress = io.Discard
	}
	if len(ac.Targets) == 0 {
		return ac.record(), errors.New("no target URLs: give --target once per replica (or one for all)")
	}
	if ac.ScheduleFile != "" {
		if err := ac.readFile(); err != nil {
			return ac.record(), err
		}
	} else if err := schedule.CheckTimeScale(ac.Schedule.TimeScale); err != nil {
		return ac.record(), err
	}
	if ac.Schedule.Replicas == 0 {
		ac.Schedule.Replicas = len(ac.Targets)
	}
	m := ac.record()
	p, err := ac.plan()
	if err != nil {
		return m, err
	}
	if ac.ClockRef != "" {
		off, err := MeasureClockOffset(ctx, ac.ClockRef, time.Now)
		if err != nil {
			return m, err
		}
		m.ClockOffset = &off
	}
	dir := ShardDir(ac.OutDir, ac.Shard)
	w, err := traffic.Replace(dir)
	if err != nil {
		return m, err
	}
	if ac.file != nil { // the judge reads the schedule beside the outcomes
		if err := schedule.WriteFile(filepath.Join(dir, ReplayedFile), ac.file); err != nil {
			return m, err
		}
	}
	err = ac.send(ctx, p, w, &m)
	return m, errors.Join(err, result.Write(dir, result.ShardFile, m))
}

// record is the shard's shard.json before it sends: what it was asked.
func (ac AttackConfig) record() result.Shard {
	m := result.Shard{Shard: ac.Shard, Shards: ac.Shards, Scenario: ac.Scenario, Algorithm: ac.Algorithm, Mode: ac.Mode,
		Schedule: ac.Schedule, Targets: ac.Targets, Cores: runtime.NumCPU(), Commit: ac.Commit}
	m.Host, _ = os.Hostname()
	if ac.file != nil {
		m.ScheduleFile, m.ScheduleDigest = ReplayedFile, ac.digest
	}
	return m
}

// readFile reads ScheduleFile: the whole schedule, its time scale and replicas the spec's.
// Its digest is of the file as Encode writes it, which is what the shard keeps beside its
// outcomes, byte for byte.
func (ac *AttackConfig) readFile() error {
	f, err := schedule.ReadFile(ac.ScheduleFile)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := schedule.Encode(&b, &f); err != nil {
		return err
	}
	sum := sha256.Sum256(b.Bytes())
	ac.file, ac.digest = &f, hex.EncodeToString(sum[:])
	ac.Schedule = schedule.Spec{TimeScale: f.TimeScale, Seed: f.Seed, Replicas: max(f.Replicas, f.Schedule.Replicas())}
	if ac.Scenario == "" || ac.Scenario == "attack" {
		ac.Scenario = "schedule/" + f.Name
	}
	return nil
}

// shardPlan is what a shard sends: its part of the whole schedule, where each of the part's
// requests is in the whole (outcomes name the whole's indexes), and a URL per replica index.
type shardPlan struct {
	whole, part schedule.Schedule
	index       []int32
	urls        []string
}

// plan builds the whole schedule, as the judge does (wholeSchedule), and cuts out the shard's
// part; targets are reused round-robin when there are fewer than replica indexes.
func (ac AttackConfig) plan() (shardPlan, error) {
	whole, err := ac.wholeSchedule()
	if err != nil {
		return shardPlan{}, err
	}
	part, index, err := whole.Shard(ac.Shard, ac.Shards)
	if err != nil {
		return shardPlan{}, err
	}
	urls := make([]string, ac.Schedule.Replicas)
	for k := range urls {
		urls[k] = ac.Targets[k%len(ac.Targets)]
	}
	return shardPlan{whole: whole, part: part, index: index, urls: urls}, nil
}

// wholeSchedule is the shard's whole schedule: the schedule file's, or the spec's.
func (ac AttackConfig) wholeSchedule() (schedule.Schedule, error) {
	if ac.file != nil {
		return ac.file.Schedule, nil
	}
	return wholeSchedule(ac.Schedule)
}

// wholeSchedule is the whole schedule of a sharded run, from the spec every shard and the
// judge hold: the built-in replica's classes.
func wholeSchedule(spec schedule.Spec) (schedule.Schedule, error) {
	return schedule.Build(spec, schedule.DefaultClasses())
}

// send sends the shard's part from the common start, aligned on the schedule's window, and
// writes its outcomes to w, which it closes; m gets the origin and what was sent.
func (ac AttackConfig) send(ctx context.Context, p shardPlan, w *traffic.Writer, m *result.Shard) error {
	opts := ac.Options
	if opts.DecidedHeader == "" { // a shard sends the built-in replica's schedule: it says when it decided
		opts.DecidedHeader = replicaDecidedAt
	}
	opts.Start, opts.Align = ac.Start, ac.Schedule.Window()
	if opts.Warm == 0 {
		opts.Warm = warmConns
	}
	userStart := opts.OnStart
	opts.OnStart = func(origin time.Time) error {
		m.Start = origin
		fmt.Fprintf(ac.Progress, "shard %d/%d: %d of %d requests from %s\n", ac.Shard, ac.Shards, len(p.part.Requests), len(p.whole.Requests), origin.UTC().Format(time.RFC3339Nano))
		if userStart != nil {
			return userStart(origin)
		}
		return nil
	}
	m.Scheduled = len(p.part.Requests)
	sum, runErr := traffic.Run(ctx, &p.part, p.urls, opts, func(o traffic.Outcome) error {
		o.Index = int(p.index[o.Index])
		return w.Write(o)
	})
	m.Sent, m.LastSent, m.Truncated = sum.Sent, sum.LastSent, sum.Truncated
	m.FinishedAt = time.Now().UTC()
	if runErr != nil {
		m.Error = runErr.Error()
	}
	if m.Start.IsZero() {
		m.Start = ac.Start
	}
	return errors.Join(runErr, w.Close())
}
