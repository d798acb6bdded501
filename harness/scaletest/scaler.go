package scaletest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

// scaler turns the controller's count into running replicas: replica slots 0..n−1 are
// wanted, the rest not. Each slot has one goroutine that starts or stops its member through
// the fleet until it matches what is wanted, so a slow start never holds up the control
// loop. A replica serves traffic (route) only between a finished start and the moment it is
// no longer wanted.
type scaler struct {
	f     fleet.Fleet
	urls  []string
	slots []*slot
	round func() int

	mu       sync.Mutex
	startups []result.Startup

	live atomic.Pointer[[]string] // URLs of the ready replicas
	next atomic.Uint64
}

type slot struct {
	i      int
	mu     sync.Mutex
	want   bool
	ready  bool
	notify chan struct{}
}

func newScaler(f fleet.Fleet, running int, round func() int) *scaler {
	s := &scaler{f: f, urls: f.ReplicaURLs(), round: round}
	for i := range s.urls {
		sl := &slot{i: i, want: i < running, ready: i < running, notify: make(chan struct{}, 1)}
		s.slots = append(s.slots, sl)
	}
	s.publish()
	return s
}

// run reconciles every slot until ctx ends.
func (s *scaler) run(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, sl := range s.slots {
		sl.mu.Lock()
		running := sl.want // before any set: a slot runs exactly when it starts wanted
		sl.mu.Unlock()
		wg.Go(func() { s.reconcile(ctx, sl, running) })
	}
	return &wg
}

// set asks for n replicas.
func (s *scaler) set(n int) {
	for _, sl := range s.slots {
		sl.mu.Lock()
		want := sl.i < n
		changed := want != sl.want
		sl.want = want
		if !want {
			sl.ready = false // out of the route at once, before the stop
		}
		sl.mu.Unlock()
		if changed {
			select {
			case sl.notify <- struct{}{}:
			default:
			}
		}
	}
	s.publish()
}

func (s *scaler) reconcile(ctx context.Context, sl *slot, running bool) {
	member := fleet.ReplicaMember(sl.i)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sl.notify:
		}
		for {
			sl.mu.Lock()
			want := sl.want
			sl.mu.Unlock()
			if want == running {
				break
			}
			if !want {
				_ = s.f.Stop(ctx, member) // an error leaves it running: retried on the next change
				running = false
				continue
			}
			asked, round := time.Now(), s.round()
			err := s.f.Start(ctx, member)
			st := result.Startup{Member: member, Round: round, Took: time.Since(asked)}
			if err != nil {
				st.Error = err.Error()
				st.Unfinished = ctx.Err() != nil
			}
			s.mu.Lock()
			s.startups = append(s.startups, st)
			s.mu.Unlock()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				break // wait for the next change rather than retry a failing start in a loop
			}
			running = true
			sl.mu.Lock()
			sl.ready = sl.want
			sl.mu.Unlock()
			s.publish()
		}
	}
}

// publish recomputes the route.
func (s *scaler) publish() {
	var live []string
	for _, sl := range s.slots {
		sl.mu.Lock()
		if sl.ready {
			live = append(live, s.urls[sl.i])
		}
		sl.mu.Unlock()
	}
	s.live.Store(&live)
}

// ready is the URLs of the replicas serving now.
func (s *scaler) ready() []string { return *s.live.Load() }

// route spreads requests round-robin over the ready replicas; replica 0 (never scaled away,
// the minimum is 1) when none is ready.
func (s *scaler) route() string {
	live := *s.live.Load()
	if len(live) == 0 {
		return s.urls[0]
	}
	return live[s.next.Add(1)%uint64(len(live))]
}

func (s *scaler) startupTimes() []result.Startup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]result.Startup(nil), s.startups...)
}
