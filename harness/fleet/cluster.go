package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/rediscluster"
)

// Stores a fleet can count in (Spec.Store).
const (
	StoreRedis   = result.StoreRedis   // one Redis, member "redis" (default)
	StoreCluster = result.StoreCluster // a Redis Cluster, members "redis-node-0" …
)

// Defaults of a Redis Cluster store: 3 masters with one replica each, a silent master
// failed over after 2 s.
const (
	DefaultClusterMasters     = 3
	DefaultClusterReplicas    = 1
	DefaultClusterNodeTimeout = 2 * time.Second
)

// ClusterScheme prefixes the --redis value a cluster store gives the replicas.
const ClusterScheme = "redis-cluster://"

// RedisNodeMember names node j of a cluster store in Stop, Start, Pause, Unpause and
// Restart: "redis-node-0". Nodes 0 … masters-1 are the masters when the cluster is created,
// the rest their replicas. RedisMember names the whole store.
func RedisNodeMember(j int) string { return "redis-node-" + strconv.Itoa(j) }

// ClusterFleet is a fleet whose counter store is a Redis Cluster.
type ClusterFleet interface {
	Fleet
	// StoreNodes are the cluster's nodes, 127.0.0.1:port, in RedisNodeMember order.
	StoreNodes() []string
}

// StoreNodes implements ClusterFleet; nil for a single Redis.
func (f *fleet) StoreNodes() []string {
	f.addrMu.Lock()
	defer f.addrMu.Unlock()
	return append([]string(nil), f.nodes...)
}

// StoreClient opens a go-redis client for a fleet's store: a cluster client for a
// cluster store, a plain one otherwise. The caller closes it.
func StoreClient(fl Fleet) redis.UniversalClient {
	if cf, ok := fl.(ClusterFleet); ok {
		if nodes := cf.StoreNodes(); len(nodes) > 0 {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: nodes, MaxRedirects: 8})
		}
	}
	return redis.NewClient(&redis.Options{Addr: fl.RedisAddr(), MaxRetries: -1})
}

// StoreServers opens one plain client per server of the store (every cluster node, or
// the one Redis), for what must be asked of each server: INFO, CONFIG RESETSTAT. The
// caller closes them.
func StoreServers(fl Fleet) map[string]*redis.Client {
	addrs := []string{fl.RedisAddr()}
	if cf, ok := fl.(ClusterFleet); ok && len(cf.StoreNodes()) > 0 {
		addrs = cf.StoreNodes()
	}
	out := make(map[string]*redis.Client, len(addrs))
	for _, a := range addrs {
		out[a] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	}
	return out
}

// clusterDefaults validates and fills in the cluster part of a spec.
func (s Spec) clusterDefaults() (Spec, error) {
	switch s.Store {
	case "":
		s.Store = StoreRedis
	case StoreRedis:
	case StoreCluster:
		if s.ClusterMasters == 0 {
			s.ClusterMasters = DefaultClusterMasters
		}
		if s.ClusterReplicas == 0 {
			s.ClusterReplicas = DefaultClusterReplicas
		}
		if s.ClusterNodeTimeout == 0 {
			s.ClusterNodeTimeout = DefaultClusterNodeTimeout
		}
		if s.ClusterMasters < 3 || s.ClusterReplicas < 0 {
			return s, fmt.Errorf("a Redis Cluster needs at least 3 masters and >= 0 replicas each (got %d, %d)", s.ClusterMasters, s.ClusterReplicas)
		}
	default:
		return s, fmt.Errorf("store %q: use %q or %q", s.Store, StoreRedis, StoreCluster)
	}
	return s, nil
}

func (s Spec) clusterNodes() int { return s.ClusterMasters * (1 + s.ClusterReplicas) }

// memberIdx is the index in f.members of a member name: 0 the store, 1+i replica i,
// 1+replicas+j cluster node j.
func (f *fleet) memberIdx(name string) (int, error) {
	if s, ok := strings.CutPrefix(name, "redis-node-"); ok && len(f.nodes) > 0 {
		if j, err := strconv.Atoi(s); err == nil && j >= 0 && j < len(f.nodes) {
			return 1 + f.replicas + j, nil
		}
		return 0, fmt.Errorf("unknown fleet member %q: the store has nodes redis-node-0 … redis-node-%d", name, len(f.nodes)-1)
	}
	i, err := memberIndex(name, f.replicas)
	return i + 1, err
}

// nodeIdx is cluster node j's index in f.members, or -1 when idx is not a node.
func (f *fleet) nodeOf(idx int) int {
	if j := idx - 1 - f.replicas; j >= 0 && j < len(f.nodes) {
		return j
	}
	return -1
}

// addNodes makes room for a cluster store's nodes and records their addresses; the
// store's address for the replicas is the redis-cluster:// list of them all.
func (f *fleet) addNodes(addrs []string, masters int) {
	f.nodes = addrs
	f.masters = masters
	f.members = append(f.members, make([]member, len(addrs))...)
	f.locks = make([]sync.Mutex, len(f.members))
	f.cond.Store, f.cond.StoreNodes = StoreCluster, addrs
	f.setAddr(0, ClusterScheme+strings.Join(addrs, ","))
}

// storeMember is the whole cluster store as one member: "redis" stops, starts, pauses
// and resumes every node.
type storeMember struct{ f *fleet }

func (s storeMember) each(ctx context.Context, op func(context.Context, member) error) error {
	nodes := s.f.members[1+s.f.replicas:]
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for j, m := range nodes {
		wg.Go(func() { errs[j] = op(ctx, m) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s storeMember) stop(ctx context.Context, grace time.Duration) error {
	return s.each(ctx, func(ctx context.Context, m member) error { return m.stop(ctx, grace) })
}

func (s storeMember) kill(ctx context.Context) error {
	return s.each(ctx, func(ctx context.Context, m member) error { return m.kill(ctx) })
}

func (s storeMember) start(ctx context.Context) (string, error) {
	return "", s.each(ctx, func(ctx context.Context, m member) error { _, err := m.start(ctx); return err })
}

func (s storeMember) pause(ctx context.Context) error {
	return s.each(ctx, func(ctx context.Context, m member) error { return m.pause(ctx) })
}

func (s storeMember) unpause(ctx context.Context) error {
	return s.each(ctx, func(ctx context.Context, m member) error { return m.unpause(ctx) })
}

func (s storeMember) exited(ctx context.Context) error {
	return s.each(ctx, func(ctx context.Context, m member) error { return m.exited(ctx) })
}

// pid: a cluster store is several processes, each its own member (redis-node-J).
func (s storeMember) pid(context.Context) (int, error) {
	return 0, fmt.Errorf("a Redis Cluster store is %d processes: name one of its nodes (%s)", len(s.f.nodes), RedisNodeMember(0))
}

// waitStore waits until the cluster store is whole: every node up and agreeing on one
// slot map with every replica attached.
func (f *fleet) waitStore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return rediscluster.WaitReady(ctx, f.StoreNodes(), f.masters)
}

// startCluster starts a cluster store's nodes with b.node on free port pairs (client port
// and bus port), waits until each answers, and joins them with the host's redis-cli
// --cluster create.
func (f *fleet) startCluster(ctx context.Context, spec Spec, b backend) error {
	var dir string
	if t, ok := b.(interface{ toolDir() string }); ok {
		dir = t.toolDir()
	}
	cli, err := ToolIn(dir, "redis-cli")
	if err != nil {
		return fmt.Errorf("a Redis Cluster store is created with redis-cli, which is not found (%w): apt-get install -y redis-tools", err)
	}
	n := spec.clusterNodes()
	ports, err := rediscluster.FreePorts(n)
	if err != nil {
		return err
	}
	addrs := make([]string, n)
	for j, p := range ports {
		addrs[j] = loopback(p)
	}
	f.addNodes(addrs, spec.ClusterMasters)
	f.members[0] = storeMember{f}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for j, p := range ports {
		args := append(rediscluster.ServerArgs(p, b.dataDir(), spec.ClusterNodeTimeout), "--protected-mode", "no")
		m, err := b.node(ctx, j, p, args)
		f.members[1+f.replicas+j] = m
		if err != nil {
			return err
		}
		wg.Go(func() { errs[j] = f.waitReady(ctx, 1+f.replicas+j) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := rediscluster.Create(cctx, cli, addrs, spec.ClusterReplicas); err != nil {
		return fmt.Errorf("create the Redis Cluster store: %w", err)
	}
	return nil
}
