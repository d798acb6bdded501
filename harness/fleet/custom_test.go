package fleet

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
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
