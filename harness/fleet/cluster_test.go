package fleet

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/rediscluster"
)

func TestClusterStore(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			clusterStoreLifecycle(t, p.start(t, "replica", "redis"), NetworkHost)
		})
	}
}

// clusterStoreLifecycle runs two central-mode replicas over a cluster store of 3 masters +
// 3 replicas: every client's count lands in the cluster, spread over its masters; node 0 (a
// master) killed is failed over to its replica while the replicas keep answering 200; started
// again it rejoins as a replica.
func clusterStoreLifecycle(t *testing.T, p Provider, network string) {
	sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
	defer scancel()
	f, err := p.Start(sctx, Spec{
		Replicas: 2, Target: TargetReplica, Mode: "central", Network: network,
		Store: StoreCluster, ClusterNodeTimeout: time.Second,
		Rules: []byte("default: {limit: 100, window: 60s, algorithm: sliding_window, slices: 6}\n"),
	})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Terminate(context.Background()); err != nil {
			t.Errorf("terminate: %v", err)
		}
	})
	cf, ok := f.(ClusterFleet)
	if !ok || len(cf.StoreNodes()) != 6 {
		t.Fatalf("fleet is not a 6-node cluster store: %T %v", f, cf.StoreNodes())
	}
	if c := f.Conditions(); c.Store != StoreCluster || len(c.StoreNodes) != 6 {
		t.Errorf("conditions %+v: want store cluster with 6 nodes", c)
	}
	if !strings.HasPrefix(f.RedisAddr(), ClusterScheme) {
		t.Errorf("RedisAddr = %q, want %s…", f.RedisAddr(), ClusterScheme)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	send := func(phase string, clients int) {
		t.Helper()
		for i := range clients {
			url := f.ReplicaURLs()[i%2]
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/check", nil)
			req.Header.Set("X-Client-ID", fmt.Sprintf("c-%d", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", phase, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: client c-%d got %d, want 200", phase, i, resp.StatusCode)
			}
		}
	}
	send("cluster whole", 60)
	servers := StoreServers(f)
	var keys int64
	for addr, c := range servers {
		defer c.Close()
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := rediscluster.Query(ctx, addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if self, _ := v.Self(); self.Master() {
			if n == 0 {
				t.Errorf("master %s holds no client", addr)
			}
			keys += n
		}
	}
	if keys != 60 {
		t.Errorf("the masters hold %d keys, want 60", keys)
	}

	victim := cf.StoreNodes()[0]
	if err := f.Stop(ctx, RedisNodeMember(0)); err != nil {
		t.Fatal(err)
	}
	send("master 0 down", 60) // fail-open for its clients, counted for the others
	promoted := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v, err := rediscluster.Query(ctx, cf.StoreNodes()[1], time.Second)
		if err != nil {
			continue
		}
		if n, ok := v.Node(victim); ok && !n.Master() || ok && len(n.Slots) == 0 {
			promoted = true
			break
		}
	}
	if !promoted {
		t.Fatal("master 0's replica was not promoted within 20 s")
	}
	send("after the failover", 60)
	if err := f.Start(ctx, RedisNodeMember(0)); err != nil {
		t.Fatal(err)
	}
	rejoined := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v, err := rediscluster.Query(ctx, victim, time.Second)
		if self, ok := v.Self(); err == nil && ok && self.Replica() {
			rejoined = true
			break
		}
	}
	if !rejoined {
		t.Error("the old master 0 did not rejoin as a replica")
	}
	if err := f.Pause(ctx, RedisNodeMember(1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Unpause(ctx, RedisNodeMember(1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Stop(ctx, "redis-node-6"); err == nil {
		t.Error("Stop(redis-node-6) of a 6-node store succeeded")
	}
}
