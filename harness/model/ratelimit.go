package model

import (
	"context"
	"fmt"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// The rate-limiter document's assumptions (000, HS1–HS8) and the models' fixed inputs.
const (
	TrackedClients = 200_000                      // HS1
	PeakRate       = 40_000                       // HS2: requests/s at the edge
	Limit          = limiters.DefaultLimit        // HS3: requests per window
	Window         = limiters.DefaultWindow       // HS3
	Nodes          = limiters.DefaultNodes        // HS4
	SyncInterval   = limiters.DefaultSyncInterval // HS5
	RecordBytes    = 48                           // HS6
	Slices         = limiters.DefaultSlices       // HS7
	Burst          = limiters.DefaultBurst        // HS8
	OvershootGate  = accounting.OvershootLimit    // requirement 1: at most 1.1 × the limit
	DistSeed       = 20260730                     // dagitik.mjs: node assignment seed
)

// Rule returns the document's rule for an algorithm: 600 per 60 s, 12 slices, 60 tokens.
func Rule(a limiters.Algorithm) limiters.Rule {
	return limiters.Rule{Name: string(a), Algorithm: a, Limit: Limit, Window: Window, Slices: Slices, Burst: Burst}
}

// Sizing is olcek.mjs: the order-of-magnitude figures that follow from HS1–HS8.
type Sizing struct {
	PerNodePeak    float64        `json:"per_node_peak_rps"`
	CentralTouches float64        `json:"central_touches_per_s"`
	ClientRate     float64        `json:"client_limit_per_s"`
	Layouts        []SizingLayout `json:"layouts"`
	UnseenPerNode  float64        `json:"unseen_per_node_per_sync"`
	BlindCeiling   float64        `json:"blind_ceiling"`
	Threshold      float64        `json:"threshold"`
	LimitPlusBlind float64        `json:"limit_plus_blind_ceiling"`
	Passes         bool           `json:"passes"`
}

// SizingLayout is one counter layout's memory for all tracked clients.
type SizingLayout struct {
	Algorithm limiters.Algorithm `json:"algorithm"`
	PerClient int                `json:"records_per_client"`
	TotalMB   float64            `json:"total_mb"`
}

// RunSizing computes the sizing table; records per client come from the limiters' own rules.
func RunSizing() Sizing {
	s := Sizing{
		PerNodePeak:    float64(PeakRate) / Nodes,
		CentralTouches: PeakRate,
		ClientRate:     float64(Limit) / Window.Seconds(),
	}
	for _, a := range []limiters.Algorithm{limiters.FixedWindow, limiters.TokenBucket, limiters.SlidingWindow} {
		n := Rule(a).Counters()
		s.Layouts = append(s.Layouts, SizingLayout{Algorithm: a, PerClient: n,
			TotalMB: float64(TrackedClients*n*RecordBytes) / 1e6})
	}
	s.UnseenPerNode = s.PerNodePeak * SyncInterval.Seconds()
	s.BlindCeiling = Rule(limiters.SlidingWindow).BlindCeiling(SyncInterval, Nodes)
	s.Threshold = Limit * OvershootGate
	s.LimitPlusBlind = Limit + s.BlindCeiling
	s.Passes = s.LimitPlusBlind <= s.Threshold
	return s
}

// RunWindows is pencere.mjs: three patterns over 180 s against each algorithm on one node.
// The model's request times are whole milliseconds, so the project's patterns (nanosecond
// offsets) are truncated to the millisecond here; at time scale 1 that gives the model's
// times exactly.
func RunWindows() ([]result.WindowRow, error) {
	patterns := []struct {
		name string
		gen  func(schedule.Params) (schedule.Schedule, error)
	}{
		{schedule.PatternUniform2x, schedule.Uniform2x},
		{schedule.PatternBoundary, schedule.BoundaryBurst},
		{schedule.PatternIntermittent, schedule.IntermittentAtLimit},
	}
	epoch := time.Unix(0, 0)
	var rows []result.WindowRow
	for _, p := range patterns {
		s, err := p.gen(schedule.Params{Limit: Limit, Window: Window, Scale: 1})
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", p.name, err)
		}
		for _, a := range []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingWindow, limiters.TokenBucket} {
			rule := Rule(a)
			lim := limiters.NewLocal()
			var accepted []time.Duration
			for _, r := range s.Requests {
				at := r.At.Truncate(time.Millisecond)
				if lim.Take("probe", &rule, epoch.Add(at)).Allowed {
					accepted = append(accepted, at)
				}
			}
			busiest := accounting.Busiest(accepted, Window)
			rows = append(rows, result.WindowRow{Pattern: p.name, Requests: len(s.Requests), Algorithm: string(a),
				Accepted: len(accepted), Rejected: len(s.Requests) - len(accepted), Busiest: busiest,
				Overshoot: busiest - Limit, Ratio: float64(busiest) / Limit})
		}
	}
	return rows, nil
}

// RunDistributed is dagitik.mjs's kos: one client sending rate requests/s for one window,
// each request to a node drawn by the document's generator, under one mode of 8 nodes.
//
// Model settings (the algorithm is the project's; only the driving differs from a replica):
//   - the rule is the document's sliding window; every request falls inside one window, as
//     the model's single counter assumes;
//   - delayed sync: the nodes are the project's DelayedSync, each pulling the view of every
//     client it tracks (limiters.FullView); the model syncs all of them at one instant, on
//     the first request at least one interval after the last sync, and every node's push is
//     in the store before any view is read (lockstep);
//   - touches for delayed sync are what the nodes' sync timers cost, as the document counts
//     them: a fleet of DelayedSync nodes, each holding the client, synced every interval for
//     one window, each counting its own exchanges (timerTouches). The run's own syncs, on
//     requests, are RunExchanges.
func RunDistributed(mode limiters.Mode, rate int, interval float64, seed uint32) (result.DistRow, error) {
	row, _, err := runDistributed(mode, rate, interval, seed)
	return row, err
}

// runDistributed is RunDistributed, and the store exchanges its delayed-sync nodes made.
func runDistributed(mode limiters.Mode, rate int, interval float64, seed uint32) (result.DistRow, int64, error) {
	ctx := context.Background()
	rule := Rule(limiters.SlidingWindow)
	rnd := NewLCG(seed)
	n := rate * int(Window.Seconds())
	store := limiters.NewMemoryStore()
	fleet := newLockstep(Nodes)
	nodes := make([]limiters.Limiter, Nodes)
	for i := range nodes {
		switch mode {
		case limiters.ModeCentral:
			nodes[i] = limiters.NewCentral(store)
		case limiters.ModeSplit:
			nodes[i] = limiters.NewSplit(Nodes)
		case limiters.ModeDelayed:
			nodes[i] = fleet.nodes[i]
		default:
			return result.DistRow{}, 0, fmt.Errorf("unknown mode %q (want central, split or delayed)", mode)
		}
	}
	epoch := time.Unix(0, 0)
	row := result.DistRow{ClientRate: rate, Mode: string(mode), Requests: n}
	lastSync := 0.0
	for i := range n {
		t := float64(i) / float64(rate)
		d := rnd.Intn(Nodes)
		now := epoch.Add(time.Duration(int64(i) * int64(time.Second) / int64(rate)))
		if mode == limiters.ModeDelayed && t-lastSync >= interval {
			lastSync = t
			if err := fleet.sync(ctx, now); err != nil {
				return result.DistRow{}, 0, err
			}
		}
		dec, err := nodes[d].Allow(ctx, "client", &rule, now)
		if err != nil {
			return result.DistRow{}, 0, err
		}
		if dec.Allowed {
			row.Accepted++
		} else {
			row.Rejected++
		}
	}
	row.Overshoot = max(0, row.Accepted-Limit)
	if n <= Limit {
		row.FalseRejects = row.Rejected
	}
	switch mode {
	case limiters.ModeCentral:
		row.Touches = store.Touches()
	case limiters.ModeDelayed:
		row.SyncInterval = interval
		// The document counts what the nodes' sync timers cost over the window (dagitik.mjs:
		// DUGUM × ⌊PENCERE / aralik⌋); the nodes count it themselves, on a timer. The run's
		// own syncs fall on requests (fleet.touches(), see TestDelayedSyncExchanges).
		t, err := timerTouches(ctx, Nodes, &rule, Window, time.Duration(interval*float64(time.Second)))
		if err != nil {
			return result.DistRow{}, 0, fmt.Errorf("delayed sync's timer: %w", err)
		}
		row.Touches = t
		row.RunExchanges = fleet.touches()
	}
	row.TouchesPerSec = float64(row.Touches) / Window.Seconds()
	row.Ratio = float64(row.Accepted) / Limit
	row.Passes = float64(row.Accepted) <= Limit*OvershootGate
	return row, fleet.touches(), nil
}

// RateLimit holds every table of the rate-limiter document.
type RateLimit struct {
	Sizing      Sizing             `json:"sizing"`
	Windows     []result.WindowRow `json:"windows"`
	Distributed []result.DistRow   `json:"distributed"`
	SyncSweep   []result.DistRow   `json:"sync_sweep"`
}

// Figures are the tables a load test is judged beside, as its summary saves them.
func (m RateLimit) Figures() result.RateLimitModel {
	return result.RateLimitModel{Gate: OvershootGate, Windows: m.Windows, Distributed: m.Distributed}
}

// RunRateLimit runs every model of the rate-limiter document.
func RunRateLimit() (RateLimit, error) {
	var out RateLimit
	var err error
	out.Sizing = RunSizing()
	if out.Windows, err = RunWindows(); err != nil {
		return out, err
	}
	for _, rate := range []int{10, 90} {
		for _, mode := range limiters.Modes() {
			row, err := RunDistributed(mode, rate, SyncInterval.Seconds(), DistSeed)
			if err != nil {
				return out, err
			}
			out.Distributed = append(out.Distributed, row)
		}
	}
	for _, iv := range []float64{0.2, 1, 2, 5} {
		row, err := RunDistributed(limiters.ModeDelayed, 90, iv, DistSeed)
		if err != nil {
			return out, err
		}
		out.SyncSweep = append(out.SyncSweep, row)
	}
	return out, nil
}
