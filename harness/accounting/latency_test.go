package accounting

import (
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

func TestLatency(t *testing.T) {
	const top = 3_600_809_983 * time.Microsecond
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want result.Percentiles
	}{
		{"empty", nil, result.Percentiles{}},
		{"one", []time.Duration{1500 * time.Microsecond}, result.Percentiles{Count: 1, P50: 1500 * time.Microsecond, P90: 1500 * time.Microsecond,
			P99: 1500 * time.Microsecond, P999: 1500 * time.Microsecond, Max: 1500 * time.Microsecond}},
		// Below a microsecond and below zero count as the lowest bucket; the maximum is exact.
		{"tiny and negative", []time.Duration{-time.Second, 0, 300 * time.Nanosecond}, result.Percentiles{Count: 3, P50: time.Microsecond,
			P90: time.Microsecond, P99: time.Microsecond, P999: time.Microsecond, Max: 300 * time.Nanosecond}},
		// Past an hour a duration is counted at an hour (the histogram's top bucket, whose
		// highest equivalent value is 3,600,809,983 µs), its maximum kept.
		{"past an hour", []time.Duration{2 * time.Hour}, result.Percentiles{Count: 1, P50: top, P90: top, P99: top, P999: top, Max: 2 * time.Hour}},
	} {
		l := NewLatency()
		for _, d := range tc.in {
			l.Record(d)
		}
		if got := l.Percentiles(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// 1..1000 ms: the quantiles within the histogram's 0.1 %.
	l := NewLatency()
	for i := 1; i <= 1000; i++ {
		l.Record(time.Duration(i) * time.Millisecond)
	}
	p := l.Percentiles()
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"p50", p.P50, 500 * time.Millisecond}, {"p90", p.P90, 900 * time.Millisecond}, {"p99", p.P99, 990 * time.Millisecond},
		{"p99.9", p.P999, 999 * time.Millisecond}, {"max", p.Max, time.Second}} {
		if d := c.got - c.want; d < 0 || d > c.want/1000 {
			t.Errorf("%s = %v, want %v within 0.1 %%", c.name, c.got, c.want)
		}
	}
	if p.Count != 1000 {
		t.Errorf("count %d, want 1000", p.Count)
	}
}
