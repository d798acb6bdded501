package fleet

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
)

// loopbackOnly is a backend whose proxies listen on this host's loopback, as the local
// provider's and host networking's do; startPeerLinks asks it nothing else.
type loopbackOnly struct{ backend }

func (loopbackOnly) proxyHost(context.Context) (string, error) { return "127.0.0.1", nil }

// echoPeer is a peer's second port: it answers every line with the same line.
func echoPeer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// Two replicas in a near zone and two in a far one, without a store: a replica reaches a peer
// of its own zone directly and one of the other zone through a link that waits both zones'
// latency each way ({{peers}} says where). The far zone cut or slowed acts on every link
// between the zones, both ways, and leaves the near zone's pairs as they were.
func TestPeerLinksBetweenZones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, zones, peerPorts, via := linkedEchoes(ctx, t, false)
	if got := f.Conditions().PeerLinks; got != 4 { // each zone's replicas to each of the other zone's two
		t.Errorf("%d links between the zones, want 4", got)
	}

	at := layout{ports: []int{41000, 41001, 41002, 41003}, peerPorts: peerPorts, via: via}
	s := Spec{Replicas: 4, Network: NetworkHost, NoStore: true, Zones: zones, Custom: &target.Start{Kind: target.StartProcess}}
	peers := func(i int) []string { return strings.Split(s.customVars(i, at, "").Expand(target.VarPeers), ",") }
	near0, far2 := peers(0), peers(2)
	for j, p := range peerPorts {
		direct := net.JoinHostPort("127.0.0.1", itoa(p))
		if (j < 2) != (near0[j] == direct) {
			t.Errorf("near replica 0 reaches replica %d at %s (its port %s): want directly only in its own zone", j, near0[j], direct)
		}
		if (j >= 2) != (far2[j] == direct) {
			t.Errorf("far replica 2 reaches replica %d at %s (its port %s): want directly only in its own zone", j, far2[j], direct)
		}
	}

	within := func(what, addr string, lo, hi time.Duration) {
		t.Helper()
		d, err := fastestEcho(addr)
		if err != nil || d < lo || d > hi {
			t.Errorf("%s: echo took %v (err %v), want %v..%v", what, d, err, lo, hi)
		}
	}
	// Near to far and far to near: (1 + 10 ± 1) ms each way.
	within("near to far", near0[2], 20*time.Millisecond, 40*time.Millisecond)
	within("far to near", far2[0], 20*time.Millisecond, 40*time.Millisecond)
	within("near to near", near0[1], 0, 10*time.Millisecond)

	step(t, "slow the far zone", f.SlowLink(ctx, "far", 40*time.Millisecond))
	within("near to far slowed", near0[3], 60*time.Millisecond, 80*time.Millisecond)
	within("far to near slowed", far2[1], 60*time.Millisecond, 80*time.Millisecond)
	within("near to near beside the slowed far", near0[1], 0, 10*time.Millisecond)
	step(t, "take the delay away", f.SlowLink(ctx, "far", 0))
	within("near to far mended", near0[2], 20*time.Millisecond, 40*time.Millisecond)

	for _, tc := range linkCuts {
		step(t, "cut the far zone "+tc.how, f.CutLink(ctx, "far", tc.how))
		for _, addr := range []string{near0[2], far2[0]} {
			if _, err := echoOnce(addr); !tc.want(err) {
				t.Errorf("%s across the zones: echo err %v", tc.how, err)
			}
		}
		within("near to near beside the cut", near0[1], 0, 10*time.Millisecond)
		step(t, "mend the far zone", f.CutLink(ctx, "far", LinkUp))
		within("far to near mended after "+tc.how, far2[1], 20*time.Millisecond, 40*time.Millisecond)
	}
}

// A fleet without a store is given zones only when its target file tells its replicas where
// their peers are, and on a bridge network not at all: the links listen on this host.
func TestSpecZonesWithoutAStore(t *testing.T) {
	zones, err := topology.Parse("near:2:1ms,far:2:40ms")
	if err != nil {
		t.Fatal(err)
	}
	peered := &target.Start{Kind: target.StartDocker, Files: []target.File{{Path: "c", Content: []byte("peer {{each.peer}}\n")}}}
	alone := &target.Start{Kind: target.StartDocker, Env: map[string]string{"ADDR": "127.0.42.{{node}}:1051"}}
	if _, err := (Spec{Replicas: 4, Zones: zones, NoStore: true, Custom: peered, Network: NetworkHost}).withDefaults(); err != nil {
		t.Errorf("a peered limiter without a store in zones: %v", err)
	}
	if _, err := (Spec{Replicas: 4, Zones: zones, NoStore: true, Custom: alone}).withDefaults(); err == nil || !strings.Contains(err.Error(), "told where its peers are") {
		t.Errorf("a limiter whose nodes find each other alone, in zones: err = %v", err)
	}
	bridge := Spec{Replicas: 4, Zones: zones, NoStore: true, Custom: peered, Network: NetworkBridge}
	if err := bridge.customFor("docker", target.StartDocker); err == nil || !strings.Contains(err.Error(), "--network host") {
		t.Errorf("links between nodes on a bridge network: err = %v", err)
	}
}

// Nodes that announce themselves by name ({{peer_name}}, gubernator's advertise address) are
// told one port for a peer whichever zone they dial from: zone a's link to a peer listens on
// that peer's own port at 127.0.(100+a).1, and each replica's hosts file leads every name to
// its own zone's peers directly and to another zone's through its zone's link. A name dialed
// from the near zone, at the address its hosts file gives, crosses the zones' latency there
// and not within the zone.
func TestNamedPeerLinks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, zones, peerPorts, via := linkedEchoes(ctx, t, true)
	var got, want []string
	for _, l := range f.peerLinks {
		got = append(got, fmt.Sprintf("%d>%d %s", l.from, l.to, l.p.addr()))
	}
	for j, pp := range peerPorts {
		from := 1 - zones.ZoneOf(j)
		want = append(want, fmt.Sprintf("%d>%d 127.0.%d.1:%d", from, zones.ZoneOf(j), 100+from, pp))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the links (from>to zone, where they listen): %q, want %q", got, want)
	}

	named := &target.Start{Kind: target.StartDocker, Env: map[string]string{"ADVERTISE": "{{peer_name}}:{{peer_port}}"}}
	s := Spec{Replicas: 4, Network: NetworkHost, NoStore: true, Zones: zones, Custom: named}
	at := layout{ports: []int{41000, 41001, 41002, 41003}, peerPorts: peerPorts, via: via}
	for _, tc := range []struct {
		replica int
		want    []string
	}{
		{0, []string{"node-0.peers.rlharness:127.0.0.1", "node-1.peers.rlharness:127.0.0.1", "node-2.peers.rlharness:127.0.100.1", "node-3.peers.rlharness:127.0.100.1"}},
		{3, []string{"node-0.peers.rlharness:127.0.101.1", "node-1.peers.rlharness:127.0.101.1", "node-2.peers.rlharness:127.0.0.1", "node-3.peers.rlharness:127.0.0.1"}},
	} {
		if got := s.peerHosts(tc.replica, at); !slices.Equal(got, tc.want) {
			t.Errorf("replica %d's hosts: %q, want %q", tc.replica, got, tc.want)
		}
		if got, want := s.customVars(tc.replica, at, "").Expand(named.Env["ADVERTISE"]), fmt.Sprintf("node-%d.peers.rlharness:%d", tc.replica, peerPorts[tc.replica]); got != want {
			t.Errorf("replica %d announces %s, want %s", tc.replica, got, want)
		}
	}
	if got := (Spec{Replicas: 4, Network: NetworkHost, Custom: named}).peerHosts(0, layout{peerPorts: peerPorts}); got[3] != "node-3.peers.rlharness:127.0.0.1" {
		t.Errorf("without zones a name leads to 127.0.0.1: %q", got)
	}
	if got := (Spec{Replicas: 4, Network: NetworkHost, NoStore: true, Zones: zones, Custom: &target.Start{Kind: target.StartDocker}}).peerHosts(0, at); got != nil {
		t.Errorf("a target that announces no name is given hosts %q", got)
	}

	dial := func(i, j int) string { // replica i's address for replica j, as its hosts file and the announced port say
		_, addr, _ := strings.Cut(s.peerHosts(i, at)[j], ":")
		return net.JoinHostPort(addr, itoa(peerPorts[j]))
	}
	rtt := func(addr string) time.Duration {
		d, err := fastestEcho(addr)
		if err != nil {
			t.Fatalf("echo through %s: %v", addr, err)
		}
		return d
	}
	for _, tc := range []struct {
		i, j   int
		lo, hi time.Duration
	}{
		{0, 2, 20 * time.Millisecond, 40 * time.Millisecond}, // near to far: (1 + 10 ± 1) ms each way
		{3, 1, 20 * time.Millisecond, 40 * time.Millisecond}, // far to near
		{0, 1, 0, 10 * time.Millisecond},                     // within the near zone
	} {
		if d := rtt(dial(tc.i, tc.j)); d < tc.lo || d > tc.hi {
			t.Errorf("replica %d to replica %d at %s: a round trip took %v, want %v..%v", tc.i, tc.j, dial(tc.i, tc.j), d, tc.lo, tc.hi)
		}
	}
	step(t, "cut the far zone", f.CutLink(ctx, "far", LinkRefused))
	if conn, err := net.DialTimeout("tcp", dial(0, 2), time.Second); err == nil {
		conn.Close()
		t.Errorf("near replica 0 reached far replica 2 at %s through a cut link", dial(0, 2))
	}
	step(t, "mend the far zone", f.CutLink(ctx, "far", LinkUp))
	if d := rtt(dial(0, 2)); d < 20*time.Millisecond {
		t.Errorf("near to far after the link was mended on the peer's own port: %v", d)
	}
}

// A target whose nodes announce a name is given zones on host networking; as a local process it
// is refused (no hosts file of its own), and on host networking its name is its own, on a bridge
// network its container's, as a process 127.0.0.1.
func TestSpecZonesNamedPeers(t *testing.T) {
	zones, err := topology.Parse("near:2:1ms,far:2:40ms")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADVERTISE": "{{peer_name}}:{{peer_port}}"}
	docker := &target.Start{Kind: target.StartDocker, Env: env}
	proc := &target.Start{Kind: target.StartProcess, Command: []string{"gubernator"}, Env: env}
	s, err := (Spec{Replicas: 4, Zones: zones, NoStore: true, Custom: docker, Network: NetworkHost}).withDefaults()
	if err != nil {
		t.Fatalf("a limiter whose nodes announce a name, in zones: %v", err)
	}
	if err := s.customFor("docker", target.StartDocker); err != nil {
		t.Errorf("on host networking: %v", err)
	}
	p := Spec{Replicas: 4, Zones: zones, NoStore: true, Custom: proc, Network: NetworkHost}
	if err := p.customFor("local", target.StartProcess); err == nil || !strings.Contains(err.Error(), "{{peer_name}}") || !strings.Contains(err.Error(), "hosts file") {
		t.Errorf("as local processes in zones: err = %v, want a refusal that names {{peer_name}} and the hosts file", err)
	}
	p.Zones = topology.Topology{}
	if err := p.customFor("local", target.StartProcess); err != nil {
		t.Errorf("as local processes without zones: %v", err)
	}
	for _, tc := range []struct {
		name string
		s    Spec
		want string
	}{
		{"host networking", Spec{RunID: "r1", Custom: docker, Network: NetworkHost}, "node-2.peers.rlharness"},
		{"bridge", Spec{RunID: "r1", Custom: docker, Network: NetworkBridge}, "rlharness-r1-replica-2"},
		{"process", Spec{RunID: "r1", Custom: proc, Network: NetworkHost}, "127.0.0.1"},
	} {
		if got := tc.s.peerName(2); got != tc.want {
			t.Errorf("%s: peer name %q, want %q", tc.name, got, tc.want)
		}
	}
}

// fastestEcho is the fastest of three round trips of a line and its echo through addr, each on
// a connection of its own: a link that waits too little is short in every one and one that
// waits too long slow in every one, while a test descheduled for a few ms on 2 cores (an image
// compiling beside it) is slow in one.
func fastestEcho(addr string) (time.Duration, error) {
	best := time.Duration(-1)
	for range 3 {
		d, err := echoOnce(addr)
		if err != nil {
			return 0, err
		}
		if best < 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// echoOnce is one round trip of a line and its echo through addr.
func echoOnce(addr string) (time.Duration, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	begin := time.Now()
	_ = conn.SetDeadline(begin.Add(300 * time.Millisecond))
	if _, err := conn.Write([]byte("hello\n")); err != nil {
		return 0, err
	}
	_, err = bufio.NewReader(conn).ReadString('\n')
	return time.Since(begin), err
}

// linkedEchoes are four echo servers as the peer ports of near:2:1ms,far:2:10ms±1ms, with the
// links between the zones started in front of them (on each peer's own port with samePort),
// closed when t ends.
func linkedEchoes(ctx context.Context, t *testing.T, samePort bool) (*fleet, topology.Topology, []int, [][]netip.AddrPort) {
	t.Helper()
	zones, err := topology.Parse("near:2:1ms,far:2:10ms±1ms")
	if err != nil {
		t.Fatal(err)
	}
	peerPorts := []int{echoPeer(t), echoPeer(t), echoPeer(t), echoPeer(t)}
	f := newFleet(slog.New(slog.DiscardHandler), result.Conditions{}, 4)
	via, err := f.startPeerLinks(ctx, loopbackOnly{}, zones, peerPorts, samePort)
	t.Cleanup(func() {
		for _, l := range f.peerLinks {
			l.p.close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, zones, peerPorts, via
}
