package result

import (
	"math"
	"time"
)

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// noopTarget is the fleet's name of the no-op target (fleet.TargetNoop), which a result
// file's reader cannot import.
const noopTarget = "noop"

// SliceRow is one system of a slice (harness bench --slice) side by side with the others:
// what its steady run achieved and cost, its ceiling, and its latency over the no-op
// replica's. A figure that was not measured is NaN.
type SliceRow struct {
	System string
	// Nodes is what being one node of the fleet means to the system.
	Nodes    string
	Asked    float64
	Achieved float64
	// Sustained says the steady run kept its schedule without errors; Why says why not.
	Sustained bool
	Why       string
	Ceiling   float64
	// Capped: the search stopped while still climbing (Climbing), so the ceiling is at least
	// that; Generator: the ceiling is within the generator-bound margin of the no-op
	// replica's (bound), so it is the generator's.
	Capped, Generator bool
	// P99Ms and P999Ms are the steady run's latency percentiles, in ms.
	P99Ms, P999Ms float64
	// AddedP99Ms is the steady run's p99 less the no-op replica's (one run each), in ms.
	AddedP99Ms float64
	// CPUPerDecisionUs is the replica process's CPU per answered request (/proc), VsNoop
	// over the no-op replica's.
	CPUPerDecisionUs, VsNoop float64
	// RedisCPUPerRequestUs is Redis's CPU per answered request (INFO cpu), RedisBusy that
	// CPU as a share of the share of a core Redis was held to.
	RedisCPUPerRequestUs, RedisBusy float64
	// RoundTrips are the store commands sent per answered request (scripts' inner ones not
	// counted).
	RoundTrips float64
	// RSSPerClient and RedisPerClient are the replica's resident memory and Redis's
	// used_memory grown over the run, per distinct client sent.
	RSSPerClient, RedisPerClient float64
	// GeneratorUs is this process's CPU per request sent (the harness's sender).
	GeneratorUs float64
}

// Rows are the systems side by side, in the order they were measured.
func (s *SliceBench) Rows() []SliceRow {
	nan := math.NaN()
	var noop *FleetBench
	for i := range s.Systems {
		if s.Systems[i].Conditions.Target == noopTarget {
			noop = &s.Systems[i]
		}
	}
	var out []SliceRow
	for i := range s.Systems {
		f := &s.Systems[i]
		r := SliceRow{System: f.Name, Nodes: f.Nodes, Asked: s.Rate, Achieved: nan, Ceiling: f.Ceiling, Capped: Climbing(*f),
			P99Ms: nan, P999Ms: nan, AddedP99Ms: nan, CPUPerDecisionUs: nan, VsNoop: nan, RedisCPUPerRequestUs: nan, RedisBusy: nan,
			RoundTrips: nan, RSSPerClient: nan, RedisPerClient: nan, GeneratorUs: nan, Why: f.Error}
		if noop != nil && f != noop && !Climbing(*noop) {
			r.Generator = GeneratorBound(f.Ceiling, noop.Ceiling)
		}
		if st := f.Steady; st != nil {
			r.Asked, r.Achieved, r.Sustained, r.Why = st.Rate, st.Achieved, st.Sustained, st.Why
			r.P99Ms, r.P999Ms = millis(st.Latency.P99), millis(st.Latency.P999)
			if noop != nil && noop.Steady != nil {
				r.AddedP99Ms = millis(st.Latency.P99 - noop.Steady.Latency.P99)
			}
			if f.Conditions.Target != noopTarget && f.Error == "" {
				r.RoundTrips = f.StoreCmdPerRequest
			}
		}
		if c := f.Replica; c != nil {
			r.CPUPerDecisionUs, r.RSSPerClient = c.CPUPerRequestUs, c.RSSPerClient
			if noop != nil && noop.Replica != nil && noop.Replica.CPUPerRequestUs > 0 {
				r.VsNoop = c.CPUPerRequestUs / noop.Replica.CPUPerRequestUs
			}
		}
		if c := f.StoreCPU; c != nil {
			r.RedisCPUPerRequestUs = c.MsPerKiloRequest // ms per 1,000 requests is µs per request
			if s.StoreCPU > 0 {
				r.RedisBusy = c.Percent / 100 / s.StoreCPU
			}
		}
		if m := f.StoreMemory; m != nil {
			r.RedisPerClient = m.PerClient
		}
		if g := f.Generator; g != nil {
			r.GeneratorUs = g.CPUPerRequestUs
		}
		out = append(out, r)
	}
	return out
}

// Climbing says a ceiling search stopped while every step it sent was sustained: at its
// maximum rate (Capped) or at its last step, so its ceiling is only a lower bound.
func Climbing(f FleetBench) bool {
	if f.Capped {
		return true
	}
	if len(f.Steps) == 0 {
		return false
	}
	for _, st := range f.Steps {
		if !st.Sustained {
			return false
		}
	}
	return true
}
