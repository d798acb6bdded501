package loadtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// Shard runners of the load test: every shard a `harness attack` process on this machine,
// or a container of the harness image (FROM scratch, host networking).
const (
	RunnerProcess   = "process"
	RunnerContainer = "container"
	// DefaultHarnessImage is the image scripts/build-images.sh builds for the container runner.
	DefaultHarnessImage = "rlharness/harness:dev"
)

// shardLead is how far ahead the shards' common start is set: time for every shard to start,
// build the whole schedule and read the clock reference before the first request is due.
const shardLead = 3 * time.Second

// ShardRun is N shards of one scenario to run on this machine.
type ShardRun struct {
	Runner string // RunnerProcess (default) or RunnerContainer
	Binary string // process runner: the harness executable; default this one
	Image  string // container runner: default DefaultHarnessImage
	// Attack is every shard's command line but its index and directory; Attack.Start must be
	// set, so that all shards share one origin.
	Attack AttackConfig
	Dir    string // shard i writes Dir/shard-i
	Logger *slog.Logger
}

// AttackArgs is the `harness attack` command line (the command's name first) of ac's shard i
// writing under the run directory out: what both shard runners start. The attack command reads
// it back as ac with Shard i and OutDir out; the command's test (TestEveryCommandLineReadsBack
// in harness/cmd/harness) holds the two to that, field by field.
func AttackArgs(ac AttackConfig, i int, out string) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	args := []string{"attack", "--shard", fmt.Sprintf("%d/%d", i, ac.Shards),
		"--time-scale", f(ac.Schedule.TimeScale), "--rate", f(ac.Schedule.Rate),
		"--clients", strconv.Itoa(ac.Schedule.Clients), "--seed", strconv.FormatUint(ac.Schedule.Seed, 10),
		"--replicas", strconv.Itoa(ac.Schedule.Replicas),
		"--start", ac.Start.UTC().Format(time.RFC3339Nano), "--out", out}
	for _, t := range ac.Targets {
		args = append(args, "--target", t)
	}
	for flag, v := range map[string]string{"--scenario": ac.Scenario, "--algorithm": ac.Algorithm, "--mode": ac.Mode, "--clock-ref": ac.ClockRef} {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	return args
}

// RunShards starts every shard, waits for their common start and calls onStart on it (the
// caller's faults and counters run on the shards' clock), waits for every shard to finish and
// returns their shard.json records in shard order. A shard that fails fails the run.
func RunShards(ctx context.Context, r ShardRun, onStart func(time.Time) error) ([]result.Shard, error) {
	ac := r.Attack
	if ac.Shards < 2 {
		return nil, fmt.Errorf("shard runner: %d shards; use the in-process sender for one", ac.Shards)
	}
	if ac.Start.IsZero() {
		return nil, errors.New("shard runner: no start instant; every shard must be given the same one")
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	var launch func(ctx context.Context, i int) error
	switch r.Runner {
	case RunnerProcess, "":
		bin := r.Binary
		if bin == "" {
			exe, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("shard runner: find the harness executable: %w; give its path", err)
			}
			bin = exe
		}
		launch = func(ctx context.Context, i int) error {
			return runProcess(ctx, bin, AttackArgs(ac, i, r.Dir), ShardDir(r.Dir, i))
		}
	case RunnerContainer:
		image := r.Image
		if image == "" {
			image = DefaultHarnessImage
		}
		launch = func(ctx context.Context, i int) error { return runContainer(ctx, image, ac, i, r.Dir, r.Logger) }
	default:
		return nil, fmt.Errorf("--shard-runner %q: use %s or %s", r.Runner, RunnerProcess, RunnerContainer)
	}
	for i := range ac.Shards {
		if err := os.MkdirAll(ShardDir(r.Dir, i), 0o755); err != nil {
			return nil, fmt.Errorf("create shard %d's directory: %w", i, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, ac.Shards)
	var wg sync.WaitGroup
	for i := range ac.Shards {
		wg.Go(func() {
			if err := launch(ctx, i); err != nil {
				errs[i] = fmt.Errorf("shard %d/%d: %w", i, ac.Shards, err)
				cancel() // one shard's clients missing makes the run's verdict meaningless
			}
		})
	}
	var startErr error
	if err := traffic.WaitUntil(ctx, ac.Start); err == nil && onStart != nil {
		if startErr = onStart(ac.Start); startErr != nil {
			cancel()
		}
	}
	wg.Wait()
	if err := errors.Join(append(errs, startErr)...); err != nil {
		return nil, err
	}
	shards := make([]result.Shard, ac.Shards)
	for i := range shards {
		m, err := result.Read[result.Shard](ShardDir(r.Dir, i), result.ShardFile)
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(ShardDir(r.Dir, i), "attack.log"))
			return nil, fmt.Errorf("shard %d: %w; its output: %s", i, err, lastLines(string(log), 10))
		}
		shards[i] = m
	}
	return shards, nil
}

// lastLines is the end of a shard's output, for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// runProcess runs one shard as a child process; its output goes to dir/attack.log.
func runProcess(ctx context.Context, bin string, args []string, dir string) error {
	logf, err := os.Create(filepath.Join(dir, "attack.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A canceled run asks the shard to stop the way Ctrl-C does, so it still writes shard.json.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w (see %s)", bin, args[:3], err, logf.Name())
	}
	return nil
}

// runContainer runs one shard in the harness image on the host's network, its directory
// bind-mounted, as this user so that the files it writes are ours.
func runContainer(ctx context.Context, image string, ac AttackConfig, i int, dir string, log *slog.Logger) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	const mount = "/out"
	req := testcontainers.ContainerRequest{
		Image:  image,
		Name:   fmt.Sprintf("rlharness-shard-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6, i),
		Cmd:    AttackArgs(ac, i, mount),
		Labels: fleet.Labels("", fmt.Sprintf("shard-%d", i)),
		User:   fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = append(hc.Binds, abs+":"+mount)
		},
		WaitingFor: wait.ForExit().WithExitTimeout(time.Until(ac.Start) + 2*time.Hour),
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if ctr != nil {
		defer func() {
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := ctr.Terminate(tctx); err != nil {
				log.Warn("remove shard container", "shard", i, "err", err)
			}
		}()
	}
	if err != nil {
		return fmt.Errorf("run the shard container from %s (built by scripts/build-images.sh harness): %w", image, err)
	}
	st, err := ctr.State(ctx)
	if err != nil {
		return fmt.Errorf("read the shard container's state: %w", err)
	}
	if st.ExitCode != 0 {
		return fmt.Errorf("shard container exited %d; see %s", st.ExitCode, ShardDir(dir, i))
	}
	return nil
}

// sendShards is the load test's sender with --shards N: N attack shards on this machine, then
// their outcomes merged into sink in shard order, on the common origin's clock.
func (c Config) sendShards(sc result.Scenario) sendFunc {
	return func(ctx context.Context, s *schedule.Schedule, fl fleet.Fleet, opts traffic.Options, sink func(traffic.Outcome) error) ([]result.Shard, error) {
		dir := sc.Dir(c.OutDir)
		start := traffic.NextAligned(time.Now().Add(shardLead), opts.Align)
		run := ShardRun{Runner: c.ShardRunner, Binary: c.HarnessBinary, Image: c.HarnessImage, Dir: dir, Logger: c.Logger,
			Attack: c.shardAttack(sc, fl.ReplicaURLs(), fl.RedisAddr(), start)}
		fmt.Fprintf(c.Progress, "   %d shards (%s runner) from %s\n", c.Shards, run.Runner, run.Attack.Start.UTC().Format(time.RFC3339Nano))
		shards, err := RunShards(ctx, run, opts.OnStart)
		if err != nil {
			return nil, err
		}
		for i := range shards {
			if _, err := traffic.ReadFile(filepath.Join(ShardDir(dir, i), traffic.OutcomesFile), sink); err != nil {
				return shards, fmt.Errorf("merge shard %d: %w", i, err)
			}
		}
		return shards, nil
	}
}

// shardAttack is every shard's command line for a scenario of the load test, but its index
// and directory: the config's schedule, sent at urls from start.
func (c Config) shardAttack(sc result.Scenario, urls []string, clockRef string, start time.Time) AttackConfig {
	return AttackConfig{Schedule: c.Spec, Shards: c.Shards, Scenario: sc.Name, Algorithm: sc.Algorithm,
		Mode: sc.Mode, Targets: urls, ClockRef: clockRef, Start: start}
}
