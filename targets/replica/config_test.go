package replica

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/service"
	"github.com/edgeproof/rlharness/limiters"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseFlagsEnvFallback(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want Config
	}{
		{"defaults need a store in delayed mode", []string{"--redis", "r:6379"}, nil,
			Config{Listen: ":8080", Redis: "r:6379", Mode: limiters.ModeDelayed, NodeIndex: 0, NodeCount: 8,
				SyncInterval: 200 * time.Millisecond, StoreTimeout: 50 * time.Millisecond, StoreWait: 250 * time.Millisecond, ClientHeader: "X-Client-ID", Design: "bounded"}},
		{"environment fills what flags leave", []string{"--mode", "central"},
			map[string]string{"REPLICA_MODE": "split", "REPLICA_REDIS": "e:1", "REPLICA_NODE_INDEX": "2",
				"REPLICA_NODE_COUNT": "3", "REPLICA_SYNC_INTERVAL": "20ms", "REPLICA_STORE_TIMEOUT": "10ms", "REPLICA_STORE_WAIT": "70ms",
				"REPLICA_RULES": "/r.yaml", "REPLICA_CLIENT_HEADER": "X-Api-Key", "REPLICA_LISTEN": ":9", "REPLICA_DESIGN": "document"},
			Config{Listen: ":9", Redis: "e:1", Mode: limiters.ModeCentral, NodeIndex: 2, NodeCount: 3,
				SyncInterval: 20 * time.Millisecond, StoreTimeout: 10 * time.Millisecond, StoreWait: 70 * time.Millisecond, RulesPath: "/r.yaml", ClientHeader: "X-Api-Key", Design: "document"}},
		{"empty environment is unset", []string{"--mode=split"}, map[string]string{"REPLICA_NODE_COUNT": ""},
			Config{Listen: ":8080", Mode: limiters.ModeSplit, NodeCount: 8,
				SyncInterval: 200 * time.Millisecond, StoreTimeout: 50 * time.Millisecond, StoreWait: 250 * time.Millisecond, ClientHeader: "X-Client-ID", Design: "bounded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := ParseFlags("replica", tt.args, envMap(tt.env), &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--mode", "ring"}, nil, `--mode "ring" is unknown: want central, split or delayed (or peer-gcra or peer-ulule, peer limiters for comparison)`},
		{[]string{"--redis", "r:1", "--design", "fast"}, nil, `--design "fast" is unknown: want bounded (the default) or document`},
		{nil, nil, "--redis is required in delayed mode: give the counter store's host:port (or REPLICA_REDIS)"},
		{[]string{"--mode", "split", "--node-index", "8"}, nil, "--node-index must be in 0..7 for --node-count 8 (got 8)"},
		{[]string{"--mode", "split", "--node-count", "0"}, nil, "--node-count must be >= 1 (got 0)"},
		{[]string{"--mode", "split"}, map[string]string{"REPLICA_STORE_TIMEOUT": "fast"},
			`REPLICA_STORE_TIMEOUT="fast": parse error (it stands in for --store-timeout)`},
		{[]string{"--mode", "split", "--sync-interval", "0s"}, nil, "--sync-interval must be > 0 (got 0s)"},
		{[]string{"--mode", "split", "--client-header", "X Client"}, nil, `--client-header "X Client" is not a header name (e.g. X-Client-ID)`},
		{[]string{"--mode", "split", "extra"}, nil, `unexpected argument "extra": every setting is a flag (see --help)`},
	}
	for _, tt := range tests {
		_, err := ParseFlags("replica", tt.args, envMap(tt.env), &bytes.Buffer{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseFlags(%q, %v): %v\nwant: %s", tt.args, tt.env, err, tt.want)
		}
	}
}

// --help lists every flag with its environment variable.
func TestHelpShowsEveryFlagAndEnv(t *testing.T) {
	var out bytes.Buffer
	_, err := ParseFlags("replica", []string{"--help"}, envMap(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	flags := []string{"listen", "redis", "mode", "node-index", "node-count", "sync-interval", "store-timeout", "rules", "client-header"}
	for _, f := range flags {
		env := service.EnvName("REPLICA_", f)
		if !strings.Contains(out.String(), "-"+f+" ") || !strings.Contains(out.String(), "[env "+env+"]") {
			t.Errorf("help lacks --%s or %s:\n%s", f, env, out.String())
		}
	}
}
