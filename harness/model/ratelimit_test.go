package model

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/edgeproof/rlharness/limiters"
)

func TestSizingMatchesDocument(t *testing.T) {
	s := RunSizing()
	if s.PerNodePeak != 5000 || s.CentralTouches != 40000 || s.ClientRate != 10 {
		t.Errorf("peaks = %g, %g, %g; want 5000, 40000, 10", s.PerNodePeak, s.CentralTouches, s.ClientRate)
	}
	want := map[limiters.Algorithm]struct {
		n  int
		mb string
	}{limiters.FixedWindow: {1, "9.60"}, limiters.TokenBucket: {1, "9.60"}, limiters.SlidingWindow: {12, "115.20"}}
	for _, l := range s.Layouts {
		w := want[l.Algorithm]
		if l.PerClient != w.n || fmtMB(l.TotalMB) != w.mb {
			t.Errorf("%s: %d records, %s MB; want %d, %s", l.Algorithm, l.PerClient, fmtMB(l.TotalMB), w.n, w.mb)
		}
	}
	if s.UnseenPerNode != 1000 || s.BlindCeiling != 16 || s.Threshold != 660 || s.LimitPlusBlind != 616 || !s.Passes {
		t.Errorf("blind ceiling figures = %+v; want 1000, 16, 660, 616, passes", s)
	}
}

func fmtMB(v float64) string    { return fmt.Sprintf("%.2f", v) }
func sprintf3(v float64) string { return fmt.Sprintf("%.3f", v) }
func sprintf1(v float64) string { return fmt.Sprintf("%.1f", v) }

func TestWindowTableMatchesDocument(t *testing.T) {
	rows, err := RunWindows()
	if err != nil {
		t.Fatal(err)
	}
	// pencere.out.txt: accepted, rejected, busiest 60 s, overshoot, ratio.
	want := []struct {
		accepted, rejected, busiest, overshoot int
		ratio                                  string
	}{
		{1800, 1800, 600, 0, "x1.000"}, {1800, 1800, 600, 0, "x1.000"}, {1859, 1741, 659, 59, "x1.098"},
		{1800, 600, 1200, 600, "x2.000"}, {1200, 1200, 600, 0, "x1.000"}, {318, 2082, 159, -441, "x0.265"},
		{1800, 0, 600, 0, "x1.000"}, {1800, 0, 600, 0, "x1.000"}, {327, 1473, 109, -491, "x0.182"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Accepted != w.accepted || r.Rejected != w.rejected || r.Busiest != w.busiest ||
			r.Overshoot != w.overshoot || "x"+sprintf3(r.Ratio) != w.ratio {
			t.Errorf("%s/%s = %d/%d/%d/%d/x%s; want %+v", r.Pattern, r.Algorithm, r.Accepted, r.Rejected,
				r.Busiest, r.Overshoot, sprintf3(r.Ratio), w)
		}
	}
	if n := []int{rows[0].Requests, rows[3].Requests, rows[6].Requests}; n[0] != 3600 || n[1] != 2400 || n[2] != 1800 {
		t.Errorf("pattern sizes = %v; want 3600, 2400, 1800", n)
	}
}

func TestDistributedTableMatchesDocument(t *testing.T) {
	// dagitik.out.txt: accepted, rejected, overshoot, false rejects, counter touches.
	tests := []struct {
		rate                                        int
		mode                                        limiters.Mode
		accepted, rejected, overshoot, falseRejects int
		touches                                     int64
	}{
		{10, limiters.ModeCentral, 600, 0, 0, 0, 600},
		{10, limiters.ModeSplit, 575, 25, 0, 25, 0},
		{10, limiters.ModeDelayed, 600, 0, 0, 0, 2400},
		{90, limiters.ModeCentral, 600, 4800, 0, 0, 5400},
		{90, limiters.ModeSplit, 600, 4800, 0, 0, 0},
		{90, limiters.ModeDelayed, 609, 4791, 9, 0, 2400},
	}
	for _, tt := range tests {
		r, err := RunDistributed(tt.mode, tt.rate, 0.2, DistSeed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Accepted != tt.accepted || r.Rejected != tt.rejected || r.Overshoot != tt.overshoot ||
			r.FalseRejects != tt.falseRejects || r.Touches != tt.touches {
			t.Errorf("%d/s %s = %d/%d/%d/%d/%d; want %d/%d/%d/%d/%d", tt.rate, tt.mode, r.Accepted, r.Rejected,
				r.Overshoot, r.FalseRejects, r.Touches, tt.accepted, tt.rejected, tt.overshoot, tt.falseRejects, tt.touches)
		}
	}
}

func TestSyncSweepMatchesDocument(t *testing.T) {
	tests := []struct {
		interval            float64
		accepted, overshoot int
		ratio, touchesPerS  string
		passes              bool
	}{
		{0.2, 609, 9, "1.015", "40.0", true},
		{1, 630, 30, "1.050", "8.0", true},
		{2, 720, 120, "1.200", "4.0", false},
		{5, 900, 300, "1.500", "1.6", false},
	}
	for _, tt := range tests {
		r, err := RunDistributed(limiters.ModeDelayed, 90, tt.interval, DistSeed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Accepted != tt.accepted || r.Overshoot != tt.overshoot || sprintf3(r.Ratio) != tt.ratio ||
			sprintf1(r.TouchesPerSec) != tt.touchesPerS || r.Passes != tt.passes {
			t.Errorf("interval %g = %d, %d, x%s, %s/s, %v; want %+v", tt.interval, r.Accepted, r.Overshoot,
				sprintf3(r.Ratio), sprintf1(r.TouchesPerSec), r.Passes, tt)
		}
	}
}

// TestWriteRateLimitPrintsEveryTable prints the document's tables to the digit: every figure in its place, as
// testdata/ratelimit.txt (the output of `harness model ratelimit`) holds them.
func TestWriteRateLimitPrintsEveryTable(t *testing.T) {
	m, err := RunRateLimit()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteRateLimit(&b, m); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "testdata/ratelimit.txt", b.String())
}

func TestUnknownMode(t *testing.T) {
	if _, err := RunDistributed("gossip", 10, 0.2, DistSeed); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestLCGFirstValues(t *testing.T) {
	// Node.js: s = 1; s = (Math.imul(s, 1103515245) + 12345) >>> 0 gives 1103527590, then
	// 2524885223 (wrapped mod 2³²).
	g := NewLCG(1)
	for i, want := range []uint32{1103527590, 2524885223} {
		if got := g.Float64(); got != float64(want)/4294967296 {
			t.Errorf("value %d = %v, want %v", i, got*4294967296, want)
		}
	}
}
