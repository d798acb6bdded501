package accounting

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/edgeproof/rlharness/harness/result"
)

// Histogram bounds: microseconds from 1 µs to one hour, three significant digits (a relative
// error of at most 0.1 %).
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// Latency is a distribution of durations (latencies, lateness): an HDR histogram in the
// bounds above, a duration clamped into them, and the exact maximum beside it (the
// histogram's own is rounded). A duration below zero counts as zero. Every latency figure of
// a run, a bench step or a fault window is one. It is not safe for concurrent use.
type Latency struct {
	h   *hdrhistogram.Histogram
	max time.Duration
}

// NewLatency is an empty distribution.
func NewLatency() *Latency {
	return &Latency{h: hdrhistogram.New(histLowest, histHighest, histDigits)}
}

// Record adds d.
func (l *Latency) Record(d time.Duration) {
	d = max(d, 0)
	l.max = max(l.max, d)
	_ = l.h.RecordValue(min(max(int64(d/time.Microsecond), histLowest), histHighest)) // in range by construction
}

// Percentiles are the distribution's count, p50, p90, p99, p99.9 and exact maximum; zero
// when nothing was recorded.
func (l *Latency) Percentiles() result.Percentiles {
	if l.h.TotalCount() == 0 {
		return result.Percentiles{}
	}
	q := func(p float64) time.Duration { return time.Duration(l.h.ValueAtQuantile(p)) * time.Microsecond }
	return result.Percentiles{Count: l.h.TotalCount(), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: l.max}
}
