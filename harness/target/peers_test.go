package target

import (
	"path/filepath"
	"testing"
)

// Every target file the project ships parses, and each names itself uniquely: make
// loadtest-peers puts them in one run.
func TestShippedTargetFilesParse(t *testing.T) {
	files, err := filepath.Glob("../../targets/peers/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	parsed := 0
	for _, f := range files {
		tg, err := Load(f)
		if err != nil {
			if filepath.Base(f) == "envoy-ratelimit-config.yaml" {
				continue // envoy's own rule file, not a target file
			}
			t.Errorf("%v", err)
			continue
		}
		if other, dup := names[tg.Name]; dup {
			t.Errorf("%s and %s are both named %q", f, other, tg.Name)
		}
		names[tg.Name] = f
		parsed++
	}
	if parsed < 6 {
		t.Errorf("%d target files parsed, want at least 6 (envoy, redis_rate, fixedwindow, gubernator x2, ulule): %v", parsed, names)
	}
}

// A target file whose replicas are told where their peers are is Peered: the harness can put
// a zone's link between its nodes. One that finds its peers another way (gubernator's
// memberlist on fixed addresses) or has none is not.
func TestPeeredFollowsThePeerPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"haproxy-peers.yaml", true},
		{"haproxy-peers-gpc.yaml", true},
		{"gubernator-global.yaml", false},
		{"nginx-independent.yaml", false},
		{"redis-rate.yaml", false},
	} {
		tg, err := Load(filepath.Join("../../targets/peers", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.Start.Peered(); got != tc.want {
			t.Errorf("%s: Peered() = %v, want %v", tc.file, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		start Start
		want  bool
	}{
		{"command", Start{Command: []string{"x", "--seeds", VarPeers}}, true},
		{"env", Start{Env: map[string]string{"PEERS": "127.0.0.1:" + VarEachPeerPort}}, true},
		{"file", Start{Files: []File{{Path: "c", Content: []byte("peer " + VarEachPeer + "\n")}}}, true},
		{"own peer port only", Start{Command: []string{"x", "--listen-peers", VarPeerPort}}, false},
		{"none", Start{Command: []string{"x", VarListen}}, false},
	} {
		if got := tc.start.Peered(); got != tc.want {
			t.Errorf("%s: Peered() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
