package hunt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/synchealth"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// Defaults of a hunt.
const (
	// DefaultMaxRate is the burst rate asked of the generator: on two shared cores, with the
	// fleet beside it, it keeps this pace within the lateness tolerance.
	DefaultMaxRate = 1500
	DefaultBudget  = 10 * time.Minute
	// DefaultRequests bounds what one system is sent.
	DefaultRequests = 1_000_000
	DefaultCoarse   = 12
	DefaultLevels   = 2
)

// RunConfig is harness hunt as the command line asks for it: the fleet and its gates as
// harness loadtest takes them (Load), and the search's budget.
type RunConfig struct {
	// Load is the load test's config: provider, network, replicas, time scale, sync
	// interval, design, outage, recovery grace, gates, and Targets, each hunted in turn
	// (nil or none: the built-in replica).
	Load     loadtest.Config
	Budget   time.Duration // per system, from its fleet being up
	Requests int           // per system
	MaxRate  float64
	Seed     uint64
	// Families names the families to hunt with; empty is every one.
	Families []string
	Coarse   int
	Levels   int
	// Pressure is the pressure ladder's top level (0: none), PressureShare the factor each
	// level puts on an attack's bursts, PressureRequests the size of a pressure round
	// (Config.PressureRequests).
	Pressure         int
	PressureShare    float64
	PressureRequests int
	// Fault is the fault rounds' store fault: result.FaultStop (default) or FaultPause, or
	// on a topology FaultPartition or FaultPartitionBlackhole (the farthest zone cut from the
	// store); "none" runs no fault round.
	Fault    string
	OutDir   string
	Commit   string
	Progress io.Writer
}

// FaultNone turns the fault rounds off.
const FaultNone = "none"

func (rc *RunConfig) check() ([]Family, error) {
	if rc.Progress == nil {
		rc.Progress = io.Discard
	}
	switch rc.Fault {
	case "":
		rc.Fault = result.FaultStop
	case result.FaultStop, result.FaultPause, FaultNone:
	case result.FaultPartition, result.FaultPartitionBlackhole:
		if rc.Load.Zones.IsZero() && !slices.ContainsFunc(rc.Load.Targets, func(t *target.Target) bool { return t != nil && !t.Topology.IsZero() }) {
			return nil, fmt.Errorf("--fault %s cuts the farthest zone from the store: give the zones (--zones, --topology or a target file's topology:)", rc.Fault)
		}
	default:
		return nil, fmt.Errorf("--fault %q: use %s, %s, on a topology %s or %s, or %s", rc.Fault, result.FaultStop, result.FaultPause,
			result.FaultPartition, result.FaultPartitionBlackhole, FaultNone)
	}
	if err := schedule.CheckTimeScale(rc.Load.Spec.TimeScale); err != nil {
		return nil, err
	}
	if !(rc.MaxRate > 0) {
		return nil, fmt.Errorf("--max-rate must be > 0 requests/s (got %v)", rc.MaxRate)
	}
	all := Families()
	if len(rc.Families) == 0 {
		return DefaultFamilies(), nil
	}
	var out []Family
	for _, name := range rc.Families {
		i := slices.IndexFunc(all, func(f Family) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("--families: no family %q; the families are %s", name, strings.Join(FamilyNames(), ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Run hunts every target in turn, each on a fleet of its own, and writes hunt.json (after
// every system, so that a run cut short keeps what it found) and the schedule files.
func Run(ctx context.Context, rc RunConfig) (result.Hunt, error) {
	fams, err := rc.check()
	if err != nil {
		return result.Hunt{}, err
	}
	targets := rc.Load.Targets
	if len(targets) == 0 {
		targets = []*target.Target{nil}
	}
	h := result.Hunt{StartedAt: time.Now().UTC(), Commit: rc.Commit, Cores: runtime.NumCPU(),
		Config: result.HuntConfig{Provider: rc.Load.Provider, Network: rc.Load.Network, Budget: rc.Budget, Requests: rc.Requests,
			MaxRate: rc.MaxRate, Seed: rc.Seed, Coarse: rc.Coarse, Levels: rc.Levels,
			Pressure: rc.Pressure, PressureShare: rc.PressureShare, PressureRequests: rc.PressureRequests}}
	for _, f := range fams {
		h.Config.Families = append(h.Config.Families, f.Name)
	}
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		sys, err := huntSystem(ctx, rc, fams, t)
		h.Systems = append(h.Systems, sys)
		if err != nil && ctx.Err() == nil {
			h.Systems[len(h.Systems)-1].Error = err.Error()
		}
		Verdict(&h)
		if werr := result.Write(rc.OutDir, result.HuntFile, h); werr != nil {
			return h, werr
		}
	}
	h.Interrupted = ctx.Err() != nil
	h.FinishedAt = time.Now().UTC()
	Verdict(&h)
	return h, result.Write(rc.OutDir, result.HuntFile, h)
}

// Verdict judges the hunt (result.Hunt.Settle): it fails when a family broke a promise on
// traffic sent on schedule; it is not made when a system could not be hunted and none did,
// generator-bound when nothing broke and some family has no variant sent on schedule.
func Verdict(h *result.Hunt) { h.Settle() }

// systemName is the system and, for the built-in replica, its design.
func systemName(s result.HuntSystem) string { return s.Label() }

// dirName is a system's directory under the run directory.
func dirName(s result.HuntSystem) string {
	n := s.System
	if s.Design != "" {
		n += "-" + s.Design
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, n)
}

// liveSender sends a round at a started system; metrics, when set, reads the built-in
// replica's store load from every replica.
type liveSender struct {
	sys     *loadtest.System
	metrics *http.Client
}

// StoreLoad sums every replica's store calls that timed out and decisions made without the
// store, from its metrics; ok is false for a system whose metrics the hunt does not read (a
// target file's).
func (l liveSender) StoreLoad() (StoreLoad, bool, error) {
	if l.metrics == nil {
		return StoreLoad{}, false, nil
	}
	load, err := readStoreLoad(l.metrics, l.sys.ReplicaURLs())
	return load, err == nil, err
}

// readStoreLoad reads the built-in replica's metrics at every base URL and sums its store
// calls that timed out (exchanges and decisions; an exchange's timeout is counted once,
// though both its counters have it) and its decisions made without the store.
func readStoreLoad(c *http.Client, urls []string) (StoreLoad, error) {
	names := synchealth.Replica()
	var sum StoreLoad
	for _, u := range urls {
		resp, err := c.Get(u + names.Path)
		if err != nil {
			return sum, fmt.Errorf("read %s%s: %w", u, names.Path, err)
		}
		s, err := synchealth.Parse(resp.Body, names, 0)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if err != nil {
			return sum, fmt.Errorf("%s%s: %w", u, names.Path, err)
		}
		sum.Timeouts += max(s.TimedOut, s.ErrTimeout) + s.TakeTimeout
		if s.Degraded != nil {
			sum.Degraded += *s.Degraded
		}
	}
	return sum, nil
}

func (l liveSender) Send(ctx context.Context, r *Round, start time.Time, sink func(traffic.Outcome) error) (*result.FaultTiming, error) {
	return l.sys.Send(ctx, &r.Schedule, start, r.Fault, sink)
}

// huntSystem starts one system, hunts it and tears it down.
func huntSystem(ctx context.Context, rc RunConfig, fams []Family, t *target.Target) (result.HuntSystem, error) {
	out := result.HuntSystem{System: loadtest.BuiltinTarget, Design: rc.Load.Design}
	if t != nil {
		out = result.HuntSystem{System: t.Name, TargetFile: t.File}
	}
	fmt.Fprintf(rc.Progress, "== hunt %s\n", systemName(out))
	sys, err := loadtest.StartSystem(ctx, rc.Load, t)
	if err != nil {
		return out, err
	}
	defer func() {
		if err := sys.Close(ctx); err != nil {
			fmt.Fprintf(rc.Progress, "   fleet teardown: %v\n", err)
		}
	}()
	out.Design = sys.Design()
	outage, grace := sys.Outage()
	cfg := Config{
		System: sys.Name(), Design: out.Design, TimeScale: sys.TimeScale(),
		Env: Env{Limit: sys.Limit(), Window: sys.Window(), Slices: limiters.DefaultSlices, Replicas: sys.Replicas(),
			Interval: sys.SyncInterval(), MaxRate: rc.MaxRate, Grace: grace, Far: sys.FarReplicas()},
		Families: fams, Budget: rc.Budget, Requests: rc.Requests, Coarse: rc.Coarse, Levels: rc.Levels, Seed: rc.Seed,
		Pressure: rc.Pressure, PressureShare: rc.PressureShare, PressureRequests: rc.PressureRequests,
		Fault: rc.Fault, Outage: outage, Gates: sys.Gates(), Judging: sys.Judging(),
		OutDir: filepath.Join(rc.OutDir, dirName(out)), RunDir: rc.OutDir, Progress: rc.Progress,
	}
	if rc.Fault == FaultNone {
		cfg.Fault, cfg.NoFault = "", "--fault none"
	} else if ok, why := sys.Faultable(); !ok {
		cfg.Fault, cfg.NoFault = "", why
	} else if result.LinkFault(rc.Fault) && len(cfg.Env.Far) == 0 {
		cfg.Fault, cfg.NoFault = "", rc.Fault+" needs a topology, and "+sys.Name()+" runs on none"
	}
	snd := liveSender{sys: sys}
	if t == nil {
		snd.metrics = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	got, err := Hunt(ctx, cfg, snd)
	got.Conditions, got.TargetFile = sys.Conditions(), out.TargetFile
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = nil
	}
	return got, err
}
