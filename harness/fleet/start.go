package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/harness/recorder"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/topology"
)

// backend is what a provider brings to start: how to run each member, and what
// the members share. start owns the order, the waits and the cleanup, so both
// providers start a fleet the same way.
type backend interface {
	// prepare checks what the run needs before anything of it exists (images,
	// executables) and returns the fleet's conditions so far. Nothing is torn
	// down when it fails, so it creates only what it removes itself.
	prepare(ctx context.Context, spec Spec, log *slog.Logger) (result.Conditions, error)
	// setup makes what the members share once teardown can undo it: a network,
	// a built binary, a rule file. It may add to f.cond.
	setup(ctx context.Context, f *fleet) error
	// redis starts the single Redis on host port and returns it with the
	// address the replicas reach it on.
	redis(ctx context.Context, port int) (member, string, error)
	// node starts cluster node j on port with redis-server's args.
	node(ctx context.Context, j, port int, args []string) (member, error)
	// dataDir is where a cluster node keeps its nodes.conf.
	dataDir() string
	// proxyHost is the host address on which a process of this one (the store proxy)
	// is reachable from the replicas.
	proxyHost(ctx context.Context) (string, error)
	// replica starts replica i listening on host port at.ports[i], with redis the
	// address of the store as the replicas reach it.
	replica(ctx context.Context, i int, at layout, redis string) (member, error)
	// withLogs adds the tail of m's output to a readiness error: that is where
	// a member says why it is not ready.
	withLogs(ctx context.Context, m member, err error) error
	// teardown removes every member and everything setup made, including
	// what a half-started run left.
	teardown(ctx context.Context) error
}

// start is both providers' Start: spec's defaults, the store first and waited
// for, then every replica started and waited for in parallel. On error the
// fleet is terminated, whatever ctx says by then.
func start(ctx context.Context, spec Spec, logger *slog.Logger, provider, kind string, b backend) (_ Fleet, err error) {
	begin := time.Now()
	spec, err = spec.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("fleet spec: %w", err)
	}
	if err := spec.customFor(provider, kind); err != nil {
		return nil, err
	}
	log := loggerOr(logger).With("provider", provider)
	cond, err := b.prepare(ctx, spec, log)
	if err != nil {
		return nil, err
	}
	f := newFleet(log, cond, spec.Replicas)
	f.teardown = func(ctx context.Context) error {
		if f.proxy != nil {
			f.proxy.close()
		}
		for _, l := range f.links {
			l.close()
		}
		for _, l := range f.peerLinks {
			l.p.close()
		}
		err := b.teardown(ctx)
		if f.rec != nil {
			err = errors.Join(err, f.rec.Close())
		}
		return err
	}
	defer func() {
		if err != nil {
			// Leave nothing behind, whatever ctx says now.
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if terr := f.Terminate(tctx); terr != nil {
				log.Error("could not clean up a fleet that failed to start", "run", spec.RunID, "err", terr)
			}
		}
	}()

	if err := b.setup(ctx, f); err != nil {
		return nil, err
	}
	ports, err := freePorts(1 + spec.Replicas + spec.peerPorts())
	if err != nil {
		return nil, err
	}
	at := layout{ports: ports[1 : 1+spec.Replicas], peerPorts: ports[1+spec.Replicas:]}
	if spec.RecordBackend {
		if f.rec, err = recorder.Start(); err != nil {
			return nil, err
		}
		at.backend = f.rec.Addr()
	}
	var redis string
	if !spec.NoStore {
		if redis, err = f.startStore(ctx, spec, b, ports[0]); err != nil {
			return nil, err
		}
	}
	if spec.StoreProxy {
		if redis, err = f.startProxy(ctx, b); err != nil {
			return nil, err
		}
	}

	var zoneAddrs []string
	switch {
	case spec.Zones.IsZero():
	case spec.NoStore: // the zones' links are between the replicas
		if at.via, err = f.startPeerLinks(ctx, b, spec.Zones, at.peerPorts, spec.Custom != nil && spec.Custom.Named()); err != nil {
			return nil, err
		}
	default:
		if zoneAddrs, err = f.startLinks(ctx, b, spec.Zones); err != nil {
			return nil, err
		}
	}
	if spec.Custom != nil {
		f.health = spec.Custom.Health
	}
	for i := range spec.Replicas {
		f.setAddr(1+i, loopback(ports[1+i]))
	}
	errs := make([]error, spec.Replicas)
	var wg sync.WaitGroup
	for i := range spec.Replicas {
		wg.Go(func() {
			store := redis
			if zoneAddrs != nil {
				store = zoneAddrs[spec.Zones.ZoneOf(i)]
			}
			m, err := b.replica(ctx, i, at, store)
			f.members[1+i] = m
			if err == nil {
				if err = f.waitReady(ctx, 1+i); err != nil {
					err = b.withLogs(ctx, m, err)
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f.started(begin)
	return f, nil
}

// layout is where a fleet's replicas listen on the host: replica i's HTTP port, and for a
// target file's limiter the second port its replicas reach each other on ({{peer_port}}).
type layout struct {
	ports, peerPorts []int
	// backend is the recording backend's host:port ({{backend}}); empty without one.
	backend string
	// via[i][j] is where replica i reaches replica j's second port through their zones'
	// link (startPeerLinks); nil, or not valid for a pair in one zone, is directly.
	via [][]netip.AddrPort
}

// peerPorts is how many second ports the replicas need: one each for a target file's
// limiter, whose replicas may talk to each other; none for the harness's own targets.
func (s Spec) peerPorts() int {
	if s.Custom == nil {
		return 0
	}
	return s.Replicas
}

// startStore starts the counter store, one Redis on port or a cluster, waits
// until it answers, and returns the address the replicas reach it on.
func (f *fleet) startStore(ctx context.Context, spec Spec, b backend, port int) (string, error) {
	if spec.Store == StoreCluster {
		err := f.startCluster(ctx, spec, b)
		return f.RedisAddr(), err
	}
	f.setAddr(0, loopback(port))
	m, redis, err := b.redis(ctx, port)
	f.members[0] = m
	if err != nil {
		return "", err
	}
	if err := f.waitReady(ctx, 0); err != nil {
		return "", b.withLogs(ctx, m, err)
	}
	return redis, nil
}

// startLinks gives every zone its own link to the store and returns the address each zone's
// replicas reach the store on, by zone.
func (f *fleet) startLinks(ctx context.Context, b backend, zones topology.Topology) ([]string, error) {
	host, err := b.proxyHost(ctx)
	if err != nil {
		return nil, err
	}
	f.zones = zones
	addrs := make([]string, len(zones.Zones))
	for k, z := range zones.Zones {
		l, err := startLink(host, f.RedisAddr(), z)
		if err != nil {
			return nil, err
		}
		f.links = append(f.links, l)
		addrs[k] = l.addr()
		f.log.Info("zone link started", "zone", z.Name, "listen", addrs[k], "latency", z.Latency, "jitter", z.Jitter)
	}
	f.cond.Zones, f.cond.ZoneLinks = zones.Zones, addrs
	return addrs, nil
}

// startProxy puts the store proxy between the replicas and Redis, and returns the address
// the replicas reach the store on through it.
func (f *fleet) startProxy(ctx context.Context, b backend) (string, error) {
	host, err := b.proxyHost(ctx)
	if err != nil {
		return "", err
	}
	p, err := startStoreProxy(net.JoinHostPort(host, "0"), f.RedisAddr(), "store")
	if err != nil {
		return "", err
	}
	f.proxy = p
	f.cond.StoreProxy = p.addr()
	f.log.Info("store proxy started", "listen", p.addr(), "upstream", f.RedisAddr())
	return p.addr(), nil
}
