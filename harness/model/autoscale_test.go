package model

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/edgeproof/rlharness/autoscale"
)

func TestSeriesMatchesDocument(t *testing.T) {
	s := Series()
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	// From node olcekleme.mjs's SERI: the first rounds, the step's first rounds, the sum.
	if !slices.Equal(s[:5], []float64{1185, 1420, 1566, 1537, 1792}) || !slices.Equal(s[60:63], []float64{2970, 3055, 2669}) || sum != 197871 {
		t.Errorf("series starts %v, step starts %v, sums to %v; want 1185 1420 1566 1537 1792, 2970 3055 2669, 197871", s[:5], s[60:63], sum)
	}
}

func TestAutoscaleHeaderMatchesDocument(t *testing.T) {
	m, err := RunAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	// olcekleme.out.txt: load 278–3915 req/s, required 1–5, ideal 301 replica-rounds.
	if m.MinLoad != 278 || m.MaxLoad != 3915 || m.MinRequired != 1 || m.MaxRequired != 5 || m.IdealTotal != 301 {
		t.Errorf("load %v-%v, required %d-%d, ideal %d; want 278-3915, 1-5, 301", m.MinLoad, m.MaxLoad, m.MinRequired, m.MaxRequired, m.IdealTotal)
	}
}

func TestDelaySweepMatchesDocument(t *testing.T) {
	// olcekleme.out.txt: changes, oscillation, over-provisioned replica-rounds,
	// under-provisioned rounds, total replica-rounds, peak replicas.
	want := []struct{ changes, osc, over, under, total, peak int }{
		{14, 8, 0, 0, 301, 5},
		{63, 30, 52, 29, 319, 8},
		{67, 23, 186, 40, 422, 12},
		{59, 17, 225, 40, 457, 12},
		{56, 15, 261, 44, 489, 12},
		{53, 13, 286, 42, 515, 12},
		{43, 11, 275, 41, 510, 12},
	}
	series := Series()
	for delay, w := range want {
		r, err := RunScaling(series, Setting{Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		s := r.Score
		got := []int{s.Changes, s.Oscillation, s.Over, s.Under, s.Total, s.Peak}
		if !slices.Equal(got, []int{w.changes, w.osc, w.over, w.under, w.total, w.peak}) {
			t.Errorf("delay %d: %v; want %+v", delay, got, w)
		}
	}
}

func TestDampersMatchDocument(t *testing.T) {
	// denge.out.txt: changes, oscillation, over-provisioned replica-rounds,
	// under-provisioned rounds, under-provisioned in the step, total replica-rounds.
	tests := []struct {
		name    string
		setting Setting
		want    [6]int
	}{
		{"untuned", Setting{Delay: 3}, [6]int{59, 17, 225, 40, 15, 457}},
		{"stabilization window 2", Setting{Delay: 3, Window: 2}, [6]int{46, 17, 257, 37, 12, 493}},
		{"stabilization window 3", Setting{Delay: 3, Window: 3}, [6]int{45, 15, 315, 33, 13, 552}},
		{"stabilization window 5", Setting{Delay: 3, Window: 5}, [6]int{40, 13, 343, 31, 9, 596}},
		{"stabilization window 8", Setting{Delay: 3, Window: 8}, [6]int{31, 11, 371, 23, 7, 632}},
		{"step limit 1", Setting{Delay: 3, Step: 1}, [6]int{71, 15, 98, 35, 14, 347}},
		{"step limit 2", Setting{Delay: 3, Step: 2}, [6]int{71, 15, 173, 35, 15, 410}},
		{"window 3 + step 1", Setting{Delay: 3, Window: 3, Step: 1}, [6]int{59, 13, 122, 32, 11, 385}},
		{"window 5 + step 1", Setting{Delay: 3, Window: 5, Step: 1}, [6]int{53, 11, 152, 27, 10, 417}},
		{"delay 0: untuned", Setting{Delay: 0}, [6]int{14, 8, 0, 0, 0, 301}},
		{"delay 0: window 3 + step 1", Setting{Delay: 0, Window: 3, Step: 1}, [6]int{14, 6, 17, 0, 0, 318}},
	}
	m, err := RunAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Dampers) != len(tests) {
		t.Fatalf("%d damper rows, want %d", len(m.Dampers), len(tests))
	}
	for i, tt := range tests {
		row := m.Dampers[i]
		s := row.Score
		got := [6]int{s.Changes, s.Oscillation, s.Over, s.Under, s.UnderInStep, s.Total}
		if row.Name != tt.name || row.Setting != tt.setting || got != tt.want {
			t.Errorf("row %d %q %+v: %v; want %q %+v: %v", i, row.Name, row.Setting, got, tt.name, tt.setting, tt.want)
		}
	}
}

func TestStepTestMatchesDocument(t *testing.T) {
	// denge.out.txt: response rounds at delays 0, 3, 6.
	want := map[string][]int{
		"untuned":           {0, 3, 6},
		"step limit 1":      {2, 5, 8},
		"step limit 2":      {1, 4, 7},
		"window 3 + step 1": {2, 5, 8},
	}
	m, err := RunAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.StepTest) != len(want) {
		t.Fatalf("%d step-test rows, want %d", len(m.StepTest), len(want))
	}
	for _, r := range m.StepTest {
		if !slices.Equal(r.Response, want[r.Name]) {
			t.Errorf("%s: response %v; want %v", r.Name, r.Response, want[r.Name])
		}
	}
	// The step series needs 1 replica before the step and 4 after (denge.mjs).
	req := Required(StepTestSeries())
	if req[59] != 1 || req[60] != 4 {
		t.Errorf("step test requires %d then %d replicas; want 1 then 4", req[59], req[60])
	}
}

func TestAutoscaleSummaryMatchesDocument(t *testing.T) {
	m, err := RunAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	// denge.out.txt: oscillation 17 -> 13 (24 % drop), under in step 15 -> 11,
	// resources 457 -> 385 (ideal 301), 120 measurements each 3 rounds late.
	if s.OscillationFrom != 17 || s.OscillationTo != 13 || fmt.Sprintf("%.0f", s.OscillationDrop) != "24" ||
		s.UnderInStepFrom != 15 || s.UnderInStepTo != 11 || s.TotalFrom != 457 || s.TotalTo != 385 ||
		s.Ideal != 301 || s.MeasurementsRead != 120 || s.Delay != 3 {
		t.Errorf("summary %+v; want 17->13 (24%%), 15->11, 457->385, ideal 301, 120 measurements, delay 3", s)
	}
}

// The model's replica count is the controller's: every round's decision is the count scored.
func TestRunScalingUsesTheController(t *testing.T) {
	r, err := RunScaling(Series(), Setting{Delay: 3, Window: 3, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	prev := StartReplicas
	for i, d := range r.Decisions {
		if d.Round != i || d.From != prev || d.To != r.Replicas[i] || abs(d.To-d.From) > 1 {
			t.Fatalf("round %d: %+v after %d replicas", i, d, prev)
		}
		prev = d.To
	}
	if _, err := RunScaling(Series(), Setting{Window: -1}); err == nil {
		t.Error("window -1 accepted")
	}
	if got := (Setting{Window: 3, Step: 1}).Config(); got != (autoscale.Config{Target: 0.7, Min: 1, Max: 12, Window: 3, Step: 1}) {
		t.Errorf("config %+v", got)
	}
}

func abs(n int) int { return max(n, -n) }

// TestWriteAutoscalePrintsEveryTable prints the document's tables to the digit: every figure in its place, as
// testdata/autoscale.txt (the output of `harness model autoscale`) holds them.
func TestWriteAutoscalePrintsEveryTable(t *testing.T) {
	m, err := RunAutoscale()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAutoscale(&b, m); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "testdata/autoscale.txt", b.String())
}
