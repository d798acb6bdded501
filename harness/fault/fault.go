// Package fault breaks a running fleet on a timetable and mends it again: the counter store
// stopped, paused, slowed or killed and started again empty, or one replica killed
// (docs/faults.md). A load test arms one fault per scenario on its traffic's clock; anything
// else that sends traffic at a fleet can arm the same faults on its own.
//
//	a := fault.Arm(ctx, fl, fault.Plan{Fault: result.FaultKill, Member: fleet.ReplicaMember(7), At: 14 * time.Second, Until: 20 * time.Second}, origin, log)
//	… send traffic …
//	timing, err := a.Wait()
package fault

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

// The faults, as summary.json names them.
const (
	Stop        = result.FaultStop
	Pause       = result.FaultPause
	Slow        = result.FaultSlow
	Restart     = result.FaultRestart
	Kill        = result.FaultKill
	MasterKill  = result.FaultMasterKill
	MasterPause = result.FaultMasterPause

	Partition          = result.FaultPartition
	PartitionBlackhole = result.FaultPartitionBlackhole
	LinkSlow           = result.FaultLinkSlow
	Flap               = result.FaultFlap
)

// FlapPeriod is one round of a flap: the zone's link refuses for half of it and carries for
// the other half. A few hundred milliseconds: longer than a store call's timeout, so that
// calls fail, and short enough that a replica's reconnection and circuit breaker are caught
// between states again and again. Not scaled: it is about the network.
const FlapPeriod = 400 * time.Millisecond

// Drain is how long before a replica-kill the harness stops sending the replica new
// requests (RouteWindow): the requests it already has in flight, a millisecond or two, are
// answered before the SIGKILL instead of being cut off with it.
const Drain = 100 * time.Millisecond

// Plan is one fault on a timetable, in offsets from an origin.
type Plan struct {
	Fault  string // Stop, Pause, Slow, Restart, Kill, MasterKill or MasterPause
	Member string // the fleet member it hits (Member gives the usual one)
	// At is when the member is taken down, Until when it is brought back; a Restart is
	// brought back at once, whatever Until says.
	At, Until time.Duration
	// Delay is what Slow and LinkSlow add to every store reply.
	Delay time.Duration
	// Zone is the zone whose link a link fault (result.LinkFault) hits; its Member is
	// ZoneMember(Zone).
	Zone string
}

// ZoneMember names a zone's link as a fault's member: "zone-far".
func ZoneMember(zone string) string { return "zone-" + zone }

// Member is the member a fault hits in a fleet of replicas nodes: the store for the store
// faults, node 0 of a cluster store (a master when the cluster is made) for the master
// faults, and the last replica for Kill (not node 0, which peers that gossip, as
// gubernator's memberlist, may know as their seed).
func Member(f string, replicas int) string {
	switch f {
	case Kill:
		return fleet.ReplicaMember(replicas - 1)
	case MasterKill, MasterPause:
		return fleet.RedisNodeMember(0)
	}
	return fleet.RedisMember
}

// Store reports whether the fault hits the counter store (all but Kill).
func Store(f string) bool { return f != Kill }

// Check says what is wrong with the plan, if anything.
func (p Plan) Check() error {
	switch p.Fault {
	case Stop, Pause, Restart, Kill, MasterKill, MasterPause:
	case Slow, LinkSlow:
		if p.Delay <= 0 {
			return fmt.Errorf("fault %s needs a delay > 0 (got %v)", p.Fault, p.Delay)
		}
	case Partition, PartitionBlackhole, Flap:
	default:
		return fmt.Errorf("unknown fault %q: use %s, %s, %s, %s, %s, %s, %s, %s, %s, %s or %s", p.Fault, Stop, Pause, Slow, Restart, Kill, MasterKill, MasterPause,
			Partition, PartitionBlackhole, LinkSlow, Flap)
	}
	if result.LinkFault(p.Fault) && (p.Zone == "" || p.Member != ZoneMember(p.Zone)) {
		return fmt.Errorf("fault %s names zone %q and member %q: give the zone, and ZoneMember(zone) as its member", p.Fault, p.Zone, p.Member)
	}
	switch {
	case p.Member == "":
		return fmt.Errorf("fault %s names no fleet member", p.Fault)
	case p.At < 0 || p.Fault != Restart && p.Until <= p.At:
		return fmt.Errorf("fault %s from %v to %v: give 0 <= At < Until", p.Fault, p.At, p.Until)
	}
	return nil
}

// RouteWindow is when a replica-kill's replica gets no requests from the harness: from Drain
// before the kill until grace after it is started again. Fixed by the plan, not by what the
// replica does, so the same schedule is sent the same way on every run and every machine.
func (p Plan) RouteWindow(grace time.Duration) result.Interval {
	return result.Interval{From: max(0, p.At-Drain), To: p.Until + grace}
}

// steps are the fleet calls that take the plan's member down and bring it back.
func (p Plan) steps(fl fleet.Fleet) (down, up func(context.Context) error) {
	m := p.Member
	call := func(op func(context.Context, string) error) func(context.Context) error {
		return func(ctx context.Context) error { return op(ctx, m) }
	}
	switch p.Fault {
	case Pause, MasterPause:
		return call(fl.Pause), call(fl.Unpause)
	case Slow:
		return func(ctx context.Context) error { return fl.SlowStore(ctx, p.Delay) },
			func(ctx context.Context) error { return fl.SlowStore(ctx, 0) }
	case Restart, Kill:
		return call(fl.Kill), call(fl.Start)
	case Partition:
		return cut(fl, p.Zone, fleet.LinkRefused), cut(fl, p.Zone, fleet.LinkUp)
	case PartitionBlackhole:
		return cut(fl, p.Zone, fleet.LinkBlackhole), cut(fl, p.Zone, fleet.LinkUp)
	case LinkSlow:
		return func(ctx context.Context) error { return fl.SlowLink(ctx, p.Zone, p.Delay) },
			func(ctx context.Context) error { return fl.SlowLink(ctx, p.Zone, 0) }
	case Flap:
		return flap(fl, p.Zone)
	}
	return call(fl.Stop), call(fl.Start) // Stop, MasterKill
}

func cut(fl fleet.Fleet, zone, how string) func(context.Context) error {
	return func(ctx context.Context) error { return fl.CutLink(ctx, zone, how) }
}

// flap is a flap's two steps: down starts cutting zone's link (refused) and mending it every
// half FlapPeriod until up stops it and mends the link. A cut or mend that fails ends the
// flapping; up returns its error.
func flap(fl fleet.Fleet, zone string) (down, up func(context.Context) error) {
	stop, done := make(chan struct{}), make(chan error, 1)
	down = func(ctx context.Context) error {
		if err := fl.CutLink(ctx, zone, fleet.LinkRefused); err != nil {
			return err
		}
		go func() {
			t := time.NewTicker(FlapPeriod / 2)
			defer t.Stop()
			cutNow := false
			for {
				select {
				case <-stop:
					done <- nil
					return
				case <-t.C:
				}
				how := fleet.LinkUp
				if cutNow {
					how = fleet.LinkRefused
				}
				if err := fl.CutLink(context.WithoutCancel(ctx), zone, how); err != nil {
					done <- err
					return
				}
				cutNow = !cutNow
			}
		}()
		return nil
	}
	up = func(ctx context.Context) error {
		close(stop)
		err := <-done
		return errors.Join(err, fl.CutLink(ctx, zone, fleet.LinkUp))
	}
	return down, up
}

// Armed is a fault waiting for its time, under way, or over.
type Armed struct {
	plan   Plan
	origin time.Time
	done   chan struct{}
	timing result.FaultTiming
	err    error
	// back is the offset at which the member answered again, +1 so that zero is "not yet".
	back atomic.Int64
}

// mendTimeout bounds bringing the member back: a start waits for its health check.
const mendTimeout = time.Minute

// Arm runs the plan against fl in the background, its offsets counted from origin: the
// member goes down at origin+At and comes back at origin+Until. If ctx ends before At, no
// fault is made; if it ends during the fault, the member is brought back at once. Wait says
// what happened.
func Arm(ctx context.Context, fl fleet.Fleet, p Plan, origin time.Time, log *slog.Logger) *Armed {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Armed{plan: p, origin: origin, done: make(chan struct{})}
	a.timing = result.FaultTiming{Fault: p.Fault, Member: p.Member, Planned: result.Interval{From: p.At, To: p.Until}}
	if p.Fault == Slow || p.Fault == LinkSlow {
		a.timing.Delay = p.Delay
	}
	if p.Fault == Restart {
		a.timing.Planned.To = p.At
	}
	if err := p.Check(); err != nil {
		a.err = err
		a.timing.Error = err.Error()
		close(a.done)
		return a
	}
	go a.run(ctx, fl, log)
	return a
}

func (a *Armed) since() time.Duration { return time.Since(a.origin) }

func (a *Armed) run(ctx context.Context, fl fleet.Fleet, log *slog.Logger) {
	defer close(a.done)
	p := a.plan
	down, up := p.steps(fl)
	if !sleepUntil(ctx, a.origin.Add(p.At)) {
		a.fail(ErrNotMade)
		return
	}
	a.timing.Began = a.since()
	log.Info("fault begins", "fault", p.Fault, "member", p.Member, "at", a.timing.Began)
	if err := down(ctx); err != nil {
		a.fail(fmt.Errorf("take %s down: %w", p.Member, err))
		return
	}
	a.timing.Down = a.since()
	if p.Fault != Restart {
		sleepUntil(ctx, a.origin.Add(p.Until))
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mendTimeout)
	defer cancel()
	a.timing.Mending = a.since()
	if err := up(mctx); err != nil {
		a.fail(fmt.Errorf("bring %s back: %w", p.Member, err))
		return
	}
	a.timing.Back = a.since()
	a.back.Store(int64(a.timing.Back) + 1)
	log.Info("fault ends", "fault", p.Fault, "member", p.Member, "at", a.timing.Back, "down_for", a.timing.Back-a.timing.Began)
}

func (a *Armed) fail(err error) {
	a.err = err
	a.timing.Error = err.Error()
}

// Back is the offset at which the member answered again, once it has.
func (a *Armed) Back() (time.Duration, bool) {
	b := a.back.Load()
	return time.Duration(b - 1), b > 0
}

// Contains reports whether an outcome sent at offset t fell in the fault, as far as is
// known when it is asked: from the fault's time until grace after the member's return
// (open while it has not returned).
func (a *Armed) Contains(t, grace time.Duration) bool {
	if t < a.plan.At {
		return false
	}
	back, ok := a.Back()
	return !ok || t < back+grace
}

// Wait waits until the fault is over and returns its timing, and the error that kept it
// from being made or mended (the timing's Error says the same).
func (a *Armed) Wait() (result.FaultTiming, error) {
	<-a.done
	return a.timing, a.err
}

// Windows are the spans a finished fault is judged with: from its beginning to its return
// plus grace; with no return measured, to the end of a run of length end. Nil when the fault
// never began.
func Windows(t result.FaultTiming, grace, end time.Duration) []result.Interval {
	if t.Began <= 0 { // never begun: Began is measured after At, so > 0 once made
		return nil
	}
	to := end
	if t.Back > 0 {
		to = t.Back + grace
	}
	if to <= t.Began {
		to = t.Began + 1
	}
	return []result.Interval{{From: t.Began, To: to}}
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// ErrNotMade is Wait's error when the context ended before the fault's time.
var ErrNotMade = errors.New("not made: the run ended before the fault's time")
