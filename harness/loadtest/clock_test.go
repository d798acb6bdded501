package loadtest

import (
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

func TestBestOffsetKeepsTheLeastRoundTrip(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ms := time.Millisecond
	// The reference is 40 ms ahead. The slow samples' replies sat in a queue: halving their
	// round trip would misplace the reading; the 2 ms sample bounds the error to ±1 ms.
	samples := []clockSample{
		{before: t0, ref: t0.Add(40*ms + 3*ms), after: t0.Add(20 * ms)},
		{before: t0.Add(100 * ms), ref: t0.Add(100*ms + 40*ms + 1*ms), after: t0.Add(102 * ms)},
		{before: t0.Add(200 * ms), ref: t0.Add(200*ms + 40*ms + 9*ms), after: t0.Add(210 * ms)},
	}
	off, rtt, ok := bestOffset(samples)
	if !ok || off != 40*ms || rtt != 2*ms {
		t.Fatalf("offset %v rtt %v ok %v, want 40ms from the 2ms sample", off, rtt, ok)
	}
	if _, _, ok := bestOffset(nil); ok {
		t.Error("an offset from no samples")
	}
}

func TestClockSkewMarksARunBeyondTheLatenessTolerance(t *testing.T) {
	ms := time.Millisecond
	shard := func(i int, host string, off, rtt time.Duration, known bool) result.Shard {
		m := result.Shard{Shard: i, Host: host}
		if known {
			m.ClockOffset = &result.ClockOffset{Offset: off, RTT: rtt}
		}
		return m
	}
	tests := []struct {
		name     string
		shards   []result.Shard
		tol      time.Duration
		max      time.Duration
		measured bool
		exceeded bool
	}{
		{"three hosts within tolerance", []result.Shard{shard(0, "a", 3*ms, 2*ms, true), shard(1, "b", -4*ms, 2*ms, true), shard(2, "c", 1*ms, 4*ms, true)},
			20 * ms, 7*ms + 1*ms + 1*ms, true, false}, // a and b: 7 ms apart ± 1 ms each
		{"a host 25 ms behind at 20 ms tolerance", []result.Shard{shard(0, "a", 0, 2*ms, true), shard(1, "b", 25*ms, 2*ms, true)},
			20 * ms, 27 * ms, true, true},
		{"wide round trips push a close pair over", []result.Shard{shard(0, "a", 0, 20*ms, true), shard(1, "b", 12*ms, 20*ms, true)},
			20 * ms, 32 * ms, true, true},
		{"one host shares one clock", []result.Shard{shard(0, "a", 0, 0, false), shard(1, "a", 0, 0, false)},
			20 * ms, 0, true, false},
		{"one host, offsets measured apart, still one clock", []result.Shard{shard(0, "a", 0, 1*ms, true), shard(1, "a", 30*ms, 1*ms, true)},
			20 * ms, 0, true, false},
		{"two hosts, one unmeasured: unbounded", []result.Shard{shard(0, "a", 0, 1*ms, true), shard(1, "b", 0, 0, false)},
			20 * ms, 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sk := clockSkew(tc.shards, tc.tol)
			if sk.Max != tc.max || sk.Measured != tc.measured || sk.Exceeded != tc.exceeded || len(sk.Offsets) != len(tc.shards) {
				t.Errorf("skew %+v, want max %v measured %v exceeded %v", sk, tc.max, tc.measured, tc.exceeded)
			}
		})
	}
}
