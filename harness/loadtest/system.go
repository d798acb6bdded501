package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fault"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/harness/verdict"
	"github.com/edgeproof/rlharness/limiters"
)

// System is a system under test on a fleet of its own, for a caller that sends its own
// traffic (harness hunt): the built-in replica or a target file's limiter, started, sent to
// and faulted exactly as a load test's scenario is.
type System struct {
	cfg Config // the run's config as the system's scenarios use it (forTarget)
	sys sut
	sc  result.Scenario
	fl  fleet.Fleet
}

// StartSystem starts t (nil: the built-in replica running cfg's design, algorithm and mode)
// on a fleet from cfg's provider.
func StartSystem(ctx context.Context, cfg Config, t *target.Target) (*System, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	asked := cfg.Gates.LatenessP99
	cfg = cfg.forTarget(t, asked)
	cfg.Gates.LatenessP99 = cfg.latenessTolerance()
	s := &System{cfg: cfg, sys: sut{t: t}, sc: Scenarios(cfg.Algorithm, cfg.Mode, limiters.Design(cfg.Design), false, false)[0]}
	if t != nil {
		s.sc = result.Scenario{Name: t.Name, Algorithm: t.Algorithm, Target: t.Name}
	}
	provider, err := fleet.NewProvider(cfg.Provider, cfg.Logger, fleet.WithBinDir(cfg.BinDir))
	if err != nil {
		return nil, err
	}
	if s.fl, err = s.sys.start(ctx, provider, s.sys.spec(cfg, s.sc)); err != nil {
		return nil, fmt.Errorf("start the fleet of %s: %w", s.Name(), err)
	}
	return s, nil
}

// Name is the system's name: "replica" or the target file's.
func (s *System) Name() string {
	if s.sys.t == nil {
		return BuiltinTarget
	}
	return s.sys.t.Name
}

// Design is the built-in replica's delayed-sync design as the fleet runs it (its default
// when none was asked), empty for a target file's limiter and in other modes.
func (s *System) Design() string { return s.sc.Design }

// Conditions are the fleet's.
func (s *System) Conditions() result.Conditions { return s.fl.Conditions() }

// TimeScale is the run's time scale: the target's window over the documents' 60 s.
func (s *System) TimeScale() float64 { return s.cfg.Spec.TimeScale }

// Window is the clients' declared window at the run's time scale.
func (s *System) Window() time.Duration { return s.cfg.scaled(limiters.DefaultWindow) }

// Limit is the default class's declared limit.
func (s *System) Limit() int { return s.sys.classes()[0].Limit }

// ReplicaURLs are the replicas' base URLs, by replica index.
func (s *System) ReplicaURLs() []string { return s.fl.ReplicaURLs() }

// Replicas is how many replicas the fleet runs.
func (s *System) Replicas() int { return len(s.fl.ReplicaURLs()) }

// SyncInterval is how often the replicas sync with the store at the run's time scale, 0 when
// the system does not say (a target file without metrics.sync_interval).
func (s *System) SyncInterval() time.Duration {
	switch {
	case s.sys.t == nil && s.cfg.Mode == limiters.ModeDelayed:
		return s.cfg.scaled(s.cfg.SyncInterval)
	case s.sys.t != nil && s.sys.t.Metrics != nil:
		return s.sys.t.Metrics.SyncInterval
	}
	return 0
}

// Gates are the load test's gates, the lateness tolerance set for the time scale.
func (s *System) Gates() accounting.Gates { return s.cfg.Gates }

// Judging is what the system's scenarios are judged with before their fault: the gates, the
// window, sync interval and replicas, the shards, the store's timeout and wait, who owns a
// killed node's refusals, the recovery grace. A caller judging its own traffic (harness
// hunt) sets the fault and its outage and judges with verdict.Judge, as a scenario is.
func (s *System) Judging() verdict.Judging {
	return s.cfg.judging(s.sc, result.Interval{})
}

// Outage is how long a store fault keeps the store away, and RecoveryGrace how long after
// it the 1.1× gate applies again.
func (s *System) Outage() (outage, grace time.Duration) {
	return s.cfg.scaled(s.cfg.Outage), s.cfg.RecoveryGrace
}

// FarReplicas are the node indexes of the topology's farthest zone, the one a link fault
// hits (--zones, a target file's topology); nil without a topology.
func (s *System) FarReplicas() []int {
	if k := s.cfg.Zones.Farthest(); k >= 0 {
		return s.cfg.Zones.Members(k)
	}
	return nil
}

// Faultable says whether the harness runs the system's store, so that it can stop and pause
// it; why says why not.
func (s *System) Faultable() (ok bool, why string) {
	switch {
	case s.sys.t == nil:
		return true, ""
	case s.sys.t.Start.Kind == target.StartURL:
		return false, "the target was not started by the harness (start: url)"
	case !s.sys.t.Store.Managed:
		return false, "the harness does not run the target's store (store.redis is not managed)"
	}
	return true, ""
}

// Send sends sched at the fleet from start, exactly as a load test's scenario sends its
// schedule (the target's request shape, its statuses turned into the harness's 200 and 429),
// and with flt set arms that fault on the traffic's clock (harness/fault: the store stopped
// or paused over the fault's offsets) and returns its timing as measured. sink gets every
// outcome.
func (s *System) Send(ctx context.Context, sched *schedule.Schedule, start time.Time, flt *schedule.Fault, sink func(traffic.Outcome) error) (*result.FaultTiming, error) {
	opts := s.sys.options(sched)
	opts.Start = start
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var armed *fault.Armed // set on the origin, when the fault's clock starts
	if flt != nil {
		plan := fault.Plan{Fault: flt.Kind, Member: fault.Member(flt.Kind, s.Replicas()), At: flt.From, Until: flt.To}
		if result.LinkFault(flt.Kind) { // the farthest zone's link, as a load test's link fault
			plan.Zone = s.cfg.farZone()
			plan.Member = fault.ZoneMember(plan.Zone)
		}
		if err := plan.Check(); err != nil {
			return nil, err
		}
		opts.OnStart = func(origin time.Time) error {
			armed = fault.Arm(runCtx, s.fl, plan, origin, s.cfg.Logger)
			return nil
		}
	}
	_, err := traffic.Run(runCtx, sched, s.fl.ReplicaURLs(), opts, func(o traffic.Outcome) error {
		o.Code = s.sys.status(o.Code)
		return sink(o)
	})
	var timing *result.FaultTiming
	if armed != nil {
		// The fault ends on its own clock (the member back at its end, or at once when the
		// run stops early): wait for it.
		if err != nil {
			cancel()
		}
		t, ferr := armed.Wait()
		timing = &t
		if ferr != nil && !errors.Is(ferr, fault.ErrNotMade) && err == nil {
			err = fmt.Errorf("%s: %w", flt.Kind, ferr)
		}
	}
	if err != nil && ctx.Err() != nil {
		return timing, ctx.Err()
	}
	return timing, err
}

// Close tears the fleet down.
func (s *System) Close(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return s.fl.Terminate(tctx)
}
