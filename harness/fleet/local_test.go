package fleet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLocalMissingRedisServer(t *testing.T) {
	_, err := LocalProvider{RedisServer: "/nonexistent/redis-server"}.Start(context.Background(), Spec{Target: TargetNoop})
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

// The local provider runs everything on 127.0.0.1: its conditions say loopback whatever
// --network asked (the report said "bridge" for it).
func TestNetworkingOfTheLocalProviderIsLoopback(t *testing.T) {
	for _, tt := range []struct{ provider, network, want string }{
		{ProviderLocal, NetworkBridge, NetworkLoopback},
		{ProviderLocal, NetworkHost, NetworkLoopback},
		{ProviderDocker, NetworkBridge, NetworkBridge},
		{ProviderDocker, NetworkHost, NetworkHost},
	} {
		if got := Networking(tt.provider, tt.network); got != tt.want {
			t.Errorf("Networking(%q, %q) = %q, want %q", tt.provider, tt.network, got, tt.want)
		}
	}
}

// A run killed with SIGKILL leaves its directory; the next local run removes it, and never
// the directory of a run that still goes on beside it.
func TestRemoveDeadRunDirs(t *testing.T) {
	tmp := t.TempDir()
	host, _ := os.Hostname()
	mk := func(name, owner string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "replica.log"), make([]byte, 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	dead := mk("rlharness-20260730-120000-aa-1", host+"/"+itoa(deadPID(t)))
	live := mk("rlharness-20260730-120000-bb-2", host+"/"+itoa(os.Getpid()))
	elsewhere := mk("rlharness-20260730-120000-cc-3", "another-host/"+itoa(deadPID(t)))
	unowned := mk("rlharness-20260730-120000-dd-4", "")
	other := mk("something-else", host+"/"+itoa(deadPID(t)))
	n, err := removeDeadRunDirs(tmp)
	if err != nil || n != 1 {
		t.Errorf("removed %d (%v), want 1", n, err)
	}
	for d, want := range map[string]bool{dead: false, live: true, elsewhere: true, unowned: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}

// A local run names its owner in its directory, so that the next run can tell it from a
// dead one; Terminate removes the directory.
func TestLocalRunNamesItsOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and builds the noop target")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	ctx := context.Background()
	f, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, Spec{Target: TargetNoop, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := f.(*fleet).members[0].(*localMember).dir
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if want := ownerID() + "\n"; err != nil || string(b) != want {
		t.Errorf("owner file %q (%v), want %q", b, err, want)
	}
	if n, err := removeDeadRunDirs(os.TempDir()); err != nil || pathGone(dir) {
		t.Errorf("a live run's directory was removed (%d removed, %v)", n, err)
	}
	if err := f.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if !pathGone(dir) {
		t.Errorf("%s left after Terminate", dir)
	}
}

func pathGone(p string) bool {
	_, err := os.Stat(p)
	return errors.Is(err, os.ErrNotExist)
}

// With a bin directory (the HS2 kit's bin/), the local provider runs the prebuilt target and
// the redis-server there, even a wrapper script (the kit's starts Redis through its own
// loader), and never calls go build: here go is off PATH.
func TestLocalBinDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the noop target and starts redis-server")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the noop target with")
	}
	realRedis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server")
	}
	dir := t.TempDir()
	if out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, TargetNoop), modulePath+"/targets/cmd/noop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	marker := filepath.Join(dir, "wrapper-ran")
	wrapper := "#!/bin/sh\ntouch " + marker + "\nexec " + realRedis + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	if _, err := exec.LookPath("go"); err == nil {
		t.Skip("go is on /usr/bin:/bin here: the test cannot show go build is not called")
	}
	ctx := context.Background()
	p, err := NewProvider(ProviderLocal, testLogger(t), WithBinDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Start(ctx, Spec{Target: TargetNoop, Replicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(ctx)
	c := f.Conditions()
	if c.TargetBinary != filepath.Join(dir, TargetNoop) || c.RedisBinary != filepath.Join(dir, "redis-server") {
		t.Errorf("ran %s and %s, want the bin directory's", c.TargetBinary, c.RedisBinary)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the bin directory's redis-server wrapper did not run: %v", err)
	}
	if err := HealthAt(ctx, f.ReplicaURLs()[1], "/healthz"); err != nil {
		t.Errorf("replica 1: %v", err)
	}

	_, err = LocalProvider{BinDir: dir, Logger: testLogger(t)}.Start(ctx, Spec{Target: TargetReplica})
	if err == nil || !strings.Contains(err.Error(), "--bin-dir "+dir+" has no replica") {
		t.Errorf("a bin directory without the target: %v", err)
	}
	if _, err := NewProvider(ProviderDocker, nil, WithBinDir(dir)); err == nil {
		t.Error("the Docker provider took a bin directory")
	}
}
