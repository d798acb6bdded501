package limiters

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The local decision path of every algorithm × mode, beside x/time/rate's Allow in the same
// run. Central mode is measured on the in-memory store: its Redis round trip is measured by
// the harness, not here.
func BenchmarkDecision(b *testing.B) {
	ctx := context.Background()
	for _, r := range []Rule{
		{Name: "fixed", Algorithm: FixedWindow, Limit: 600, Window: time.Minute},
		{Name: "sliding", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12},
		{Name: "bucket", Algorithm: TokenBucket, Limit: 600, Window: time.Minute, Burst: 60},
	} {
		modes := []struct {
			name string
			lim  Limiter
		}{
			{"central", NewCentral(NewMemoryStore())},
			{"split", NewSplit(8)},
			{"delayed", NewDelayedSync(NewMemoryStore())},
		}
		for _, m := range modes {
			b.Run(string(r.Algorithm)+"/"+m.name, func(b *testing.B) {
				b.ReportAllocs()
				now := time.Unix(1_800_000_000, 0)
				for i := 0; b.Loop(); i++ {
					_, _ = m.lim.Allow(ctx, "client-42", &r, now.Add(time.Duration(i)*time.Microsecond))
				}
			})
		}
	}
	b.Run("x-time-rate/Allow", func(b *testing.B) {
		b.ReportAllocs()
		l := rate.NewLimiter(10, 60)
		for b.Loop() {
			l.Allow()
		}
	})
}
