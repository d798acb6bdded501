package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/edgeproof/rlharness/limiters"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/rediscluster"
)

// DefaultClusterRate is the offered rate of figure 7's steady runs: one that both fleets
// sustain on 2 cores, so that the store's commands are compared at the same rate.
const DefaultClusterRate = 1000

// clusterLayout is the counter layout figure 7 loads into each shard: ours, the sliding
// window of 12 slices, one hash per client.
const clusterLayout = "rl:{client}:default:sliding_window → {slice: count} × 12, one hash per client, the client as hash tag"

// Cluster measures figure 7: delayed sync's store commands on a Redis Cluster of
// DefaultClusterMasters masters beside one Redis at the same offered rate (the delayed-sync
// fleet on each in turn, host networking: a cluster's nodes announce 127.0.0.1), and the
// memory per client on each shard of a cluster of redis-server processes loaded with
// clients through the exchange. Config.NoCluster turns it off (and GeneratorOnly, which measures no limiter fleet).
func Cluster(ctx context.Context, cfg Config, provider fleet.Provider) *result.ClusterBench {
	cb := &result.ClusterBench{Rate: cfg.ClusterRate, Masters: fleet.DefaultClusterMasters, Layout: clusterLayout}
	var errs []error
	{
		fmt.Fprintf(cfg.Progress, "== 7. cluster memory: %d clients through the exchange into %d shards\n", cfg.MemoryClients, cb.Masters)
		m, err := shardMemory(ctx, cfg.RedisServer, cfg.BinDir, cfg.MemoryClients, cb.Masters)
		cb.Memory = m
		if err != nil {
			errs = append(errs, fmt.Errorf("memory per shard: %w", err))
		}
		for _, s := range m {
			fmt.Fprintf(cfg.Progress, "   shard %s (slots %s): %d clients, %.1f B/client\n", s.Node, s.Slots, s.Clients, s.PerClient)
		}
	}
	if ctx.Err() == nil {
		fmt.Fprintf(cfg.Progress, "== 7. store commands, delayed sync on one Redis and on a %d-master cluster, %s req/s each\n", cb.Masters, result.Rate(cb.Rate))
		for _, run := range []struct {
			res   *result.FleetBench
			name  string
			store string
		}{{&cb.Single, FleetDelayed, fleet.StoreRedis}, {&cb.Cluster, FleetDelayed + "-cluster", fleet.StoreCluster}} {
			spec := fleet.Spec{Target: fleet.TargetReplica, Mode: limiters.ModeDelayed, Design: limiters.DesignBounded, Replicas: cfg.Replicas, Network: fleet.NetworkHost, Store: run.store}
			*run.res = clusterSteady(ctx, cfg, provider, run.name, spec, cb.Rate)
			run.res.Network = fleet.NetworkHost
			if run.res.Error != "" {
				errs = append(errs, fmt.Errorf("%s: %s", run.name, run.res.Error))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		cb.Error = err.Error()
	}
	return cb
}

// clusterSteady starts a fleet, runs it at rate for one step and counts the store's
// top-level commands over it on every master.
func clusterSteady(ctx context.Context, cfg Config, provider fleet.Provider, name string, spec fleet.Spec, rate float64) result.FleetBench {
	m := &member{name: name, spec: spec}
	defer m.stop(ctx, cfg.Logger)
	if err := m.start(ctx, cfg, provider); err != nil {
		return m.res
	}
	if m.rdb != nil { // member.start's plain client does not reach a cluster's slots
		_ = m.rdb.Close()
		m.rdb = nil
	}
	servers := fleet.StoreServers(m.fl)
	defer func() {
		for _, c := range servers {
			_ = c.Close()
		}
	}()
	s := m.stepper(cfg)
	s.before = func(ctx context.Context) error {
		for addr, c := range servers {
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				return fmt.Errorf("reset the command stats of %s: %w", addr, err)
			}
		}
		return nil
	}
	st, err := s.send(ctx, rate)
	if err != nil {
		m.res.Error = err.Error()
		return m.res
	}
	m.res.Steady = &st
	for addr, c := range servers {
		if len(servers) > 1 {
			v, err := rediscluster.Query(ctx, addr, time.Second)
			if self, ok := v.Self(); err != nil || !ok || !self.Master() {
				continue // a replica replays its master's writes: not commands the replicas sent
			}
		}
		touches, ops, err := readTouches(context.WithoutCancel(ctx), c)
		if err != nil {
			m.res.Error = fmt.Sprintf("store commands of %s: %v", addr, err)
			return m.res
		}
		m.res.StoreCommands += touches
		m.res.StoreOps += ops
	}
	m.res.StoreCmdPerSec = float64(m.res.StoreCommands) / st.Duration.Seconds()
	if st.Answered > 0 {
		m.res.StoreCmdPerRequest = float64(m.res.StoreCommands) / float64(st.Answered)
	}
	fmt.Fprintf(cfg.Progress, "   %-16s %7s req/s asked  %7s achieved  store %8.1f commands/s  %.4f per request  %s\n",
		name, result.Rate(st.Rate), result.Rate(st.Achieved), m.res.StoreCmdPerSec, m.res.StoreCmdPerRequest, verdict(st))
	return m.res
}

// shardMemory starts a cluster of masters redis-server processes, loads clients into it
// through the delayed-sync exchange (every slice of the window counted) and measures each
// master: its keys and used_memory after the load minus before.
func shardMemory(ctx context.Context, redisBin, binDir string, clients, masters int) ([]result.ShardMemory, error) {
	if redisBin == "" {
		redisBin = "redis-server"
	}
	bin, err := exec.LookPath(redisBin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (%w): install it (apt-get install -y redis-server)", err)
	}
	cli, err := fleet.ToolIn(binDir, "redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found (%w): apt-get install -y redis-tools", err)
	}
	dir, err := fleet.OwnedTempDir("bench-cluster") // a killed bench's is removed by the next local run
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ports, err := rediscluster.FreePorts(masters)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, masters)
	for j, p := range ports {
		addrs[j] = "127.0.0.1:" + strconv.Itoa(p)
		cmd := exec.Command(bin, rediscluster.ServerArgs(p, dir, 5*time.Second)...)
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	}
	nodes := make(map[string]*redis.Client, masters)
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, ReadTimeout: 30 * time.Second})
		defer c.Close()
		nodes[a] = c
		if err := waitPing(ctx, c); err != nil {
			return nil, fmt.Errorf("redis-server on %s: %w", a, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := rediscluster.Create(cctx, cli, addrs, 0); err != nil {
		return nil, err
	}
	before := map[string]int64{}
	for a, c := range nodes {
		if before[a], err = usedMemory(ctx, c); err != nil {
			return nil, err
		}
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	defer rdb.Close()
	ids := make([]string, clients)
	digits := len(strconv.Itoa(clients - 1))
	for i := range ids {
		ids[i] = fmt.Sprintf("bg-%0*d", digits, i)
	}
	var sliding *layout
	for _, l := range layouts() {
		if strings.HasPrefix(l.name, "sliding_window, 12 slices (ours") {
			sliding = &l
		}
	}
	if err := sliding.load(ctx, rdb, ids, time.Now()); err != nil {
		return nil, fmt.Errorf("load %d clients into the cluster: %w", clients, err)
	}
	view, err := rediscluster.Query(ctx, addrs[0], time.Second)
	if err != nil {
		return nil, err
	}
	var out []result.ShardMemory
	for _, a := range addrs {
		c := nodes[a]
		after, err := usedMemory(ctx, c)
		if err != nil {
			return out, err
		}
		keys, err := c.DBSize(ctx).Result()
		if err != nil {
			return out, err
		}
		s := result.ShardMemory{Node: a, Clients: keys, UsedDelta: after - before[a]}
		if n, ok := view.Node(a); ok {
			var rs []string
			for _, r := range n.Slots {
				rs = append(rs, fmt.Sprintf("%d-%d", r[0], r[1]))
			}
			s.Slots = strings.Join(rs, ",")
		}
		if keys > 0 {
			s.PerClient = float64(s.UsedDelta) / float64(keys)
		}
		out = append(out, s)
	}
	return out, nil
}

func waitPing(ctx context.Context, c *redis.Client) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no answer to PING: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clusterFigures are figure 7's rows: the cluster's store commands over one Redis's at the
// same offered rate (the bounded design's epoch read is one command per node per interval on
// one shard, and its pushes, one command per client on a cluster, are none for clients within
// their budgets; the document's design costs one command per node per shard per interval:
// either way at most the shard count), and the memory per client on each shard.
func clusterFigures(b result.Bench) []result.BenchFigure {
	cb := b.Cluster
	if cb == nil {
		return nil
	}
	cmds := result.BenchFigure{Item: 7, Name: "store commands, delayed sync: cluster / one Redis", Unit: "ratio",
		Target:     fmt.Sprintf("<= %.1f (at most one command per node per shard per interval: %d shards, +10%%)", float64(cb.Masters)*1.1, cb.Masters),
		Conditions: fmt.Sprintf("%d replicas, %s networking, %s req/s asked on each, %d masters + %d replicas", cb.Single.Conditions.Replicas, fleet.Networking(cb.Single.Conditions.Provider, fleet.NetworkHost), result.Rate(cb.Rate), cb.Masters, cb.Masters*fleet.DefaultClusterReplicas)}
	single, cluster := cb.Single, cb.Cluster
	if single.Steady == nil || cluster.Steady == nil || single.StoreCmdPerSec <= 0 {
		cmds.Status, cmds.Display = result.StatusNotMeasured, "-"
		cmds.Note = strings.TrimSpace(single.Error + " " + cluster.Error)
	} else {
		cmds.Value = cluster.StoreCmdPerSec / single.StoreCmdPerSec
		cmds.Display = fmt.Sprintf("x%.2f (%s vs %s commands/s; %.4f vs %.4f per request)", cmds.Value,
			result.Rate(cluster.StoreCmdPerSec), result.Rate(single.StoreCmdPerSec), cluster.StoreCmdPerRequest, single.StoreCmdPerRequest)
		cmds.Status = status(cmds.Value <= float64(cb.Masters)*1.1)
		cmds.Note = fmt.Sprintf("achieved %s and %s req/s", result.Rate(cluster.Steady.Achieved), result.Rate(single.Steady.Achieved))
		cmds = withEvidence(cmds, *cluster.Steady, *single.Steady)
	}
	mem := result.BenchFigure{Item: 7, Name: "store memory per client on each cluster shard", Unit: "B/client", Status: result.StatusNoTarget,
		Conditions: fmt.Sprintf("%s; redis-server processes, %d masters", cb.Layout, cb.Masters)}
	if len(cb.Memory) == 0 {
		mem.Status, mem.Display = result.StatusNotMeasured, "-"
	} else {
		var parts []string
		var total, keys float64
		for _, s := range cb.Memory {
			parts = append(parts, fmt.Sprintf("%.0f (%d clients)", s.PerClient, s.Clients))
			total += float64(s.UsedDelta)
			keys += float64(s.Clients)
		}
		mem.Value = total / keys
		mem.Display = fmt.Sprintf("%.1f: %s", mem.Value, strings.Join(parts, ", "))
		for _, l := range b.Memory {
			if strings.HasPrefix(l.Name, "sliding_window") && strings.Contains(l.Name, "ours") && l.PerClient > 0 {
				mem.Note = fmt.Sprintf("one Redis, same layout: %.1f B/client", l.PerClient)
			}
		}
	}
	return []result.BenchFigure{cmds, mem}
}
