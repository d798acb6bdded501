package fleet

import (
	"context"
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

func TestDockerMissingImage(t *testing.T) {
	requireDocker(t)
	_, err := DockerProvider{Logger: testLogger(t)}.Start(context.Background(), Spec{Replicas: 1, Target: TargetNoop, Image: "rlharness/absent:dev"})
	want := "docker image rlharness/absent:dev not found: run scripts/build-images.sh"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
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
