package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/dockertest"
	"github.com/edgeproof/rlharness/internal/procstat"
	"github.com/edgeproof/rlharness/limiters"
)

func TestSpecDefaults(t *testing.T) {
	s, err := Spec{RunID: "r1"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		RunID: "r1", Replicas: 8, Target: "replica", Mode: "delayed", Design: "bounded",
		SyncInterval: 200 * time.Millisecond, StoreTimeout: 50 * time.Millisecond, Network: "bridge",
	}
	if s.RunID != want.RunID || s.Replicas != want.Replicas || s.Target != want.Target || s.Mode != want.Mode || s.Design != want.Design ||
		s.SyncInterval != want.SyncInterval || s.StoreTimeout != want.StoreTimeout || s.Network != want.Network {
		t.Errorf("defaults = %+v, want %+v", s, want)
	}
	gen, err := Spec{}.withDefaults()
	if err != nil || len(gen.RunID) < 10 {
		t.Errorf("generated run id %q, err %v", gen.RunID, err)
	}
}

func TestSpecRejects(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Replicas: -1}, "replicas must be > 0 (got -1)"},
		{Spec{Target: "nginx"}, `target "nginx"`},
		{Spec{Mode: "gossip"}, `mode "gossip"`},
		{Spec{Design: "eventual"}, `design "eventual": use bounded or document`},
		{Spec{Network: "overlay"}, `network "overlay"`},
		{Spec{RunID: "a b"}, `run id "a b"`},
		{Spec{SyncInterval: -time.Second}, "must be >= 0"},
		{Spec{StoreWait: -time.Second}, "must be >= 0"},
		{Spec{Replicas: 3, NodeCount: 2}, "node count 2 is below the 3 replicas run"},
	} {
		_, err := tc.spec.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to contain %q", tc.spec, err, tc.want)
		}
	}
}

func TestTargetArgs(t *testing.T) {
	s, _ := Spec{RunID: "r", Replicas: 3, Mode: "central", Rules: []byte("default: {}")}.withDefaults()
	got := strings.Join(s.targetArgs(2, ":8080", "redis:6379", "/r.yaml"), " ")
	want := "--listen :8080 --mode central --node-index 2 --node-count 3 --sync-interval 200ms --store-timeout 50ms --redis redis:6379 --rules /r.yaml"
	if got != want {
		t.Errorf("replica args\n got %s\nwant %s", got, want)
	}
	s, _ = Spec{RunID: "r", Replicas: 2, Design: "document"}.withDefaults()
	got = strings.Join(s.targetArgs(1, ":8080", "redis:6379", ""), " ")
	want = "--listen :8080 --mode delayed --node-index 1 --node-count 2 --sync-interval 200ms --store-timeout 50ms --redis redis:6379 --design document"
	if got != want {
		t.Errorf("delayed replica args\n got %s\nwant %s", got, want)
	}
	if c := s.conditions("local", "loopback"); c.Mode != "delayed" || c.Design != "document" {
		t.Errorf("conditions mode %q design %q, want delayed document", c.Mode, c.Design)
	}
	if c := s.conditions("local", "loopback"); c.NodeCount != 0 {
		t.Errorf("a whole fleet records node count %d, want 0 (it is Replicas)", c.NodeCount)
	}
	if c := s.conditions("local", "loopback"); c.StoreWait != 0 {
		t.Errorf("store wait %v in the conditions of a fleet that set none, want 0", c.StoreWait)
	}
	// A store wait set: passed to every replica, and recorded beside the store timeout.
	s, _ = Spec{RunID: "r", Replicas: 2, StoreWait: 300 * time.Millisecond}.withDefaults()
	got = strings.Join(s.targetArgs(1, ":8080", "redis:6379", ""), " ")
	want = "--listen :8080 --mode delayed --node-index 1 --node-count 2 --sync-interval 200ms --store-timeout 50ms --redis redis:6379 --design bounded --store-wait 300ms"
	if got != want {
		t.Errorf("store wait\n got %s\nwant %s", got, want)
	}
	if c := s.conditions("local", "loopback"); c.StoreWait != 300*time.Millisecond || c.StoreTimeout != 50*time.Millisecond {
		t.Errorf("conditions store wait %v, store timeout %v; want 300ms and 50ms", c.StoreWait, c.StoreTimeout)
	}
	// One replica run as node 0 of 8: told the fleet's size, which its conditions record.
	s, _ = Spec{RunID: "r", Replicas: 1, NodeCount: 8, Mode: "central"}.withDefaults()
	got = strings.Join(s.targetArgs(0, ":8080", "redis:6379", ""), " ")
	want = "--listen :8080 --mode central --node-index 0 --node-count 8 --sync-interval 200ms --store-timeout 50ms --redis redis:6379"
	if got != want {
		t.Errorf("one of 8\n got %s\nwant %s", got, want)
	}
	if c := s.conditions("docker", "host"); c.Replicas != 1 || c.NodeCount != 8 {
		t.Errorf("one of 8: conditions replicas %d node count %d, want 1 and 8", c.Replicas, c.NodeCount)
	}
	s.Target, s.Rules = TargetNoop, nil
	if got := strings.Join(s.targetArgs(0, "127.0.0.1:9", "x", "y"), " "); got != "--listen 127.0.0.1:9" {
		t.Errorf("noop args = %s", got)
	}
}

func TestMemberIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
		ok   bool
	}{
		{"redis", -1, true}, {"replica-0", 0, true}, {"replica-2", 2, true},
		{"replica-3", 0, false}, {"replica--1", 0, false}, {"replica-x", 0, false}, {"db", 0, false},
	} {
		got, err := memberIndex(tc.name, 3)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("memberIndex(%q) = %d, %v; want %d, ok=%v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}

func TestOrphaned(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		owner string
		want  bool
	}{
		{host + "/" + itoa(os.Getpid()), false},  // this process
		{host + "/" + itoa(deadPID(t)), true},    // exited
		{"elsewhere/" + itoa(deadPID(t)), false}, // another host: not ours to judge
		{"", true},                               // no owner label
		{host + "/not-a-pid", true},              // malformed
	} {
		labels := map[string]string{LabelFleet: "1"}
		if tc.owner != "" {
			labels[LabelOwner] = tc.owner
		}
		if got := orphaned(labels); got != tc.want {
			t.Errorf("orphaned(owner %q) = %v, want %v", tc.owner, got, tc.want)
		}
	}
}

// The labels of what this process starts, a run's member or a load test's shard (which
// belongs to no fleet run), name this process as the owner: another harness process's Cleanup
// leaves them alone while it runs. A shard container once carried no owner label, and a
// second process's fleet start removed it mid-run (exit 137).
func TestLabelsOwnedByThisProcess(t *testing.T) {
	for _, tc := range []struct{ run, member string }{
		{"r1", "replica-0"},
		{"r1", ""},
		{"", "shard-1"},
	} {
		l := Labels(tc.run, tc.member)
		if orphaned(l) || l[LabelFleet] != "1" || l[LabelRun] != tc.run || l[LabelMember] != tc.member {
			t.Errorf("Labels(%q, %q) = %v: want this process's, with the run and member given", tc.run, tc.member, l)
		}
	}
}

// testProvider is one provider as the table tests run it, with what only it can set up
// and check.
type testProvider struct {
	name string
	// start returns the provider, logging to t, once it can run here: Docker's fails or
	// skips where there is no Docker (dockertest.Require) and builds the images named
	// (rlharness/<name>:dev) that are missing.
	start func(t *testing.T, images ...string) Provider
	// noopConditions says whether c is what the provider records of a noop fleet on the
	// default network.
	noopConditions func(c result.Conditions) bool
	// exiting makes spec's target one that exits at once.
	exiting func(spec Spec) Spec
	// ruleFile is the rule file as replica i of f sees it.
	ruleFile func(ctx context.Context, f Fleet, i int) ([]byte, error)
	// leftBehind lists what of run runID is still there; f is the fleet, nil when Start failed.
	leftBehind func(t *testing.T, runID string, f Fleet) []string
}

// providers are both providers, for the tests that every provider must pass.
func providers(t *testing.T) []testProvider {
	t.Helper()
	return []testProvider{
		{
			name: "docker",
			start: func(t *testing.T, images ...string) Provider {
				requireDocker(t)
				dockertest.Require(t, images...)
				return DockerProvider{Logger: testLogger(t)}
			},
			noopConditions: func(c result.Conditions) bool {
				return c.Provider == "docker" && c.Network == "bridge" && c.RedisImage == DefaultRedisImage && c.TargetImage == DefaultNoopImage
			},
			exiting: func(s Spec) Spec {
				// The redis image as the target: redis-server rejects --listen and exits.
				s.Image = DefaultRedisImage
				return s
			},
			ruleFile: func(ctx context.Context, f Fleet, i int) ([]byte, error) {
				rc, err := f.(*fleet).members[1+i].(*dockerMember).ctr.CopyFileFromContainer(ctx, containerRules)
				if err != nil {
					return nil, err
				}
				defer rc.Close()
				return io.ReadAll(rc)
			},
			leftBehind: func(t *testing.T, runID string, _ Fleet) []string {
				cli, err := dockerClient(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				cs, ns := labelled(t, cli, LabelRun+"="+runID)
				return append(cs, ns...)
			},
		},
		{
			name:  "local",
			start: func(t *testing.T, _ ...string) Provider { return LocalProvider{Logger: testLogger(t)} },
			noopConditions: func(c result.Conditions) bool {
				return c.Provider == "local" && c.Network == "loopback" && c.RedisBinary != "" && c.TargetBinary != ""
			},
			exiting: func(s Spec) Spec {
				// A binary that exits at once never becomes healthy.
				s.Binary = "false"
				return s
			},
			ruleFile: func(_ context.Context, f Fleet, i int) ([]byte, error) {
				return os.ReadFile(filepath.Join(f.(*fleet).members[1+i].(*localMember).dir, "rules.yaml"))
			},
			leftBehind: func(t *testing.T, runID string, f Fleet) []string {
				var left []string
				if f != nil {
					for _, m := range f.(*fleet).members {
						if lm, ok := m.(*localMember); ok && lm.proc.running() {
							left = append(left, lm.name+" (pid "+itoa(lm.proc.cmd.Process.Pid)+") still runs")
						}
					}
				}
				dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "rlharness-"+runID+"-*"))
				if err != nil {
					t.Fatal(err)
				}
				return append(left, dirs...)
			},
		},
	}
}

func TestLifecycle(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			f := scenario(t, p.start(t, "noop", "redis"), Spec{Replicas: 2, Target: TargetNoop})
			c := f.Conditions()
			if !p.noopConditions(c) {
				t.Errorf("conditions = %+v", c)
			}
			if left := p.leftBehind(t, c.RunID, f); len(left) > 0 {
				t.Errorf("left behind after terminate: %v", left)
			}
		})
	}
}

// TestEightReplicas starts the default fleet: every replica gets the rule file.
func TestEightReplicas(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			prov := p.start(t, "noop", "redis")
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
			defer cancel()
			rules := []byte("default:\n  limit: 600\n  window: 60s\n")
			f, err := prov.Start(ctx, Spec{Target: TargetNoop, Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Terminate(context.Background())
			c := f.Conditions()
			if c.Replicas != limiters.DefaultNodes || len(f.ReplicaURLs()) != limiters.DefaultNodes {
				t.Fatalf("replicas = %d, urls = %d, want %d", c.Replicas, len(f.ReplicaURLs()), limiters.DefaultNodes)
			}
			t.Logf("%s fleet, redis + %d noop replicas on %s, started in %s", p.name, c.Replicas, c.Network, c.StartupTime.Round(time.Millisecond))
			// Read the rule file back from the last replica.
			got, err := p.ruleFile(ctx, f, limiters.DefaultNodes-1)
			if err != nil {
				t.Fatalf("rule file in replica-%d: %v", limiters.DefaultNodes-1, err)
			}
			if !bytes.Equal(got, rules) {
				t.Errorf("rule file in replica-%d = %q, want %q", limiters.DefaultNodes-1, got, rules)
			}
			// What a running fleet holds is found, so that finding nothing after Terminate means something.
			if left := p.leftBehind(t, c.RunID, nil); len(left) == 0 {
				t.Errorf("leftBehind finds nothing of running fleet %s", c.RunID)
			}
			begin := time.Now()
			if err := f.Terminate(ctx); err != nil {
				t.Fatal(err)
			}
			t.Logf("terminated in %s", time.Since(begin).Round(time.Millisecond))
			if left := p.leftBehind(t, c.RunID, f); len(left) > 0 {
				t.Errorf("left behind after terminate: %v", left)
			}
			if len(f.ReplicaURLs()) != limiters.DefaultNodes {
				t.Errorf("%d replica URLs after terminate, want %d", len(f.ReplicaURLs()), limiters.DefaultNodes)
			}
		})
	}
}

// TestStartFailureCleansUp starts a target that exits at once: Start must fail fast with
// the target's output and leave nothing behind.
func TestStartFailureCleansUp(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			prov := p.start(t, "noop", "redis")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			spec := p.exiting(Spec{RunID: "fail-" + newRunID(), Replicas: 1, Target: TargetNoop})
			begin := time.Now()
			_, err := prov.Start(ctx, spec)
			if err == nil {
				t.Fatal("start with a target that exits: no error")
			}
			t.Logf("after %s, error as the user sees it: %v", time.Since(begin).Round(time.Millisecond), err)
			if time.Since(begin) > 20*time.Second {
				t.Errorf("took %s to notice the target exited", time.Since(begin))
			}
			if left := p.leftBehind(t, spec.RunID, nil); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestReplicaTarget runs central-mode replicas: their decisions land in the fleet's Redis,
// before and after Redis restarts under them.
func TestReplicaTarget(t *testing.T) {
	if !replicaWritten(t) {
		t.Skip("targets/cmd/replica does not exist yet: the noop target covers the lifecycle")
	}
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			prov := p.start(t, "replica", "redis")
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
			defer cancel()
			f, err := prov.Start(ctx, Spec{Replicas: 2, Mode: "central", Rules: replicaRules})
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
		})
	}
}

// scenario is the lifecycle both providers must pass: health, Redis paused
// and resumed, a replica stopped and started, Redis restarted on the same
// address, a replica paused, a replica and Redis killed and started again
// (Redis empty), terminate twice. It returns the fleet,
// terminated.
func scenario(t *testing.T, p Provider, spec Spec) Fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	f, err := p.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = f.Terminate(context.Background()) })
	c := f.Conditions()
	t.Logf("conditions: %+v", c)
	if c.Replicas != spec.Replicas || c.Target != spec.Target || c.RunID == "" {
		t.Errorf("conditions %+v do not match spec %+v", c, spec)
	}
	urls := f.ReplicaURLs()
	if len(urls) != spec.Replicas {
		t.Fatalf("%d replica URLs, want %d", len(urls), spec.Replicas)
	}
	for _, u := range append(urls, "http://"+f.RedisAddr()) {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("address %s is not on 127.0.0.1", u)
		}
	}
	for i, u := range urls {
		if err := Healthz(ctx, u); err != nil {
			t.Errorf("replica-%d: %v", i, err)
		}
	}
	redisAddr := f.RedisAddr()
	if err := Ping(ctx, redisAddr, time.Second); err != nil {
		t.Fatalf("redis ping: %v", err)
	}
	pids := map[string]int{}
	for _, m := range []string{RedisMember, ReplicaMember(0)} {
		pid, err := f.(Processes).PID(ctx, m)
		if err != nil {
			t.Fatalf("pid of %s: %v", m, err)
		}
		if u, err := procstat.Read(pid); err != nil || u.RSS <= 0 {
			t.Errorf("%s: pid %d reads %+v, %v from /proc", m, pid, u, err)
		}
		pids[m] = pid
	}
	if pids[RedisMember] == pids[ReplicaMember(0)] {
		t.Errorf("redis and replica-0 have one pid %d", pids[RedisMember])
	}

	// Pausing Redis keeps its port open but nothing answers: a PING times out.
	step(t, "pause redis", f.Pause(ctx, RedisMember))
	begin := time.Now()
	err = Ping(ctx, redisAddr, 300*time.Millisecond)
	if took := time.Since(begin); err == nil || took < 250*time.Millisecond {
		t.Errorf("PING to paused redis: err=%v after %s, want a timeout after ~300ms", err, took)
	}
	step(t, "unpause redis", f.Unpause(ctx, RedisMember))
	if err := Ping(ctx, redisAddr, time.Second); err != nil {
		t.Errorf("PING after unpause: %v", err)
	}

	// A stopped replica refuses connections; started again it answers on the same URL.
	last := ReplicaMember(spec.Replicas - 1)
	step(t, "stop "+last, f.Stop(ctx, last))
	if err := Healthz(ctx, urls[len(urls)-1]); err == nil {
		t.Errorf("%s answers /healthz while stopped", last)
	}
	if pid, err := f.(Processes).PID(ctx, last); err == nil {
		t.Errorf("%s stopped has pid %d", last, pid)
	}
	step(t, "stop "+last+" again", f.Stop(ctx, last))
	step(t, "start "+last, f.Start(ctx, last))
	if got := f.ReplicaURLs(); got[len(got)-1] != urls[len(urls)-1] {
		t.Errorf("%s moved from %s to %s", last, urls[len(urls)-1], got[len(got)-1])
	}
	if err := Healthz(ctx, urls[len(urls)-1]); err != nil {
		t.Errorf("%s after start: %v", last, err)
	}
	step(t, "start a running member", f.Start(ctx, ReplicaMember(0)))

	// A paused replica accepts nothing in time.
	step(t, "pause replica-0", f.Pause(ctx, ReplicaMember(0)))
	if err := Healthz(ctx, urls[0]); err == nil {
		t.Errorf("replica-0 answers /healthz while paused")
	}
	step(t, "unpause replica-0", f.Unpause(ctx, ReplicaMember(0)))
	if err := Healthz(ctx, urls[0]); err != nil {
		t.Errorf("replica-0 after unpause: %v", err)
	}

	// Redis restarts on the same address; it keeps nothing (no persistence).
	step(t, "restart redis", f.Restart(ctx, RedisMember))
	if f.RedisAddr() != redisAddr {
		t.Errorf("redis moved from %s to %s", redisAddr, f.RedisAddr())
	}
	if err := Ping(ctx, redisAddr, time.Second); err != nil {
		t.Errorf("PING after restart: %v", err)
	}
	// A killed replica refuses connections at once; started again it answers on its URL.
	step(t, "kill "+last, f.Kill(ctx, last))
	if err := Healthz(ctx, urls[len(urls)-1]); err == nil {
		t.Errorf("%s answers /healthz after SIGKILL", last)
	}
	step(t, "kill a dead member", f.Kill(ctx, last))
	step(t, "start "+last+" after kill", f.Start(ctx, last))
	if err := Healthz(ctx, urls[len(urls)-1]); err != nil {
		t.Errorf("%s after kill and start: %v", last, err)
	}
	// Redis killed and started again comes back empty, on the same address.
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1})
	defer rdb.Close()
	step(t, "write a key", rdb.Set(ctx, "fleet-test-kill", "1", 0).Err())
	step(t, "kill redis", f.Kill(ctx, RedisMember))
	if err := Ping(ctx, redisAddr, 300*time.Millisecond); err == nil {
		t.Errorf("redis answers PING after SIGKILL")
	}
	step(t, "start redis after kill", f.Start(ctx, RedisMember))
	if n, err := rdb.Exists(ctx, "fleet-test-kill").Result(); err != nil || n != 0 {
		t.Errorf("after kill and start, the key exists %d times (err %v): want an empty store", n, err)
	}
	// A paused member is killed too.
	step(t, "pause replica-0 before kill", f.Pause(ctx, ReplicaMember(0)))
	step(t, "kill paused replica-0", f.Kill(ctx, ReplicaMember(0)))
	step(t, "start replica-0 after kill", f.Start(ctx, ReplicaMember(0)))
	if err := Healthz(ctx, urls[0]); err != nil {
		t.Errorf("replica-0 after a kill while paused: %v", err)
	}
	if err := f.SlowStore(ctx, time.Millisecond); !errors.Is(err, ErrNoStoreProxy) {
		t.Errorf("slow the store of a fleet without a proxy: err = %v, want %v", err, ErrNoStoreProxy)
	}

	// Stopping a paused member must not hang on a frozen process.
	step(t, "pause replica-0 before stop", f.Pause(ctx, ReplicaMember(0)))
	step(t, "stop paused replica-0", f.Stop(ctx, ReplicaMember(0)))

	if err := f.Stop(ctx, "replica-99"); err == nil || !strings.Contains(err.Error(), "unknown fleet member") {
		t.Errorf("stop replica-99: err = %v", err)
	}
	step(t, "terminate", f.Terminate(ctx))
	step(t, "terminate again", f.Terminate(ctx))
	if err := f.Start(ctx, RedisMember); !errors.Is(err, errTerminated) {
		t.Errorf("start after terminate: err = %v, want %v", err, errTerminated)
	}
	for i, u := range urls {
		if err := Healthz(ctx, u); err == nil {
			t.Errorf("replica-%d still answers after terminate", i)
		}
	}
	if err := Ping(ctx, redisAddr, 300*time.Millisecond); err == nil {
		t.Errorf("redis still answers after terminate")
	}
	return f
}

func step(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	root, err := dockertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// replicaWritten says whether targets/cmd/replica exists yet; it is being
// written alongside this package.
func replicaWritten(t *testing.T) bool {
	_, err := os.Stat(filepath.Join(repoRoot(t), "targets", "cmd", "replica", "main.go"))
	return err == nil
}

// replicaRules is a small valid rule file for the replica target.
var replicaRules = []byte("default:\n  limit: 600\n  window: 60s\n  algorithm: sliding_window\n  slices: 12\n")

// checkDecisionsReachRedis sends each central-mode replica one decision and
// checks that it answered 200 and that the counters landed in the fleet's
// Redis: the replicas found Redis at the address the fleet gave them.
func checkDecisionsReachRedis(ctx context.Context, t *testing.T, f Fleet) {
	t.Helper()
	for i, u := range f.ReplicaURLs() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"/check", nil)
		req.Header.Set("X-Client-ID", "fleet-test-"+itoa(i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("replica-%d decision: %v", i, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("replica-%d decision: %s, want 200", i, resp.Status)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: f.RedisAddr()})
	defer rdb.Close()
	n, err := rdb.DBSize(ctx).Result()
	if err != nil {
		t.Fatalf("redis DBSIZE: %v", err)
	}
	if n == 0 {
		t.Errorf("redis holds no keys after %d central-mode decisions", len(f.ReplicaURLs()))
	}
}

// TestStoreProxy runs central-mode replicas behind the store proxy: their decisions reach
// Redis through it; with every store reply delayed twice their store timeout, a decision
// waits its timeout, not the store, and is let through (fail-open); with the delay taken
// away the store answers at once again.
func TestStoreProxy(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			prov := p.start(t, "replica", "redis")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const timeout, delay = 50 * time.Millisecond, 100 * time.Millisecond
			f, err := prov.Start(ctx, Spec{Replicas: 2, Mode: "central", Rules: replicaRules, StoreTimeout: timeout, StoreProxy: true})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Terminate(context.Background())
			proxy := f.Conditions().StoreProxy
			if proxy == "" || proxy == f.RedisAddr() {
				t.Fatalf("store proxy %q beside redis %s: want its own address", proxy, f.RedisAddr())
			}
			t.Logf("redis %s, proxy %s", f.RedisAddr(), proxy)
			checkDecisionsReachRedis(ctx, t, f)

			// One PING on one open connection: one round trip (go-redis's Ping adds its own).
			conn, err := net.DialTimeout("tcp", proxy, time.Second)
			if err != nil {
				t.Fatalf("dial the proxy: %v", err)
			}
			defer conn.Close()
			replies := bufio.NewReader(conn)
			pingTook := func() time.Duration {
				begin := time.Now()
				_ = conn.SetDeadline(begin.Add(2 * time.Second))
				if _, err := conn.Write([]byte("PING\r\n")); err != nil {
					t.Fatalf("PING through the proxy: %v", err)
				}
				if line, err := replies.ReadString('\n'); err != nil || line != "+PONG\r\n" {
					t.Fatalf("PING through the proxy: %q, %v", line, err)
				}
				return time.Since(begin)
			}
			decide := func(i int) (int, time.Duration) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.ReplicaURLs()[i]+"/check", nil)
				req.Header.Set("X-Client-ID", "proxy-test")
				begin := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("replica-%d decision: %v", i, err)
				}
				_ = resp.Body.Close()
				return resp.StatusCode, time.Since(begin)
			}
			if d := pingTook(); d > delay/2 {
				t.Errorf("PING through the proxy took %v before any delay", d)
			}
			step(t, "slow the store", f.SlowStore(ctx, delay))
			if d := pingTook(); d < delay || d > delay+delay/2 {
				t.Errorf("PING through the slowed proxy took %v, want %v..%v", d, delay, delay+delay/2)
			}
			for i := range 2 {
				code, took := decide(i)
				// The replica waits its store timeout, then decides alone: a 200 after about
				// 50 ms, well before the 100 ms reply.
				if code != http.StatusOK || took < timeout*8/10 || took >= delay {
					t.Errorf("replica-%d with the store slowed: %d after %v; want 200 after %v..%v", i, code, took, timeout*8/10, delay)
				}
			}
			step(t, "take the delay away", f.SlowStore(ctx, 0))
			if d := pingTook(); d > delay/2 {
				t.Errorf("PING through the proxy took %v after the delay was taken away", d)
			}
			if err := f.SlowStore(ctx, 1500*time.Microsecond); err == nil {
				t.Error("a delay of 1.5 ms was taken: toxiproxy counts whole milliseconds")
			}
			step(t, "terminate", f.Terminate(ctx))
			if err := Ping(ctx, proxy, 300*time.Millisecond); err == nil {
				t.Error("the store proxy still answers after terminate")
			}
		})
	}
}
