package fleet

import (
	"context"
	"fmt"
	"github.com/edgeproof/rlharness/harness/topology"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/harness/recorder"
	"github.com/edgeproof/rlharness/harness/result"
)

// member is one container or process of a fleet, as a provider runs it.
// The fleet serialises calls per member.
type member interface {
	// stop ends the member within grace (SIGTERM, then SIGKILL); stopping a
	// stopped member does nothing.
	stop(ctx context.Context, grace time.Duration) error
	// start runs a stopped member again; it returns the member's host
	// address (127.0.0.1:port) as it is now, and does nothing to a running
	// member but resume it if it is paused.
	start(ctx context.Context) (addr string, err error)
	// kill ends the member at once with SIGKILL (a paused one too) and returns once it is
	// gone; killing a stopped member does nothing.
	kill(ctx context.Context) error
	pause(ctx context.Context) error
	unpause(ctx context.Context) error
	// exited returns an error that says how the member ended if it is no
	// longer running, nil while it runs.
	exited(ctx context.Context) error
	// pid is the member's process id on this host; an error when it does not run.
	pid(ctx context.Context) (int, error)
}

// fleet is the Fleet both providers return: names, addresses, locking and
// health waits here; containers or processes behind members.
type fleet struct {
	log      *slog.Logger
	cond     result.Conditions
	replicas int
	// health is the path a custom target answers 200 on once ready; "" is /healthz.
	health string

	// done is cancelled by Terminate so that an operation waiting for health
	// gives up instead of holding Terminate back.
	done   context.Context
	cancel context.CancelCauseFunc

	mu         sync.RWMutex // write-held by Terminate; read-held by member operations
	terminated bool
	members    []member     // 0 is Redis, 1+i is replica i
	locks      []sync.Mutex // one per member
	teardown   func(ctx context.Context) error

	addrMu    sync.Mutex
	redisAddr string
	urls      []string
	// A cluster store's nodes (members 1+replicas+j, cluster.go) and its masters.
	nodes   []string
	masters int
	// proxy is the store proxy (Spec.StoreProxy); nil without one.
	proxy *storeProxy
	// rec is the recording backend (Spec.RecordBackend); nil without one.
	rec *recorder.Recorder
	// zones and links are the replicas' zones and each zone's link to the store
	// (Spec.Zones), in the same order; empty without zones.
	zones topology.Topology
	links []*storeProxy
	// peerLinks are the links between one zone's replicas and another's (a fleet without a
	// store whose replicas are told where their peers are); empty otherwise.
	peerLinks []peerLink
}

// Backend implements Recorded.
func (f *fleet) Backend() *recorder.Recorder { return f.rec }

func newFleet(log *slog.Logger, cond result.Conditions, replicas int) *fleet {
	f := &fleet{
		log:      log,
		cond:     cond,
		replicas: replicas,
		members:  make([]member, 1+replicas),
		locks:    make([]sync.Mutex, 1+replicas),
		urls:     make([]string, replicas),
	}
	f.done, f.cancel = context.WithCancelCause(context.Background())
	return f
}

func (f *fleet) Conditions() result.Conditions { return f.cond }

func (f *fleet) RedisAddr() string {
	f.addrMu.Lock()
	defer f.addrMu.Unlock()
	return f.redisAddr
}

func (f *fleet) ReplicaURLs() []string {
	f.addrMu.Lock()
	defer f.addrMu.Unlock()
	return slices.Clone(f.urls)
}

// setAddr records where member idx answers now; a replica's URL is derived.
func (f *fleet) setAddr(idx int, addr string) {
	f.addrMu.Lock()
	defer f.addrMu.Unlock()
	if idx == 0 {
		f.redisAddr = addr
		return
	}
	f.urls[idx-1] = "http://" + addr
}

// waitReady waits until member idx answers its health check.
func (f *fleet) waitReady(ctx context.Context, idx int) error {
	var dead func(context.Context) error
	if m := f.members[idx]; m != nil {
		dead = m.exited
	}
	if idx == 0 && len(f.nodes) > 0 {
		return f.waitStore(ctx)
	}
	if idx == 0 {
		return waitRedis(ctx, f.RedisAddr(), dead)
	}
	if j := f.nodeOf(idx); j >= 0 {
		return waitRedis(ctx, f.StoreNodes()[j], dead)
	}
	if f.health != "" {
		url := f.ReplicaURLs()[idx-1]
		return waitUntil(ctx, ReplicaMember(idx-1)+" at "+url+f.health, func(ctx context.Context) error { return HealthAt(ctx, url, f.health) }, dead)
	}
	return waitHealthy(ctx, ReplicaMember(idx-1), f.ReplicaURLs()[idx-1], dead)
}

// do runs op on the named member with the member locked, and with a context
// that ends when either ctx or the fleet ends.
func (f *fleet) do(ctx context.Context, verb, name string, op func(ctx context.Context, idx int, m member) error) error {
	idx, err := f.memberIdx(name)
	if err != nil {
		return err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.terminated {
		return fmt.Errorf("%s %s: %w", verb, name, errTerminated)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(f.done, func() { cancel(context.Cause(f.done)) })
	defer stop()

	if f.members[idx] == nil {
		return fmt.Errorf("%s %s: this fleet runs no %s (its target declares no store)", verb, name, name)
	}
	f.locks[idx].Lock()
	defer f.locks[idx].Unlock()
	start := time.Now()
	if err := op(ctx, idx, f.members[idx]); err != nil {
		return fmt.Errorf("%s %s: %w", verb, name, err)
	}
	f.log.Info("fleet member "+verb, "member", name, "run", f.cond.RunID, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func (f *fleet) Stop(ctx context.Context, name string) error {
	return f.do(ctx, "stop", name, func(ctx context.Context, _ int, m member) error {
		return m.stop(ctx, stopTimeout)
	})
}

func (f *fleet) Kill(ctx context.Context, name string) error {
	return f.do(ctx, "kill", name, func(ctx context.Context, _ int, m member) error { return m.kill(ctx) })
}

func (f *fleet) Start(ctx context.Context, name string) error {
	return f.do(ctx, "start", name, f.startMember)
}

func (f *fleet) startMember(ctx context.Context, idx int, m member) error {
	addr, err := m.start(ctx)
	if err != nil {
		return err
	}
	if old := f.addrOf(idx); addr != "" && addr != old {
		f.log.Warn("fleet member moved to another port", "member", f.nameOf(idx), "was", old, "now", addr)
		f.setAddr(idx, addr)
	}
	return f.waitReady(ctx, idx)
}

func (f *fleet) Restart(ctx context.Context, name string) error {
	return f.do(ctx, "restart", name, func(ctx context.Context, idx int, m member) error {
		if err := m.stop(ctx, stopTimeout); err != nil {
			return err
		}
		return f.startMember(ctx, idx, m)
	})
}

func (f *fleet) Pause(ctx context.Context, name string) error {
	return f.do(ctx, "pause", name, func(ctx context.Context, _ int, m member) error { return m.pause(ctx) })
}

func (f *fleet) Unpause(ctx context.Context, name string) error {
	return f.do(ctx, "unpause", name, func(ctx context.Context, _ int, m member) error { return m.unpause(ctx) })
}

// PID is the member's process id on this host (Processes).
func (f *fleet) PID(ctx context.Context, name string) (int, error) {
	var pid int
	err := f.do(ctx, "pid", name, func(ctx context.Context, _ int, m member) (err error) {
		pid, err = m.pid(ctx)
		return err
	})
	return pid, err
}

func (f *fleet) Terminate(ctx context.Context) error {
	f.cancel(errTerminated)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.terminated {
		return nil
	}
	f.terminated = true
	start := time.Now()
	err := f.teardown(ctx)
	if err != nil {
		return fmt.Errorf("terminate fleet %s: %w", f.cond.RunID, err)
	}
	f.log.Info("fleet terminated", "run", f.cond.RunID, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func (f *fleet) addrOf(idx int) string {
	if j := f.nodeOf(idx); j >= 0 {
		return f.StoreNodes()[j]
	}
	if idx == 0 {
		return f.RedisAddr()
	}
	return f.ReplicaURLs()[idx-1][len("http://"):]
}

func (f *fleet) nameOf(idx int) string {
	if j := f.nodeOf(idx); j >= 0 {
		return RedisNodeMember(j)
	}
	if idx == 0 {
		return RedisMember
	}
	return ReplicaMember(idx - 1)
}

// started records the startup time and logs the fleet's conditions.
func (f *fleet) started(begin time.Time) {
	f.cond.StartupTime = time.Since(begin)
	f.log.Info("fleet started",
		"run", f.cond.RunID, "network", f.cond.Network,
		"target", f.cond.Target, "replicas", f.cond.Replicas,
		"redis", f.RedisAddr(), "took", f.cond.StartupTime.Round(time.Millisecond))
}
