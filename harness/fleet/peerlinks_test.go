package fleet

import (
	"bufio"
	"context"
	"log/slog"
	"net"
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
	zones, err := topology.Parse("near:2:1ms,far:2:10ms±1ms")
	if err != nil {
		t.Fatal(err)
	}
	peerPorts := []int{echoPeer(t), echoPeer(t), echoPeer(t), echoPeer(t)}
	f := newFleet(slog.New(slog.DiscardHandler), result.Conditions{}, 4)
	via, err := f.startPeerLinks(ctx, loopbackOnly{}, zones, peerPorts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, l := range f.peerLinks {
			l.p.close()
		}
	}()
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

	// A line and its echo through an address: one round trip.
	echo := func(addr string) (time.Duration, error) {
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
	within := func(what, addr string, lo, hi time.Duration) {
		t.Helper()
		d, err := echo(addr)
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
			if _, err := echo(addr); !tc.want(err) {
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
