package fleet

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/target"
)

// TestLocalCustomTarget runs a limiter that is not ours as a target file's process: its
// placeholders filled per replica, its files in its directory, its health path waited for.
func TestLocalCustomTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin, err := buildTarget(ctx, "fixedwindow", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Replicas: 2, Custom: &target.Start{
		Kind:    target.StartProcess,
		Command: []string{bin, "--listen", "{{listen}}", "--redis", "{{redis}}", "--limit", "1", "--window", "1h", "--reject-status", "403"},
		Env:     map[string]string{"NODE": "{{node}}/{{nodes}}"},
		Files:   []target.File{{Path: "conf/node.txt", Content: []byte("node {{node}} on {{port}}")}},
		Health:  "/healthz",
	}}
	f, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(context.Background())
	if c := f.Conditions(); c.Target != TargetCustom || c.TargetBinary != bin {
		t.Errorf("conditions %+v", c)
	}
	lf := f.(*fleet)
	for i, u := range f.ReplicaURLs() {
		var codes []int
		for range 2 {
			resp, err := http.Get(u + "/x?client=c")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			codes = append(codes, resp.StatusCode)
		}
		// Both replicas count in one Redis: the client's one request went to replica 0.
		want := []int{http.StatusOK, http.StatusForbidden}
		if i == 1 {
			want = []int{http.StatusForbidden, http.StatusForbidden}
		}
		if codes[0] != want[0] || codes[1] != want[1] {
			t.Errorf("replica %d: statuses %v, want %v", i, codes, want)
		}
		m := lf.members[1+i].(*localMember)
		b, err := os.ReadFile(filepath.Join(m.dir, "conf", "node.txt"))
		if err != nil || string(b) != "node "+string(rune('0'+i))+" on "+u[len("http://127.0.0.1:"):] {
			t.Errorf("replica %d file: %q, %v", i, b, err)
		}
		if !contains(m.env, "NODE="+string(rune('0'+i))+"/2") {
			t.Errorf("replica %d env lacks NODE=%d/2", i, i)
		}
	}
	if err := f.Stop(ctx, RedisMember); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.ReplicaURLs()[0] + "/x?client=c")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with Redis stopped the fixed-window target answers %d, want 200 (it fails open)", resp.StatusCode)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// customVars gives every replica its own second port and every replica's peer address, as
// the other replicas reach it: 127.0.0.1 on host networking and for a process, the
// container's name on a bridge network.
func TestCustomVarsPeers(t *testing.T) {
	at := layout{ports: []int{41000, 41001, 41002}, peerPorts: []int{42000, 42001, 42002}}
	tests := []struct {
		name       string
		kind       string
		network    string
		wantListen string
		wantPeers  string
		wantLines  string
	}{
		{"process", target.StartProcess, NetworkHost, "127.0.0.1:41001", "127.0.0.1:42000,127.0.0.1:42001,127.0.0.1:42002",
			"s 127.0.0.1:41000\ns 127.0.0.1:41001\ns 127.0.0.1:41002\n"},
		{"docker on host networking", target.StartDocker, NetworkHost, "127.0.0.1:41001", "127.0.0.1:42000,127.0.0.1:42001,127.0.0.1:42002",
			"s 127.0.0.1:41000\ns 127.0.0.1:41001\ns 127.0.0.1:41002\n"},
		{"docker on a bridge network", target.StartDocker, NetworkBridge, ":8080",
			"rlharness-r1-replica-0:42000,rlharness-r1-replica-1:42001,rlharness-r1-replica-2:42002",
			"s rlharness-r1-replica-0:8080\ns rlharness-r1-replica-1:8080\ns rlharness-r1-replica-2:8080\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{RunID: "r1", Replicas: 3, Network: tt.network, Custom: &target.Start{Kind: tt.kind, Port: 8080}}
			v := s.customVars(1, at, "127.0.0.1:6379")
			if got := v.Expand("{{listen}} {{peer_port}} {{node}}/{{nodes}}"); got != tt.wantListen+" 42001 1/3" {
				t.Errorf("own values %q, want %q", got, tt.wantListen+" 42001 1/3")
			}
			if got := v.Expand("{{peers}}"); got != tt.wantPeers {
				t.Errorf("{{peers}} = %q, want %q", got, tt.wantPeers)
			}
			if got := v.Expand("s {{each.listen}}\n"); got != tt.wantLines {
				t.Errorf("repeated line = %q, want %q", got, tt.wantLines)
			}
		})
	}
	if n := (Spec{Replicas: 8}).peerPorts(); n != 0 {
		t.Errorf("the built-in replica asks for %d peer ports, want 0", n)
	}
	if n := (Spec{Replicas: 8, Custom: &target.Start{}}).peerPorts(); n != 8 {
		t.Errorf("a target file's 8 replicas ask for %d peer ports, want 8", n)
	}
}

// A target file's limiter that declares no store gets no Redis: none is started (nor looked
// for), RedisAddr is empty, and a fault on the store says there is none instead of acting on
// nothing.
func TestLocalCustomTargetWithoutStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin, err := buildTarget(ctx, "noop", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Replicas: 2, NoStore: true, Custom: &target.Start{
		Kind: target.StartProcess, Command: []string{bin, "--listen", "{{listen}}"}, Health: "/healthz",
	}}
	// A redis-server that does not exist: a fleet without a store must not need one.
	f, err := LocalProvider{Logger: testLogger(t), RedisServer: "/nonexistent/redis-server"}.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(context.Background())
	if a := f.RedisAddr(); a != "" {
		t.Errorf("RedisAddr = %q, want empty", a)
	}
	if c := f.Conditions(); c.RedisBinary != "" {
		t.Errorf("conditions name a Redis binary %q", c.RedisBinary)
	}
	for _, m := range f.(*fleet).members[1:] {
		if lm := m.(*localMember); strings.Contains(lm.bin, "redis") {
			t.Errorf("member %s runs %s", lm.name, lm.bin)
		}
	}
	if m := f.(*fleet).members[0]; m != nil {
		t.Errorf("member 0, the store, is %+v: want none", m)
	}
	for _, op := range []func(context.Context, string) error{f.Stop, f.Kill, f.Pause, f.Restart} {
		if err := op(ctx, RedisMember); err == nil || !strings.Contains(err.Error(), "runs no redis") {
			t.Errorf("a store fault on a fleet without a store: %v, want an error saying it runs no redis", err)
		}
	}
	for _, u := range f.ReplicaURLs() {
		resp, err := http.Get(u + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200", u, resp.StatusCode)
		}
	}
	if _, err := (Spec{NoStore: true, StoreProxy: true}).withDefaults(); err == nil {
		t.Error("a store proxy in front of no store was accepted")
	}
}
