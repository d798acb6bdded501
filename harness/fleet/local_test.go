package fleet

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLocalLifecycle(t *testing.T) {
	p := LocalProvider{Logger: testLogger(t)}
	f := scenario(t, p, Spec{Replicas: 2, Target: TargetNoop})
	lf := f.(*fleet)
	if c := lf.Conditions(); c.Provider != "local" || c.Network != "loopback" || c.RedisBinary == "" || c.TargetBinary == "" {
		t.Errorf("conditions = %+v", c)
	}
	for _, m := range lf.members {
		lm := m.(*localMember)
		if lm.proc.running() {
			t.Errorf("%s (pid %d) still runs after terminate", lm.name, lm.proc.cmd.Process.Pid)
		}
	}
	if _, err := os.Stat(lf.members[0].(*localMember).dir); !os.IsNotExist(err) {
		t.Errorf("run directory left behind: %v", err)
	}
}

func TestLocalEightReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	f, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, Spec{Target: TargetNoop})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(context.Background())
	c := f.Conditions()
	if c.Replicas != DefaultReplicas || len(f.ReplicaURLs()) != DefaultReplicas {
		t.Fatalf("replicas = %d, urls = %d, want %d", c.Replicas, len(f.ReplicaURLs()), DefaultReplicas)
	}
	t.Logf("local fleet, redis + %d noop replicas, started in %s (includes go build)", c.Replicas, c.StartupTime.Round(time.Millisecond))
}

func TestLocalReplicaTarget(t *testing.T) {
	if !replicaWritten(t) {
		t.Skip("targets/cmd/replica does not exist yet: the noop target covers the lifecycle")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	f, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, Spec{
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

func TestLocalStartFailureCleansUp(t *testing.T) {
	ctx := context.Background()
	// A binary that exits at once never becomes healthy.
	_, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, Spec{Replicas: 1, Target: TargetNoop, Binary: "false"})
	if err == nil {
		t.Fatal("start with a target that exits: no error")
	}
	t.Logf("error as the user sees it: %v", err)
	_, err = LocalProvider{RedisServer: "/nonexistent/redis-server"}.Start(ctx, Spec{Target: TargetNoop})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Errorf("missing redis-server: err = %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
