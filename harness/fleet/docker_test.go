package fleet

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/edgeproof/rlharness/internal/dockertest"
)

// requireDocker returns a Docker client once dockertest.Require has found Docker and
// the noop and redis images.
func requireDocker(t *testing.T) *testcontainers.DockerClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dockertest.Require(t, "noop", "redis")
	cli, err := dockerClient(ctx)
	if err != nil {
		t.Fatalf("needs Docker: %v", err)
	}
	return cli
}

// labelled lists the containers and networks that carry label.
func labelled(t *testing.T, cli *testcontainers.DockerClient, label string) (containers, networks []string) {
	t.Helper()
	ctx := context.Background()
	f := make(client.Filters).Add("label", label)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		containers = append(containers, strings.Join(c.Names, ","))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		networks = append(networks, n.Name)
	}
	return containers, networks
}

func TestDockerLifecycle(t *testing.T) {
	cli := requireDocker(t)
	f := scenario(t, DockerProvider{Logger: testLogger(t)}, Spec{Replicas: 2, Target: TargetNoop})
	c := f.Conditions()
	if c.Provider != "docker" || c.Network != "bridge" || c.RedisImage != DefaultRedisImage || c.TargetImage != DefaultNoopImage {
		t.Errorf("conditions = %+v", c)
	}
	if cs, ns := labelled(t, cli, LabelRun+"="+c.RunID); len(cs)+len(ns) > 0 {
		t.Errorf("left behind after terminate: containers %v, networks %v", cs, ns)
	}
}

func TestDockerHostNetwork(t *testing.T) {
	cli := requireDocker(t)
	f := scenario(t, DockerProvider{Logger: testLogger(t)}, Spec{Replicas: 2, Target: TargetNoop, Network: NetworkHost})
	c := f.Conditions()
	if c.Network != "host" {
		t.Errorf("conditions = %+v", c)
	}
	if cs, ns := labelled(t, cli, LabelRun+"="+c.RunID); len(cs)+len(ns) > 0 {
		t.Errorf("left behind after terminate: containers %v, networks %v", cs, ns)
	}
}

func TestDockerEightReplicas(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	rules := []byte("default:\n  limit: 600\n  window: 60s\n")
	f, err := DockerProvider{Logger: testLogger(t)}.Start(ctx, Spec{Target: TargetNoop, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Conditions()
	t.Logf("docker fleet, redis + %d noop replicas on a bridge network, started in %s", c.Replicas, c.StartupTime.Round(time.Millisecond))
	// Every replica gets the rule file; read it back from the last one.
	last := f.(*fleet).members[DefaultReplicas].(*dockerMember)
	rc, err := last.ctr.CopyFileFromContainer(ctx, containerRules)
	if err != nil {
		t.Fatalf("rule file in replica-%d: %v", DefaultReplicas-1, err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if !bytes.Equal(got, rules) {
		t.Errorf("rule file in replica-%d = %q, want %q", DefaultReplicas-1, got, rules)
	}
	begin := time.Now()
	if err := f.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("terminated in %s", time.Since(begin).Round(time.Millisecond))
	if len(f.ReplicaURLs()) != DefaultReplicas {
		t.Errorf("%d replica URLs, want %d", len(f.ReplicaURLs()), DefaultReplicas)
	}
}

func TestDockerMissingImage(t *testing.T) {
	requireDocker(t)
	_, err := DockerProvider{Logger: testLogger(t)}.Start(context.Background(), Spec{Replicas: 1, Target: TargetNoop, Image: "rlharness/absent:dev"})
	want := "docker image rlharness/absent:dev not found: run scripts/build-images.sh"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

// TestDockerStartFailureCleansUp starts a target that exits at once: Start
// must fail fast with the container's output and leave nothing behind.
func TestDockerStartFailureCleansUp(t *testing.T) {
	cli := requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The redis image as the target: redis-server rejects --listen and exits.
	spec := Spec{RunID: "fail-" + newRunID(), Replicas: 1, Target: TargetNoop, Image: DefaultRedisImage}
	begin := time.Now()
	_, err := DockerProvider{Logger: testLogger(t)}.Start(ctx, spec)
	if err == nil {
		t.Fatal("start with a target that exits: no error")
	}
	t.Logf("after %s, error as the user sees it: %v", time.Since(begin).Round(time.Millisecond), err)
	if time.Since(begin) > 20*time.Second {
		t.Errorf("took %s to notice the target exited", time.Since(begin))
	}
	if cs, ns := labelled(t, cli, LabelRun+"="+spec.RunID); len(cs)+len(ns) > 0 {
		t.Errorf("left behind: containers %v, networks %v", cs, ns)
	}
}

// TestCleanupRemovesOrphans labels one container as a dead process's and one
// as this process's: Cleanup removes the first only.
func TestCleanupRemovesOrphans(t *testing.T) {
	cli := requireDocker(t)
	ctx := context.Background()
	host, _ := os.Hostname()
	run := "cleanup-" + newRunID()
	mk := func(name, owner string) {
		t.Helper()
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:  DefaultNoopImage,
				Name:   "rlharness-" + run + "-" + name,
				Labels: map[string]string{LabelFleet: "1", LabelRun: run, LabelOwner: owner, LabelMember: name},
			},
			Logger: tcLogger{testLogger(t)},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Terminate(context.Background()) })
	}
	mk("orphan", host+"/"+itoa(deadPID(t)))
	mk("alive", ownerID())
	if err := Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	cs, _ := labelled(t, cli, LabelRun+"="+run)
	if len(cs) != 1 || !strings.Contains(cs[0], "-alive") {
		t.Errorf("after cleanup: %v, want only the live process's container", cs)
	}
}

func TestDockerReplicaTarget(t *testing.T) {
	if !replicaWritten(t) {
		t.Skip("targets/cmd/replica does not exist yet: the noop target covers the lifecycle")
	}
	dockertest.Require(t, "replica")
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	f, err := DockerProvider{Logger: testLogger(t)}.Start(ctx, Spec{
		Replicas: 2, Mode: "central", Rules: replicaRules,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(context.Background())
	checkDecisionsReachRedis(ctx, t, f)
	// Restarted Redis is empty, at the same address: replicas reconnect.
	step(t, "restart redis under replicas", f.Restart(ctx, RedisMember))
	for i, u := range f.ReplicaURLs() {
		if err := Healthz(ctx, u); err != nil {
			t.Errorf("replica-%d after redis restart: %v", i, err)
		}
	}
	checkDecisionsReachRedis(ctx, t, f)
}
