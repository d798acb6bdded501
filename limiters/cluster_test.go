package limiters

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// Every algorithm and mode on a real Redis Cluster of three masters: the central scripts
// decide as the Go algorithm does, the delayed-sync exchange is one command per shard and
// decides as the in-process store does, and an exchange follows a slot that is being moved.
func TestRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0, 2*time.Second)
	t.Run("central matches local", func(t *testing.T) {
		rs := NewRedisStore(c.Client())
		for _, r := range testRules {
			for _, client := range []string{"central-a", "central-b", "central-c"} {
				takeMatchesLocal(t, rs, &r, client+"-"+r.Name, 40*time.Millisecond, 200)
			}
		}
	})
	t.Run("delayed matches memory", func(t *testing.T) { clusterExchangeMatchesMemory(t, c) })
	t.Run("one command per shard", func(t *testing.T) { clusterOneCommandPerShard(t, c) })
	t.Run("resharding", func(t *testing.T) { clusterExchangeFollowsResharding(t, c) })
}

// clusterExchangeMatchesMemory runs three delayed-sync nodes over the cluster and three over
// the in-process store on one seeded sequence of requests and syncs: every decision agrees.
func clusterExchangeMatchesMemory(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	rdb := c.Client()
	mem := NewMemoryStore()
	var onCluster, inMemory []*DelayedSync
	for range 3 {
		onCluster = append(onCluster, NewDelayedSync(NewRedisStore(rdb)))
		inMemory = append(inMemory, NewDelayedSync(mem))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	base := time.Unix(1_800_000_100, 0)
	allowed, decisions := 0, 0
	for step := range 400 {
		now := base.Add(time.Duration(step) * 10 * time.Millisecond)
		if step%10 == 0 {
			for i := range onCluster {
				if err := onCluster[i].Sync(ctx, now); err != nil {
					t.Fatalf("step %d: cluster sync: %v", step, err)
				}
				if err := inMemory[i].Sync(ctx, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		for range 5 {
			client := "m-" + strconv.Itoa(rng.IntN(8))
			r := &testRules[rng.IntN(len(testRules))]
			node := rng.IntN(3)
			got, err := onCluster[node].Allow(ctx, client, r, now)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := inMemory[node].Allow(ctx, client, r, now)
			if got != want {
				t.Fatalf("step %d, %s on node %d (%s): cluster %+v, memory %+v", step, client, node, r.Name, got, want)
			}
			decisions++
			if got.Allowed {
				allowed++
			}
		}
	}
	if allowed == 0 || allowed == decisions {
		t.Errorf("allowed %d of %d: the test exercises nothing", allowed, decisions)
	}
}

// clusterOneCommandPerShard syncs 600 clients spread over all three shards: each master
// gets one script call, and holds its clients' keys.
func clusterOneCommandPerShard(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	rdb := c.Client()
	n := NewDelayedSync(NewRedisStore(rdb))
	now := time.Now()
	send := func(prefix string) {
		for i := range 600 {
			n.Allow(ctx, fmt.Sprintf("%s-%d", prefix, i), &testRules[i%len(testRules)], now)
		}
	}
	send("warm") // loads the script on every master
	if err := n.Sync(ctx, now); err != nil {
		t.Fatal(err)
	}
	masters := c.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	before := map[string]int64{}
	for _, m := range masters {
		before[m.Addr] = scriptCalls(t, m.Client())
	}
	send("counted")
	if err := n.Sync(ctx, now); err != nil {
		t.Fatal(err)
	}
	var keys int64
	for _, m := range masters {
		mc := m.Client()
		if got := scriptCalls(t, mc) - before[m.Addr]; got != 1 {
			t.Errorf("master %s: %d script calls for one sync, want 1", m.Addr, got)
		}
		k, err := mc.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if k < 300 {
			t.Errorf("master %s holds %d keys: the clients are not spread over the shards", m.Addr, k)
		}
		keys += k
	}
	if keys < 1200 {
		t.Errorf("cluster holds %d keys, want the 1200 synced (and the earlier tests')", keys)
	}
}

// scriptCalls is the number of EVAL and EVALSHA calls a server has answered.
func scriptCalls(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	for line := range strings.SplitSeq(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:") || strings.HasPrefix(line, "cmdstat_eval:") {
			var n int64
			fmt.Sscanf(line[strings.Index(line, "calls=")+6:], "%d", &n)
			calls += n
		}
	}
	return calls
}

// clusterExchangeFollowsResharding moves the slot of one client from its master to another
// while a node goes on syncing it: first the slot is migrating with the key still at the
// source (served there), then with the key moved (ASK), then the slot is moved (MOVED).
// Every exchange succeeds, and the store ends with every count once.
func clusterExchangeFollowsResharding(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	rdb := c.Client()
	n := NewDelayedSync(NewRedisStore(rdb))
	r := &Rule{Name: "reshard", Algorithm: SlidingWindow, Limit: 1_000_000, Window: time.Hour, Slices: 4}
	bucketRule := &Rule{Name: "reshard-b", Algorithm: TokenBucket, Limit: 3600, Window: time.Hour, Burst: 1_000_000}
	client := "mover"
	key := Key(client, r)
	now := time.Now()
	allowed := 0
	sync := func(stage string, reqs int) {
		t.Helper()
		for range reqs {
			if d, _ := n.Allow(ctx, client, r, now); d.Allowed {
				allowed++
			}
			n.Allow(ctx, client, bucketRule, now)
		}
		if err := n.Sync(ctx, now); err != nil {
			t.Fatalf("%s: sync: %v", stage, err)
		}
	}
	sync("before", 5)

	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	src, err := rdb.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var dst *redis.Client
	for _, m := range c.Masters() {
		if m.Addr != src.Options().Addr {
			dst = m.Client()
			break
		}
	}
	srcID, _ := src.ClusterMyID(ctx).Result()
	dstID, _ := dst.ClusterMyID(ctx).Result()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	s := strconv.FormatInt(slot, 10)
	must(dst.Do(ctx, "CLUSTER", "SETSLOT", s, "IMPORTING", srcID).Err())
	must(src.Do(ctx, "CLUSTER", "SETSLOT", s, "MIGRATING", dstID).Err())
	sync("migrating, key at the source", 3) // the bucket key moves next: it is at the source too

	host, port, _ := strings.Cut(dst.Options().Addr, ":")
	must(src.Do(ctx, "MIGRATE", host, port, "", 0, 5000, "KEYS", key, Key(client, bucketRule)).Err())
	sync("migrating, key at the target (ASK)", 4)

	for _, m := range c.Masters() {
		must(m.Client().Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", dstID).Err())
	}
	sync("moved (MOVED)", 6)
	sync("after", 2)

	h, err := dst.HGetAll(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	stored := hashTotal(h)
	if stored != int64(allowed) || allowed != 20 {
		t.Errorf("the new master holds %d for %q, the node allowed %d (want 20, each once)", stored, client, allowed)
	}
	if left, _ := src.Exists(ctx, key).Result(); left != 0 {
		t.Errorf("the old master still holds %q", key)
	}
}

// Nothing lost across a failover: three delayed-sync nodes sync a hundred clients every
// 50 ms while one master is killed and its replica promoted. The clients on the other shards
// keep syncing (the failed shard fails only its own entries); afterwards every client's
// count in the cluster is what the nodes allowed, except that the killed master may have
// taken to its grave the writes of its last sync intervals that had not reached its replica.
func TestRedisClusterFailoverLosesNothingBeyondTheSyncBound(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1, time.Second)
	ctx := context.Background()
	rdb := c.Client()
	r := &Rule{Name: "failover", Algorithm: SlidingWindow, Limit: 1_000_000, Window: time.Hour, Slices: 4}
	var nodes []*DelayedSync
	for i := range 3 {
		nodes = append(nodes, NewDelayedSync(NewRedisStore(rdb), NodeID(strconv.Itoa(i))))
	}
	const clients, interval = 100, 50 * time.Millisecond
	victim := c.Masters()[0]
	accepted := make([]int64, clients)
	var partial, failed int
	var killedAt time.Time
	var acceptedAt [][]time.Time = make([][]time.Time, clients)
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Now()
	healed := time.Time{}
	for step := 0; ; step++ {
		now := time.Now()
		for range 20 {
			i := rng.IntN(clients)
			if d, _ := nodes[rng.IntN(3)].Allow(ctx, "f-"+strconv.Itoa(i), r, now); d.Allowed {
				accepted[i]++
				acceptedAt[i] = append(acceptedAt[i], now)
			}
		}
		for _, n := range nodes {
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			err := n.Sync(cctx, now)
			cancel()
			var pe *PartialExchangeError
			switch {
			case errors.As(err, &pe):
				partial++
			case err != nil:
				failed++
			}
		}
		if killedAt.IsZero() && now.Sub(start) > 500*time.Millisecond {
			victim.Kill()
			killedAt = time.Now()
		}
		if !killedAt.IsZero() && healed.IsZero() && step%4 == 0 {
			if n, ok := c.View().Node(victim.Addr); ok && !n.Master() || ok && len(n.Slots) == 0 {
				healed = time.Now() // the victim's replica serves its slots
			}
		}
		if !healed.IsZero() && time.Since(healed) > 500*time.Millisecond {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the replica was not promoted within 20 s")
		}
		time.Sleep(interval)
	}
	// Push what is still pending.
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range nodes {
		for n.Sync(ctx, time.Now()) != nil {
			if time.Now().After(deadline) {
				t.Fatal("pending counts could not be pushed after the failover")
			}
			time.Sleep(interval)
		}
	}
	if partial == 0 {
		t.Errorf("no sync failed in part while a master was down (%d failed whole)", failed)
	}
	t.Logf("killed %s at +%s, all slots served again at +%s; %d syncs failed in part, %d whole",
		victim.Addr, killedAt.Sub(start).Round(time.Millisecond), healed.Sub(start).Round(time.Millisecond), partial, failed)
	var lostTotal int64
	for i := range clients {
		key := Key("f-"+strconv.Itoa(i), r)
		h, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		stored := hashTotal(h)
		// The bound: what the nodes accepted in the two sync intervals before the kill can be
		// acknowledged by the master and not yet replicated.
		var bound int64
		for _, at := range acceptedAt[i] {
			if at.After(killedAt.Add(-2*interval)) && !at.After(killedAt) {
				bound++
			}
		}
		switch {
		case stored > accepted[i]:
			t.Errorf("client %d: cluster holds %d, nodes allowed %d: counted twice", i, stored, accepted[i])
		case accepted[i]-stored > bound:
			t.Errorf("client %d: cluster holds %d, nodes allowed %d: lost %d, more than the %d of the last intervals before the kill",
				i, stored, accepted[i], accepted[i]-stored, bound)
		}
		lostTotal += accepted[i] - stored
	}
	t.Logf("lost to the failover: %d counts in all", lostTotal)
}

// hashTotal is the sum of a window hash's slice counts.
func hashTotal(h map[string]string) int64 {
	counts, _ := WindowHash(h)
	var sum int64
	for _, c := range counts {
		sum += c.Count
	}
	return sum
}
