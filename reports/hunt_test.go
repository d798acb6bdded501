package reports

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// A hunt's directory gets the hunt page: the verdict, per family the worst case with its
// parameters and a link to the schedule file that replays it, a generator-bound family marked
// as not measured, every variant tried, and the chart of them.
func TestHuntReport(t *testing.T) {
	dir := t.TempDir()
	v := func(over float64, falseRej int, bound bool) result.HuntVariant {
		return result.HuntVariant{Round: 1, Client: "c", Params: []result.HuntParam{{Name: "rate", Value: 1500, Unit: "req/s"}},
			Offered: 1200, Accepted: int(over * 600), Busiest: int(over * 600), Overshoot: over, FalseRejects: falseRej, GeneratorBound: bound}
	}
	edge, slow := v(2, 0, false), v(1.4, 0, true)
	h := result.Hunt{Pass: false, Failed: []string{"fixedwindow window-edge: BREAKS"}, Config: result.HuntConfig{Budget: time.Minute, Requests: 1000, MaxRate: 1500, Coarse: 12, Levels: 2, Pressure: 3, PressureShare: 2, PressureRequests: 24000},
		Systems: []result.HuntSystem{{System: "fixedwindow", Window: 12 * time.Second, Limit: 600, Replicas: 2, TimeScale: 0.2,
			Rounds:  []result.HuntRound{{Round: 0, Kind: "learn", Variants: 2, Requests: 2400, Pace: 1500}},
			Learned: result.HuntLearned{Edge: "window edges at whole windows since the epoch", Ticks: "the target declares no sync interval"},
			Families: []result.HuntFamily{
				{Name: "window-edge", Kind: "attack", Doc: "the limit before and after an edge", Worst: &edge, Breaks: true, Schedule: "fixedwindow/schedules/window-edge.json", Tried: []result.HuntVariant{edge},
					Pressure: 1, BrokeUnderPressure: true, PressureVerdict: "broke at level 1 (herd 1, 64 per replica per ms, share x1)",
					PressureSchedule: "fixedwindow/schedules/window-edge-pressure.json",
					PressureRounds:   []result.HuntPressureRound{{Level: 1, Herd: 1, Conns: 64, Share: 1, AskedPeak: 128000, AchievedPeak: 21300, StoreRead: true, StoreTimeouts: 4, Broke: true, Variant: edge}}},
				{Name: "fresh-client", Kind: "attack", Worst: &slow, GeneratorBound: true, Tried: []result.HuntVariant{slow},
					Pressure: 2, PressureVerdict: "generator-bound at level 2: its peak 21000 req/s is under 1.25x level 1's 20000"},
				{Name: "sync-tick", Kind: "attack", NotRun: "the target declares no sync interval"},
			}}}}
	if err := result.Write(dir, result.HuntFile, h); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		`<span class="verdict FAIL">FAIL</span>`,
		`BREAKS: x2.000 the limit in one window`,
		`<a href="fixedwindow/schedules/window-edge.json">`,
		`rate=1500 req/s (round 1)`,
		`not measured: every variant was generator-bound`,
		`not run: the target declares no sync interval`,
		`<svg`, `generator-bound (not evidence)`,
		`window edges at whole windows since the epoch`,
		`<td class="FAIL">broke at level 1 (herd 1, 64 per replica per ms, share x1)<br><a href="fixedwindow/schedules/window-edge-pressure.json">`,
		`<td class="bound">generator-bound at level 2`,
		`<td class="n">21300</td><td class="n">128000</td>`,
		`<td class="n">4</td>`,
		`<td>fresh-client</td><td colspan="12">generator-bound at level 2`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the hunt page lacks %q", want)
		}
	}
	if w.JUnit != "" {
		t.Errorf("a hunt writes no JUnit file, got %s", w.JUnit)
	}
}
