package loadtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/result"
)

// clockSamples is how many TIME round trips a shard makes; the one of least round trip is
// kept, since its halved RTT bounds the error best.
const clockSamples = 9

// clockSample is one exchange with the reference: the local clock before and after, and the
// reference's reading in between.
type clockSample struct {
	before, ref, after time.Time
}

// bestOffset is the offset of the sample of least round trip: reference − local clock at the
// round trip's midpoint. The true offset lies within ±RTT/2 of it.
func bestOffset(samples []clockSample) (offset, rtt time.Duration, ok bool) {
	if len(samples) == 0 {
		return 0, 0, false
	}
	best := slices.MinFunc(samples, func(a, b clockSample) int {
		return int(a.after.Sub(a.before) - b.after.Sub(b.before))
	})
	rtt = best.after.Sub(best.before)
	return best.ref.Sub(best.before.Add(rtt / 2)), rtt, true
}

// MeasureClockOffset measures this machine's clock against Redis's TIME (microseconds) at
// addr, the reference every shard of a run reads: several samples, RTT/2 correction, the
// sample of least round trip kept.
func MeasureClockOffset(ctx context.Context, addr string, now func() time.Time) (result.ClockOffset, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: 1, DialTimeout: 2 * time.Second, ReadTimeout: time.Second})
	defer rdb.Close()
	samples := make([]clockSample, 0, clockSamples)
	for range clockSamples {
		before := now()
		ref, err := rdb.Time(ctx).Result()
		after := now()
		if err != nil {
			return result.ClockOffset{}, fmt.Errorf("read the clock reference (redis TIME at %s): %w; give --clock-ref a Redis every shard reaches, or none", addr, err)
		}
		samples = append(samples, clockSample{before: before, ref: ref, after: after})
	}
	off, rtt, _ := bestOffset(samples)
	return result.ClockOffset{Reference: "redis TIME " + addr, Offset: off, RTT: rtt, Samples: len(samples), MeasuredAt: now().UTC()}, nil
}

// clockSkew reads the shards' offsets: the largest difference between two of them, widened
// by both measurements' uncertainty. Shards on one host share one clock; shards on several
// hosts without an offset each leave the skew unbounded (Measured false, Exceeded true).
func clockSkew(shards []result.Shard, tolerance time.Duration) result.ClockSkew {
	sk := result.ClockSkew{Tolerance: tolerance, Measured: true}
	hosts := map[string]bool{}
	var known []result.ShardOffset
	for _, m := range shards {
		o := result.ShardOffset{Shard: m.Shard, Host: m.Host}
		if m.ClockOffset != nil {
			o.Offset, o.RTT, o.Known = m.ClockOffset.Offset, m.ClockOffset.RTT, true
			known = append(known, o)
		}
		hosts[m.Host] = true
		sk.Offsets = append(sk.Offsets, o)
	}
	if len(known) < len(shards) && len(hosts) > 1 {
		sk.Measured, sk.Exceeded = false, true
		return sk
	}
	for i, a := range known {
		for _, b := range known[i+1:] {
			if a.Host == b.Host {
				continue // one clock: whatever their measurements say, the shards share it
			}
			d := a.Offset - b.Offset
			sk.Max = max(sk.Max, max(d, -d)+a.RTT/2+b.RTT/2)
		}
	}
	sk.Exceeded = sk.Max > tolerance
	return sk
}
