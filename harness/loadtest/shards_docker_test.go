package loadtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// requireHarnessImage needs Docker and the harness image, and builds the image when it is
// missing. It skips only where Docker is truly absent, never in CI.
func requireHarnessImage(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err == nil {
		_, err = cli.Info(ctx, client.InfoOptions{})
	}
	if err != nil {
		_, sockErr := os.Stat("/var/run/docker.sock")
		if os.Getenv("CI") == "" && os.Getenv("DOCKER_HOST") == "" && errors.Is(sockErr, os.ErrNotExist) {
			t.Skipf("needs Docker, and there is none here: %v", err)
		}
		t.Fatalf("needs Docker: %v", err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, DefaultHarnessImage); err != nil {
		script, _ := filepath.Abs("../../scripts/build-images.sh")
		if out, err := exec.Command(script, "harness").CombinedOutput(); err != nil {
			t.Fatalf("%s harness: %v\n%s", script, err, out)
		}
	}
}

// TestContainerShardsSendTheWholeSchedule runs two shards as containers of the harness image
// on the host's network against a no-op replica and judges them: every request of the
// schedule sent once, every one answered.
func TestContainerShardsSendTheWholeSchedule(t *testing.T) {
	// No registry here, so no reaper image: the runner removes its containers itself. The
	// setting is read once, at Testcontainers' first use.
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	requireHarnessImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fl, err := fleet.LocalProvider{}.Start(ctx, fleet.Spec{Target: fleet.TargetNoop, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Terminate(context.WithoutCancel(ctx))
	dir := t.TempDir()
	spec := testSpec
	spec.Replicas = 1
	window := time.Duration(float64(time.Minute) * spec.TimeScale)
	shards, err := RunShards(ctx, ShardRun{Runner: RunnerContainer, Dir: dir, Attack: AttackConfig{
		Schedule: spec, Shards: 2, Scenario: "noop", Targets: fl.ReplicaURLs(), ClockRef: fl.RedisAddr(),
		Start: traffic.NextAligned(time.Now().Add(shardLead), window)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range shards {
		if m.Error != "" || m.Sent != m.Scheduled || m.Sent == 0 || m.ClockOffset == nil {
			t.Errorf("shard %d: %d of %d sent, offset %+v, error %q", m.Shard, m.Sent, m.Scheduled, m.ClockOffset, m.Error)
		}
	}
	sum, err := Judge([]string{dir}, JudgeConfig{OutDir: dir, Gates: DefaultConfig().Gates})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Scenarios[0]
	s, _ := schedule.Build(spec, schedule.DefaultClasses())
	if r.Requests != len(s.Requests) || r.Accepted != r.Requests || r.Errors.Total() != 0 || r.Shards != 2 {
		t.Errorf("judged %d requests, %d accepted, %d errors over %d shards; want all %d accepted", r.Requests, r.Accepted, r.Errors.Total(), r.Shards, len(s.Requests))
	}
}
