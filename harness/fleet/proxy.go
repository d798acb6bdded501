package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edgeproof/rlharness/harness/topology"
)

// ErrNoStoreProxy is SlowStore's error on a fleet started without Spec.StoreProxy or zones.
var ErrNoStoreProxy = errors.New("the fleet has no store proxy to slow: start it with Spec.StoreProxy (one Redis only) or Spec.Zones")

// ErrNoZones is a link fault's error on a fleet started without Spec.Zones.
var ErrNoZones = errors.New("the fleet has no zones whose link to cut or slow: start it with Spec.Zones (--zones)")

// How a zone's link to the store is cut (SetLink).
const (
	// LinkUp is a link that carries every byte (after its latency).
	LinkUp = ""
	// LinkRefused closes the link's open connections and refuses new ones: a replica finds
	// out at once that the store is gone (a partition whose routers answer with resets).
	LinkRefused = "refused"
	// LinkBlackhole keeps the link's connections open and new ones accepted but drops every
	// byte both ways: a replica's calls hang until its own timeouts (a partition whose
	// packets vanish).
	LinkBlackhole = "blackhole"
)

// storeProxy is a TCP proxy this process puts between replicas and Redis: Shopify/toxiproxy's
// proxy, run in this process (no image, no API port). The store proxy of Spec.StoreProxy is
// one, between every replica and the store, so that store-slow can delay every store reply
// and take the delay away again; with Spec.Zones each zone has its own, its link, which
// carries the zone's latency both ways and can be slowed or cut on its own.
//
// It listens where the replicas reach the host: 127.0.0.1 for local processes and host
// networking, the run's bridge gateway for containers on a bridge network (docs/faults.md).
// Its upstream is Redis's address on the host, which stays the same across restarts.
type storeProxy struct {
	mu    sync.Mutex
	proxy *toxiproxy.Proxy
	delay time.Duration
	cut   string
	// between says the proxy is a link between two nodes (peerLink), not to the store: a
	// delay is put on both directions.
	between bool
}

// The toxics a proxy carries, by name.
const (
	toxicName    = "store-slow"  // SlowStore's and link-slow's delay, on the replies
	linkToxic    = "link"        // a zone's latency, one each way
	blackholeTox = "link-cut"    // a blackholed link, one each way
	latencyType  = "rlh_latency" // linkLatency's type
)

func init() { toxics.Register(latencyType, new(linkLatency)) }

// linkLatency is toxiproxy's latency toxic in microseconds (its own counts whole
// milliseconds, and a zone's link may be 0.5 ms): every chunk waits Latency ± Jitter from
// when it was read, in order.
type linkLatency struct {
	Latency int64 `json:"latency_us"`
	Jitter  int64 `json:"jitter_us"`
}

func (t *linkLatency) delay() time.Duration {
	d := t.Latency
	if t.Jitter > 0 {
		// The jitter stands for a network's, which no run replays: the generator is the
		// runtime's, not a seeded one.
		d += rand.Int64N(2*t.Jitter+1) - t.Jitter
	}
	return time.Duration(d) * time.Microsecond
}

// Pipe delays each chunk as toxiproxy's latency toxic does.
func (t *linkLatency) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			sleep := t.delay() - time.Since(c.Timestamp)
			timer := time.NewTimer(sleep)
			select {
			case <-timer.C:
				c.Timestamp = c.Timestamp.Add(sleep)
				stub.Output <- c
			case <-stub.Interrupt:
				timer.Stop()
				stub.Output <- c // drop nothing
				return
			}
		}
	}
}

// startStoreProxy starts a proxy listening at listen (host:port, port 0 for the kernel's
// choice) to upstream.
func startStoreProxy(listen, upstream, name string) (*storeProxy, error) {
	quiet := zerolog.Nop()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), quiet)
	p := toxiproxy.NewProxy(server, name, listen, upstream)
	p.Logger = &quiet
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start the %s proxy on %s: %w", name, listen, err)
	}
	return &storeProxy{proxy: p}, nil
}

// startLink starts zone z's link: a store proxy whose every byte waits the zone's latency,
// each way.
func startLink(host, upstream string, z topology.Zone) (*storeProxy, error) {
	return startDelayed(net.JoinHostPort(host, "0"), upstream, "zone-"+z.Name, z.Latency, z.Jitter)
}

// startDelayed starts a proxy listening at listen to upstream whose every byte waits latency ±
// jitter, each way.
func startDelayed(listen, upstream, name string, latency, jitter time.Duration) (*storeProxy, error) {
	p, err := startStoreProxy(listen, upstream, name)
	if err != nil {
		return nil, err
	}
	if latency > 0 {
		if err := p.addLatency(linkToxic, latency, jitter); err != nil {
			p.close()
			return nil, fmt.Errorf("give the %s link its %v latency: %w", name, latency, err)
		}
	}
	return p, nil
}

// addLatency adds toxics name-upstream and name-downstream that make every byte wait
// latency ± jitter, each way.
func (s *storeProxy) addLatency(name string, latency, jitter time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{"latency_us":%d,"jitter_us":%d}}`,
			name+"-"+stream, latencyType, stream, latency.Microseconds(), jitter.Microseconds())
		if _, err := s.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return err
		}
	}
	return nil
}

// addr is where the proxy listens, host:port.
func (s *storeProxy) addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proxy.Listen
}

// setDelay makes every reply from the store wait d more before it goes on to the replica (a
// latency toxic on the downstream direction, on open connections too); 0 takes it away.
func (s *storeProxy) setDelay(ctx context.Context, d time.Duration) error {
	if d < 0 || d%time.Millisecond != 0 {
		return fmt.Errorf("store delay %v: give whole milliseconds >= 0", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.delay > 0 {
		names := []string{toxicName}
		if s.between {
			names = []string{toxicName + "-upstream", toxicName + "-downstream"}
		}
		for _, n := range names {
			if err := s.proxy.Toxics.RemoveToxic(ctx, n); err != nil {
				return fmt.Errorf("take the link's delay away: %w", err)
			}
		}
		s.delay = 0
	}
	if d == 0 {
		return nil
	}
	if s.between {
		// Between two nodes either side may speak first (a peer's push is one way): half the
		// delay each way, so that a round trip through the link grows by d as a store's does.
		if err := s.addLatency(toxicName, d/2, 0); err != nil {
			return fmt.Errorf("delay the link by %v: %w", d, err)
		}
		s.delay = d
		return nil
	}
	body := fmt.Sprintf(`{"name":%q,"type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d}}`, toxicName, d.Milliseconds())
	if _, err := s.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("delay the store by %v: %w", d, err)
	}
	s.delay = d
	return nil
}

// setCut cuts the link the way how says (LinkRefused, LinkBlackhole) or mends it (LinkUp).
func (s *storeProxy) setCut(ctx context.Context, how string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if how == s.cut {
		return nil
	}
	switch s.cut { // mend first
	case LinkRefused:
		if err := s.proxy.Start(); err != nil {
			return fmt.Errorf("listen again on %s: %w", s.proxy.Listen, err)
		}
	case LinkBlackhole:
		for _, stream := range []string{"upstream", "downstream"} {
			if err := s.proxy.Toxics.RemoveToxic(ctx, blackholeTox+"-"+stream); err != nil {
				return fmt.Errorf("let the link's bytes through again: %w", err)
			}
		}
	}
	s.cut = LinkUp
	switch how {
	case LinkUp:
	case LinkRefused:
		s.proxy.Stop() // closes the listener and every open connection
	case LinkBlackhole:
		for _, stream := range []string{"upstream", "downstream"} {
			// toxiproxy's timeout toxic with timeout 0 drops every byte and never closes.
			body := fmt.Sprintf(`{"name":%q,"type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, blackholeTox+"-"+stream, stream)
			if _, err := s.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
				return fmt.Errorf("drop the link's bytes: %w", err)
			}
		}
	default:
		return fmt.Errorf("cut a link %q: use %q, %q or %q", how, LinkUp, LinkRefused, LinkBlackhole)
	}
	s.cut = how
	return nil
}

// close stops the proxy and cuts its connections.
func (s *storeProxy) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proxy.Stop()
}

// SlowStore delays every store reply by d, through the store proxy or every zone's link, on
// open connections and new ones alike; 0 takes the delay away. The fleet must have been
// started with Spec.StoreProxy or Spec.Zones.
func (f *fleet) SlowStore(ctx context.Context, d time.Duration) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.terminated {
		return fmt.Errorf("slow the store: %w", errTerminated)
	}
	proxies := f.links
	if f.proxy != nil {
		proxies = []*storeProxy{f.proxy}
	}
	if len(proxies) == 0 {
		return ErrNoStoreProxy
	}
	start := time.Now()
	for _, p := range proxies {
		if err := p.setDelay(ctx, d); err != nil {
			return err
		}
	}
	f.log.Info("store proxy delay set", "delay", d, "run", f.cond.RunID, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// SlowLink delays every store reply on zone's link by d more than its latency, and every
// round trip between its replicas and another zone's by d (links between nodes); 0 takes
// the delay away.
func (f *fleet) SlowLink(ctx context.Context, zone string, d time.Duration) error {
	return f.onLink(zone, "slow", func(p *storeProxy) error { return p.setDelay(ctx, d) })
}

// CutLink cuts zone's link to the store, and every link between its replicas and another
// zone's, as how says (LinkRefused, LinkBlackhole), or mends them (LinkUp).
func (f *fleet) CutLink(ctx context.Context, zone, how string) error {
	return f.onLink(zone, "cut", func(p *storeProxy) error { return p.setCut(ctx, how) })
}

func (f *fleet) onLink(zone, what string, op func(*storeProxy) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.terminated {
		return fmt.Errorf("%s zone %s's link: %w", what, zone, errTerminated)
	}
	if len(f.links) == 0 && len(f.peerLinks) == 0 {
		return ErrNoZones
	}
	k := f.zones.Index(zone)
	if k < 0 {
		return fmt.Errorf("%s zone %q's link: the fleet's zones are %s", what, zone, f.zones)
	}
	for _, p := range f.zoneLinks(k) {
		if err := op(p); err != nil {
			return err
		}
	}
	return nil
}
