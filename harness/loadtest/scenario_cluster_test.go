package loadtest

import (
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

func TestClusterScenariosAndConfig(t *testing.T) {
	names := func(scs []result.Scenario) string {
		var out []string
		for _, s := range scs {
			g := ""
			if s.Gated {
				g = "*"
			}
			out = append(out, s.Name+g)
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		store         string
		failOpen      bool
		network, want string
		err           string
	}{
		{"", true, "host", "sliding_window/delayed* sliding_window/delayed/store-stop* sliding_window/delayed/store-pause* sliding_window/delayed/store-slow* " +
			"sliding_window/delayed/store-restart* sliding_window/delayed/replica-kill*", ""},
		{fleet.StoreCluster, true, "host", "sliding_window/delayed* sliding_window/delayed/master-kill* sliding_window/delayed/master-pause*", ""},
		{fleet.StoreCluster, false, "host", "sliding_window/delayed*", ""},
		{fleet.StoreCluster, true, "bridge", "", "--store cluster runs on Docker's host networking only"},
		{"memcached", true, "host", "", `--store "memcached": use redis`},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Store, cfg.FailOpen, cfg.Matrix, cfg.Network = tt.store, tt.failOpen, false, tt.network
		err := cfg.check()
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("store %q on %s: %v, want %s…", tt.store, tt.network, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := names(cfg.scenarios()); got != tt.want {
			t.Errorf("store %q fail-open %v:\n got %s\nwant %s", tt.store, tt.failOpen, got, tt.want)
		}
	}
	if f := faultMember(result.FaultMasterKill); f != "redis-node-0" {
		t.Errorf("master-kill hits %q, want redis-node-0", f)
	}
	if f := faultMember(result.FaultStop); f != fleet.RedisMember {
		t.Errorf("store-stop hits %q, want the whole store", f)
	}
}
