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

// A target file whose replicas are told where their peers are, or announce themselves by the
// name the harness gives them, is Peered: the harness can put a zone's link between its
// nodes. One that finds its peers another way (a fixed address of its own) or has none is not.
// Only the one that announces a name is Named.
func TestPeeredFollowsThePeerPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		file        string
		want, named bool
	}{
		{"haproxy-peers.yaml", true, false},
		{"haproxy-peers-gpc.yaml", true, false},
		{"gubernator-global.yaml", true, true},
		{"gubernator-batching.yaml", true, true},
		{"nginx-independent.yaml", false, false},
		{"redis-rate.yaml", false, false},
	} {
		tg, err := Load(filepath.Join("../../targets/peers", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got, named := tg.Start.Peered(), tg.Start.Named(); got != tc.want || named != tc.named {
			t.Errorf("%s: Peered() = %v, Named() = %v, want %v, %v", tc.file, got, named, tc.want, tc.named)
		}
	}
	for _, tc := range []struct {
		name        string
		start       Start
		want, named bool
	}{
		{"command", Start{Command: []string{"x", "--seeds", VarPeers}}, true, false},
		{"env", Start{Env: map[string]string{"PEERS": "127.0.0.1:" + VarEachPeerPort}}, true, false},
		{"file", Start{Files: []File{{Path: "c", Content: []byte("peer " + VarEachPeer + "\n")}}}, true, false},
		{"a name announced", Start{Env: map[string]string{"ADVERTISE": VarPeerName + ":" + VarPeerPort}}, true, true},
		{"own peer port only", Start{Command: []string{"x", "--listen-peers", VarPeerPort}}, false, false},
		{"none", Start{Command: []string{"x", VarListen}}, false, false},
	} {
		if got, named := tc.start.Peered(), tc.start.Named(); got != tc.want || named != tc.named {
			t.Errorf("%s: Peered() = %v, Named() = %v, want %v, %v", tc.name, got, named, tc.want, tc.named)
		}
	}
}
