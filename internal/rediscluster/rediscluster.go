// Package rediscluster creates and watches a Redis Cluster made of redis-server processes
// or containers the caller started in cluster mode: the server flags, `redis-cli --cluster
// create`, the wait until every node agrees, and a watcher of which node serves which slots
// (CLUSTER NODES), for measuring how long a range was without a master during a fault.
package rediscluster

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// BusOffset is the distance of a node's cluster bus port from its client port (Redis's
// fixed rule): a node on port p also needs p+10000 free.
const BusOffset = 10000

// ServerArgs are the redis-server flags of one cluster node on port, keeping its node file
// in dir. With nodeTimeout a silent master is declared failed and its replica promoted;
// full coverage is not required, so the other shards keep serving while one range is down.
func ServerArgs(port int, dir string, nodeTimeout time.Duration) []string {
	return []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
		"--dir", dir,
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes-" + strconv.Itoa(port) + ".conf",
		"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
		"--cluster-require-full-coverage", "no",
		// A replica whose master is gone takes over whatever its replication lag.
		"--cluster-replica-validity-factor", "0",
		// A new replica syncs at once (the default waits 5 s for more replicas to join).
		"--repl-diskless-sync-delay", "0",
	}
}

// FreePorts returns n client ports on 127.0.0.1 whose bus ports (port+BusOffset) are free
// too, from the range below 55535 so that every bus port is a valid port.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+BusOffset > 65535 {
			l.Close()
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+BusOffset))
		if err != nil {
			l.Close()
			continue
		}
		held = append(held, l, b)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found only %d of %d free port pairs (port and port+%d)", len(ports), n, BusOffset)
	}
	return ports, nil
}

// Create joins the nodes at addrs (each started with ServerArgs) into one cluster with
// `redis-cli --cluster create`: len(addrs)/(replicas+1) masters, each with replicas
// replicas, the slots split evenly. It returns once every node reports the cluster ok and
// every node's map names the same masters for all 16384 slots.
func Create(ctx context.Context, redisCLI string, addrs []string, replicas int) error {
	if redisCLI == "" {
		redisCLI = "redis-cli"
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.CommandContext(ctx, redisCLI, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster create %s: %w\n%s", strings.Join(addrs, " "), err, out)
	}
	return WaitReady(ctx, addrs, len(addrs)/(replicas+1))
}

// WaitReady waits until every node at addrs says cluster_state:ok and names the same
// masters set of masters for the whole slot space.
func WaitReady(ctx context.Context, addrs []string, masters int) error {
	var last error
	for {
		last = ready(ctx, addrs, masters)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis cluster %s not ready: %w (last: %v)", strings.Join(addrs, ","), ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func ready(ctx context.Context, addrs []string, masters int) error {
	var first string
	for _, a := range addrs {
		nodes, info, err := query(ctx, a, time.Second)
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster state not ok", a)
		}
		v := View{Nodes: nodes}
		ranges := v.Ranges()
		owners := map[string]bool{}
		covered := 0
		for _, r := range ranges {
			owners[r.Master] = true
			covered += r.Last - r.First + 1
		}
		if covered != 16384 || len(owners) != masters {
			return fmt.Errorf("%s: %d slots covered by %d masters", a, covered, len(owners))
		}
		replicas := 0
		for _, n := range nodes {
			if n.Replica() && n.MasterID != "" && !n.Failing() {
				replicas++
			}
		}
		if replicas != len(addrs)-masters {
			return fmt.Errorf("%s: %d of %d replicas attached", a, replicas, len(addrs)-masters)
		}
		if self, ok := (View{Nodes: nodes}).Self(); ok && self.Replica() {
			if err := linkUp(ctx, a); err != nil {
				return err
			}
		}
		sig := fmt.Sprint(ranges)
		if first == "" {
			first = sig
		} else if sig != first {
			return fmt.Errorf("%s: slot map differs from %s's", a, addrs[0])
		}
	}
	return nil
}

// linkUp reports whether the replica at addr has finished its first sync with its master:
// until then a failover of its master would lose everything.
func linkUp(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("INFO replication on %s: %w", addr, err)
	}
	if !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("replica %s: link to its master not up yet", addr)
	}
	return nil
}

// query reads CLUSTER NODES and CLUSTER INFO from one node.
func query(ctx context.Context, addr string, timeout time.Duration) ([]Node, string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: timeout, ReadTimeout: timeout,
		WriteTimeout: timeout, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	txt, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, "", fmt.Errorf("CLUSTER NODES on %s: %w", addr, err)
	}
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, "", fmt.Errorf("CLUSTER INFO on %s: %w", addr, err)
	}
	nodes, err := ParseNodes(txt)
	return nodes, info, err
}

// Node is one line of CLUSTER NODES.
type Node struct {
	ID       string
	Addr     string // host:port, without the bus port
	Flags    []string
	MasterID string // a replica's master, "" for a master
	Slots    [][2]int
}

// Master reports whether the node is a master.
func (n Node) Master() bool { return slices.Contains(n.Flags, "master") }

// Replica reports whether the node is a replica.
func (n Node) Replica() bool { return slices.Contains(n.Flags, "slave") }

// Failing reports whether the node's peers think it is down (fail, or fail? for the one asked).
func (n Node) Failing() bool {
	return slices.Contains(n.Flags, "fail") || slices.Contains(n.Flags, "fail?")
}

// Role is the node's role and health in a word or two: "master", "replica", "master fail".
func (n Node) Role() string {
	r := "replica"
	if n.Master() {
		r = "master"
	}
	for _, f := range n.Flags {
		if f == "fail" || f == "fail?" {
			r += " " + f
		}
	}
	return r
}

// ParseNodes parses CLUSTER NODES output.
func ParseNodes(txt string) ([]Node, error) {
	var nodes []Node
	for line := range strings.SplitSeq(strings.TrimSpace(txt), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES: short line %q", line)
		}
		n := Node{ID: f[0], Addr: f[1], Flags: strings.Split(f[2], ",")}
		if i := strings.IndexByte(n.Addr, '@'); i >= 0 {
			n.Addr = n.Addr[:i]
		}
		if f[3] != "-" {
			n.MasterID = f[3]
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue // a slot being migrated or imported
			}
			lo, hi, found := strings.Cut(s, "-")
			a, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("CLUSTER NODES: slot %q: %w", s, err)
			}
			b := a
			if found {
				if b, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("CLUSTER NODES: slot %q: %w", s, err)
				}
			}
			n.Slots = append(n.Slots, [2]int{a, b})
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// View is one node's picture of the cluster at one moment.
type View struct {
	Nodes []Node
}

// Range is a run of slots with the master that serves it.
type Range struct {
	First, Last int
	Master      string // address
	Failing     bool   // the master is flagged fail or fail?
}

func (r Range) String() string { return fmt.Sprintf("%d-%d@%s", r.First, r.Last, r.Master) }

// Ranges lists the slot ranges the view's masters serve, in slot order.
func (v View) Ranges() []Range {
	var rs []Range
	for _, n := range v.Nodes {
		if !n.Master() {
			continue
		}
		for _, s := range n.Slots {
			rs = append(rs, Range{First: s[0], Last: s[1], Master: n.Addr, Failing: n.Failing()})
		}
	}
	slices.SortFunc(rs, func(a, b Range) int { return a.First - b.First })
	return rs
}

// Self returns the node that answered (flag myself).
func (v View) Self() (Node, bool) {
	for _, n := range v.Nodes {
		if slices.Contains(n.Flags, "myself") {
			return n, true
		}
	}
	return Node{}, false
}

// Node returns the node at addr in the view.
func (v View) Node(addr string) (Node, bool) {
	for _, n := range v.Nodes {
		if n.Addr == addr {
			return n, true
		}
	}
	return Node{}, false
}

// Query reads one node's view of the cluster, waiting at most timeout.
func Query(ctx context.Context, addr string, timeout time.Duration) (View, error) {
	nodes, _, err := query(ctx, addr, timeout)
	return View{Nodes: nodes}, err
}
