//go:build loadtest

package loadtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

// clusterConfig is quickConfig on a Redis Cluster store of 3 masters + 3 replicas.
func clusterConfig(t *testing.T) Config {
	cfg := quickConfig(t)
	cfg.Store = fleet.StoreCluster
	cfg.ClusterNodeTimeout = 2 * time.Second
	return cfg
}

// The design keeps its word on a Redis Cluster, and nothing is lost: every probe client's
// count in the cluster is what the replicas accepted (make test-cluster).
func TestClusterDesign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := clusterConfig(t)
	cfg.FailOpen = false
	sum := runMeasured(ctx, t, cfg)
	if len(sum.Scenarios) != 1 || sum.Config.Store != fleet.StoreCluster {
		t.Fatalf("%d scenarios on store %q, want the design on the cluster", len(sum.Scenarios), sum.Config.Store)
	}
	sc := sum.Scenarios[0]
	if sc.Conditions.Store != fleet.StoreCluster || len(sc.Conditions.StoreNodes) != 6 {
		t.Errorf("conditions %+v: want a 6-node cluster store", sc.Conditions)
	}
	clusterChecksPass(t, sc)
	if !sum.Pass || sum.GeneratorBound {
		t.Errorf("verdict pass=%v generator-bound=%v failed=%v", sum.Pass, sum.GeneratorBound, sum.Failed)
	}
}

// One master killed and one paused mid-run (make loadtest-cluster): the clients on its
// slots see fail-open, no 5xx, the 1.1x bound once the store is whole again, and the report
// says how long the range was without a master and that its replica took over.
func TestClusterMasterFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := clusterConfig(t)
	cfg.Only = "master-"
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want master-kill and master-pause", len(sum.Scenarios))
	}
	for _, sc := range sum.Scenarios {
		clusterChecksPass(t, sc)
		cf := sc.Cluster
		if cf == nil || cf.Polls == 0 || len(cf.Ranges) != 3 {
			t.Fatalf("%s: no slot map watched: %+v", sc.Name, cf)
		}
		victim := cf.Node
		for _, r := range cf.Ranges {
			hit := r.MasterFrom == victim
			switch {
			case hit && (r.Down <= 0 || r.FirstDown < 0 || r.Back < 0):
				t.Errorf("%s: range %s of the faulted master: down %s, from %s, back %s; want down, then back", sc.Name, r.Slots, r.Down, r.FirstDown, r.Back)
			case hit && r.MasterTo == victim:
				t.Errorf("%s: range %s still served by %s: its replica did not take over", sc.Name, r.Slots, victim)
			case !hit && r.Down > 2*clusterPoll:
				t.Errorf("%s: range %s of a healthy master was down %s", sc.Name, r.Slots, r.Down)
			}
		}
		promoted := false
		for _, e := range cf.Events {
			promoted = promoted || strings.HasPrefix(e.From, "replica") && strings.HasPrefix(e.To, "master")
		}
		if !promoted {
			t.Errorf("%s: no replica became master: %+v", sc.Name, cf.Events)
		}
	}
	if !sum.Pass || sum.GeneratorBound {
		t.Errorf("verdict pass=%v generator-bound=%v failed=%v", sum.Pass, sum.GeneratorBound, sum.Failed)
	}
}

func clusterChecksPass(t *testing.T, sc result.ScenarioResult) {
	t.Helper()
	agreed := false
	for _, c := range sc.Checks {
		if !c.Pass {
			t.Errorf("%s: %s", sc.Name, c)
		}
		agreed = agreed || c.Name == "store agrees with the accepted"
	}
	if !agreed {
		t.Errorf("%s: no nothing-lost check", sc.Name)
	}
	if sc.Error != "" {
		t.Errorf("%s: %s", sc.Name, sc.Error)
	}
	if sc.Accepted == 0 || sc.Rejected == 0 {
		t.Errorf("%s: %d accepted, %d rejected: the probes were not limited", sc.Name, sc.Accepted, sc.Rejected)
	}
}
