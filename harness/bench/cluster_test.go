package bench

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// Clients loaded through the exchange into a 3-master cluster spread over every shard,
// each key on one shard, and each shard holds about what one Redis holds per client.
func TestShardMemory(t *testing.T) {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found on PATH; CI must install it", bin)
			}
			t.Skipf("%s not found on PATH: install it (apt-get install -y redis-server)", bin)
		}
	}
	shards, err := shardMemory(context.Background(), "", "", 3000, 3)
	if err != nil {
		t.Fatal(err)
	}
	single, err := Memory(context.Background(), "", 3000, 1)
	if err != nil {
		t.Fatal(err)
	}
	one := single[2].PerClient // ours, the 12-slice sliding window
	var keys int64
	for _, s := range shards {
		keys += s.Clients
		if s.Clients < 800 || s.Slots == "" {
			t.Errorf("shard %+v: the clients are not spread over the slots", s)
		}
		if s.PerClient < one/2 || s.PerClient > 2*one {
			t.Errorf("shard %s: %.0f B/client, one Redis %.0f: want about the same", s.Node, s.PerClient, one)
		}
	}
	if keys != 3000 {
		t.Errorf("the shards hold %d keys, want 3000", keys)
	}
}

func TestClusterFigures(t *testing.T) {
	step := &result.Step{Achieved: 990, Sustained: true}
	tests := []struct {
		name            string
		single, cluster float64 // commands/s
		status          string
		value           float64
	}{
		{"one command per node per shard", 40, 118, result.StatusMet, 118.0 / 40},
		{"more than a command per shard", 40, 400, result.StatusNotMet, 10},
		{"not measured", 0, 118, result.StatusNotMeasured, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb := &result.ClusterBench{Rate: 1000, Masters: 3,
				Single:  result.FleetBench{Steady: step, StoreCmdPerSec: tt.single, StoreCmdPerRequest: tt.single / 990},
				Cluster: result.FleetBench{Steady: step, StoreCmdPerSec: tt.cluster, StoreCmdPerRequest: tt.cluster / 990},
				Memory: []result.ShardMemory{{Node: "a", Clients: 100, UsedDelta: 25000, PerClient: 250},
					{Node: "b", Clients: 300, UsedDelta: 78000, PerClient: 260}},
			}
			figs := clusterFigures(result.Bench{Cluster: cb, Memory: []result.MemoryLayout{{Name: "sliding_window, 12 slices (ours: one hash per client)", PerClient: 255}}})
			if len(figs) != 2 {
				t.Fatalf("%d figures, want 2", len(figs))
			}
			if f := figs[0]; f.Item != 7 || f.Status != tt.status || !near(f.Value, tt.value) {
				t.Errorf("commands figure %+v: want status %q value %v", f, tt.status, tt.value)
			}
			if f := figs[1]; !near(f.Value, 103000.0/400) || !strings.Contains(f.Note, "255.0") {
				t.Errorf("memory figure %+v: want 257.5 B/client beside one Redis's 255", f)
			}
		})
	}
	if figs := clusterFigures(result.Bench{}); figs != nil {
		t.Errorf("figures %+v without a cluster run", figs)
	}
}
