package bench

import (
	"context"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/limiters"
)

// RateName names x/time/rate's Allow among the decision benchmarks.
const RateName = "x-time-rate/Allow"

type decisionCase struct {
	name string
	f    func(b *testing.B)
}

// decisionCases are the local decision path of every algorithm × mode (the document's rule,
// HS3, HS7, HS8), the same as limiters' BenchmarkDecision, so `go test -bench` and the
// harness measure one thing. Central mode runs on the in-memory store: its Redis round trip
// is the fleet's figure, not this one.
func decisionCases() []decisionCase {
	ctx := context.Background()
	var out []decisionCase
	for _, r := range []limiters.Rule{
		{Name: "fixed", Algorithm: limiters.FixedWindow, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow},
		{Name: "sliding", Algorithm: limiters.SlidingWindow, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Slices: limiters.DefaultSlices},
		{Name: "bucket", Algorithm: limiters.TokenBucket, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Burst: limiters.DefaultBurst},
	} {
		for _, m := range []struct {
			mode limiters.Mode
			new  func() limiters.Limiter
		}{
			{limiters.ModeCentral, func() limiters.Limiter { return limiters.NewCentral(limiters.NewMemoryStore()) }},
			{limiters.ModeSplit, func() limiters.Limiter { return limiters.NewSplit(limiters.DefaultNodes) }},
			{limiters.ModeDelayed, func() limiters.Limiter { return limiters.NewDelayedSync(limiters.NewMemoryStore()) }},
		} {
			out = append(out, decisionCase{string(r.Algorithm) + "/" + string(m.mode), func(b *testing.B) {
				b.ReportAllocs()
				lim := m.new()
				now := time.Unix(1_800_000_000, 0)
				for i := 0; b.Loop(); i++ {
					_, _ = lim.Allow(ctx, "client-42", &r, now.Add(time.Duration(i)*time.Microsecond))
				}
			}})
		}
	}
	out = append(out, decisionCase{RateName, func(b *testing.B) {
		b.ReportAllocs()
		l := rate.NewLimiter(10, 60)
		for b.Loop() {
			l.Allow()
		}
	}})
	return out
}

// Rounds and length of the decision benchmarks: every case runs in each round, the rounds
// interleaved, and the fastest round counts, so a neighbour's burst on a shared machine
// slows one round of one case rather than the ratio.
const (
	decisionRounds = 3
	decisionTime   = "300ms"
)

var initBench sync.Once

// Decisions runs every decision benchmark in this process and reports each one's cost
// beside x/time/rate's Allow from the same run. only, when not empty, keeps the cases
// whose name contains it (x/time/rate always runs).
func Decisions(only string) []result.DecisionCost {
	initBench.Do(func() {
		// testing.Benchmark reads -test.benchtime; outside `go test` it must be registered.
		testing.Init()
		_ = flag.Set("test.benchtime", decisionTime)
	})
	var cases []decisionCase
	for _, c := range decisionCases() {
		if only == "" || c.name == RateName || strings.Contains(c.name, only) {
			cases = append(cases, c)
		}
	}
	out := make([]result.DecisionCost, len(cases))
	for round := range decisionRounds {
		for i, c := range cases {
			r := testing.Benchmark(c.f)
			if r.N == 0 {
				continue
			}
			ns := float64(r.T.Nanoseconds()) / float64(r.N)
			if round == 0 || ns < out[i].NsPerOp {
				out[i] = result.DecisionCost{Name: c.name, NsPerOp: ns, N: r.N, AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp()}
			}
		}
	}
	var rateNs float64
	for _, d := range out {
		if d.Name == RateName {
			rateNs = d.NsPerOp
		}
	}
	for i := range out {
		if rateNs > 0 {
			out[i].VsRate = out[i].NsPerOp / rateNs
		}
	}
	return out
}
