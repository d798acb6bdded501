package fleet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/edgeproof/rlharness/harness/topology"
)

// peerLink is the link a replica's traffic to a peer of another zone takes: a proxy in front
// of that peer's second port ({{peer_port}}) for the replicas of one zone, carrying both
// zones' latency. A limiter without a store (HAProxy's peers) keeps its counters among its
// nodes over such links, as the design's replicas reach the store over their zone's link.
type peerLink struct {
	from, to int // zone indexes: the zone whose replicas it serves, the peer's zone
	p        *storeProxy
}

// startPeerLinks gives the replicas of every zone a link to every peer of each other zone,
// in front of that peer's second port, and returns where replica i reaches replica j:
// via[i][j], not valid for a replica of its own zone, which it reaches directly. A link between
// zones a and b waits a's latency and b's (jitter alike), each way (topology.Between): both
// zones' own links to the network between them, so that near to far is the far zone's
// distance and a bit more.
//
// Where the nodes announce themselves by name (samePort: {{peer_name}}), every node is told
// one port for a peer whichever zone it dials from, and only the address its name leads to
// differs: zone a's link to a peer then listens on that peer's own port, on an address of
// a's own on the loopback network (zoneLoopback). Otherwise the kernel picks its port.
func (f *fleet) startPeerLinks(ctx context.Context, b backend, zones topology.Topology, peerPorts []int, samePort bool) ([][]netip.AddrPort, error) {
	if len(peerPorts) != zones.Replicas() {
		return nil, fmt.Errorf("zones %s hold %d replicas but the fleet has %d peer ports", zones, zones.Replicas(), len(peerPorts))
	}
	host, err := b.proxyHost(ctx)
	if err != nil {
		return nil, err
	}
	if samePort && host != "127.0.0.1" {
		return nil, fmt.Errorf("links on a peer's own port listen on this host's loopback network, which the replicas here reach at %s, not 127.0.0.1: use --network host", host)
	}
	f.zones = zones
	via := make([][]netip.AddrPort, len(peerPorts))
	for i := range via {
		via[i] = make([]netip.AddrPort, len(peerPorts))
	}
	for a, za := range zones.Zones {
		for j, pp := range peerPorts {
			to := zones.ZoneOf(j)
			if to == a {
				continue
			}
			name := fmt.Sprintf("zone-%s-to-%s-node-%d", za.Name, zones.Zones[to].Name, j)
			latency, jitter := zones.Between(a, to)
			listen := net.JoinHostPort(host, "0")
			if samePort {
				at, err := zoneLoopback(a)
				if err != nil {
					return nil, err
				}
				listen = netip.AddrPortFrom(at, uint16(pp)).String()
			}
			p, err := startDelayed(listen, net.JoinHostPort("127.0.0.1", strconv.Itoa(pp)), name, latency, jitter)
			if err != nil {
				return nil, err
			}
			p.between = true
			f.peerLinks = append(f.peerLinks, peerLink{from: a, to: to, p: p})
			at, err := netip.ParseAddrPort(p.addr())
			if err != nil {
				return nil, fmt.Errorf("the %s link listens at %q: %w", name, p.addr(), err)
			}
			for _, i := range zones.Members(a) {
				via[i][j] = at
			}
		}
	}
	f.log.Info("links between zones' nodes started", "zones", zones.String(), "links", len(f.peerLinks))
	f.cond.Zones, f.cond.PeerLinks = zones.Zones, len(f.peerLinks)
	return via, nil
}

// zoneLoopback is the address zone a's links to other zones' nodes listen on when each
// listens on its peer's own port: 127.0.(100+a).1, one of Linux's loopback addresses (all of
// 127.0.0.0/8 answers there), clear of 127.0.0.1 where the nodes listen and of the
// 127.0.42.<node> a target file may give its nodes.
func zoneLoopback(a int) (netip.Addr, error) {
	if a < 0 || 100+a > 255 {
		return netip.Addr{}, fmt.Errorf("zone %d has no loopback address of its own for its links (127.0.100.1 to 127.0.255.1: at most 156 zones)", a)
	}
	return netip.AddrFrom4([4]byte{127, 0, byte(100 + a), 1}), nil
}

// zoneLinks are the links a fault on zone k acts on: its link to the store, and every link
// between its replicas and another zone's, both ways.
func (f *fleet) zoneLinks(k int) []*storeProxy {
	var out []*storeProxy
	if k < len(f.links) {
		out = append(out, f.links[k])
	}
	for _, l := range f.peerLinks {
		if l.from == k || l.to == k {
			out = append(out, l.p)
		}
	}
	return out
}
