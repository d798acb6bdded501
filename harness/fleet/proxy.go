package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	_ "github.com/Shopify/toxiproxy/v2/toxics" // registers the latency toxic
)

// ErrNoStoreProxy is SlowStore's error on a fleet started without Spec.StoreProxy.
var ErrNoStoreProxy = errors.New("the fleet has no store proxy to slow: start it with Spec.StoreProxy (one Redis only)")

// storeProxy is the TCP proxy a fleet started with Spec.StoreProxy puts between its
// replicas and Redis: Shopify/toxiproxy's proxy, run in this process (no image, no API
// port), so that store-slow can delay every store reply and take the delay away again.
//
// It listens where the replicas reach the host: 127.0.0.1 for local processes and host
// networking, the run's bridge gateway for containers on a bridge network (docs/faults.md).
// Its upstream is Redis's address on the host, which stays the same across restarts.
type storeProxy struct {
	mu    sync.Mutex
	proxy *toxiproxy.Proxy
	delay time.Duration
}

// toxicName names the one toxic the proxy ever carries.
const toxicName = "store-slow"

// startStoreProxy starts a proxy on host (port chosen by the kernel) to upstream.
func startStoreProxy(host, upstream string) (*storeProxy, error) {
	quiet := zerolog.Nop()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), quiet)
	p := toxiproxy.NewProxy(server, "store", net.JoinHostPort(host, "0"), upstream)
	p.Logger = &quiet
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start the store proxy on %s: %w", host, err)
	}
	return &storeProxy{proxy: p}, nil
}

// addr is where the proxy listens, host:port.
func (s *storeProxy) addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proxy.Listen
}

// setDelay makes every reply from the store wait d before it goes on to the replica (the
// latency toxic on the downstream direction, on open connections too); 0 takes it away.
func (s *storeProxy) setDelay(ctx context.Context, d time.Duration) error {
	if d < 0 || d%time.Millisecond != 0 {
		return fmt.Errorf("store delay %v: give whole milliseconds >= 0", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.delay > 0 {
		if err := s.proxy.Toxics.RemoveToxic(ctx, toxicName); err != nil {
			return fmt.Errorf("take the store's delay away: %w", err)
		}
		s.delay = 0
	}
	if d == 0 {
		return nil
	}
	body := fmt.Sprintf(`{"name":%q,"type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d}}`, toxicName, d.Milliseconds())
	if _, err := s.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("delay the store by %v: %w", d, err)
	}
	s.delay = d
	return nil
}

// close stops the proxy and cuts its connections.
func (s *storeProxy) close() {
	s.proxy.Stop()
}

// SlowStore delays every store reply by d, through the store proxy, on open connections and
// new ones alike; 0 takes the delay away. The fleet must have been started with
// Spec.StoreProxy.
func (f *fleet) SlowStore(ctx context.Context, d time.Duration) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.terminated {
		return fmt.Errorf("slow the store: %w", errTerminated)
	}
	if f.proxy == nil {
		return ErrNoStoreProxy
	}
	start := time.Now()
	if err := f.proxy.setDelay(ctx, d); err != nil {
		return err
	}
	f.log.Info("store proxy delay set", "delay", d, "run", f.cond.RunID, "took", time.Since(start).Round(time.Millisecond))
	return nil
}
