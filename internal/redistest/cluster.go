package redistest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/internal/rediscluster"
)

// Cluster is a Redis Cluster of redis-server child processes on loopback ports.
type Cluster struct {
	// Nodes are the servers in the order given to `redis-cli --cluster create`: the masters
	// first, then the replicas.
	Nodes []*Server
	Addrs []string
	t     testing.TB
}

// StartCluster runs masters × (1 + replicas) redis-server processes in cluster mode (node
// timeout nodeTimeout, full coverage not required), joins them with `redis-cli --cluster
// create` and waits until every node agrees on the slot map. The servers stop when the test
// ends. Without redis-server or redis-cli the test is skipped, except under CI.
func StartCluster(t testing.TB, masters, replicas int, nodeTimeout time.Duration) *Cluster {
	t.Helper()
	bin := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	n := masters * (1 + replicas)
	ports, err := rediscluster.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Cluster{t: t}
	for _, p := range ports {
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(p), Port: p, bin: bin, t: t,
			args: rediscluster.ServerArgs(p, dir, nodeTimeout)}
		s.start()
		t.Cleanup(func() { s.kill() })
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rediscluster.Create(ctx, cli, c.Addrs, replicas); err != nil {
		t.Fatal(err)
	}
	return c
}

// Client returns a go-redis cluster client seeded with every node, closed when the test ends.
func (c *Cluster) Client() *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	c.t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Masters returns the servers that are masters now.
func (c *Cluster) Masters() []*Server {
	c.t.Helper()
	v := c.View()
	var ms []*Server
	for _, s := range c.Nodes {
		if n, ok := v.Node(s.Addr); ok && n.Master() && !n.Failing() && len(n.Slots) > 0 {
			ms = append(ms, s)
		}
	}
	return ms
}

// View is the cluster as the first node that answers sees it.
func (c *Cluster) View() rediscluster.View {
	c.t.Helper()
	var last error
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		v, err := rediscluster.Query(context.Background(), s.Addr, time.Second)
		if err == nil {
			return v
		}
		last = err
	}
	c.t.Fatalf("no node of the cluster answered: %v", last)
	return rediscluster.View{}
}
