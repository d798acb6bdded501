package autoscale

import "testing"

func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		from    int
		util    float64
		to, raw int
		limited bool
		held    bool
	}{
		{"steady at target", Default(), 4, 0.70, 4, 4, false, false},
		{"up by the rule", Default(), 2, 1.2, 4, 4, false, false},   // ⌈2·1.2/0.7⌉ = ⌈3.43⌉
		{"down by the rule", Default(), 6, 0.2, 2, 2, false, false}, // ⌈6·0.2/0.7⌉ = ⌈1.71⌉
		{"capped at max", Default(), 10, 3, 12, 12, false, false},   // ZO27
		{"floored at min", Default(), 3, 0, 1, 1, false, false},     // min 1
		{"step limit up", Config{0.7, 1, 12, 0, 1}, 2, 1.2, 3, 4, true, false},
		{"step limit down", Config{0.7, 1, 12, 0, 2}, 6, 0.2, 4, 2, true, false},
		{"window holds the first low round", Config{0.7, 1, 12, 3, 0}, 6, 0.2, 6, 2, false, true},
		{"window does not hold a scale-up", Config{0.7, 1, 12, 3, 0}, 2, 1.2, 4, 4, false, false},
		{"window 1 is none", Config{0.7, 1, 12, 1, 0}, 6, 0.2, 2, 2, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Decide(0, tt.util)
			if d.To != tt.to || d.Raw != tt.raw || d.Limited != tt.limited || d.Held != tt.held || c.Replicas() != tt.to {
				t.Errorf("Decide = %+v, replicas %d; want to %d raw %d limited %v held %v", d, c.Replicas(), tt.to, tt.raw, tt.limited, tt.held)
			}
		})
	}
}

// The window counts consecutive low rounds; a round that is not low starts the count again,
// and once the window has passed every further low round applies at once (denge.mjs).
func TestStabilizationWindowCountsRounds(t *testing.T) {
	c, err := New(Config{Target: 0.7, Min: 1, Max: 12, Window: 3}, 8)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		util float64
		want int
	}{
		{0.35, 8}, {0.35, 8}, {0.70, 8}, // two low rounds, then the streak breaks
		{0.35, 8}, {0.35, 8}, {0.35, 4}, // the third consecutive low round applies
		{0.35, 2}, // the streak goes on: applied at once
		{0.70, 2},
	}
	for i, s := range steps {
		if d := c.Decide(i, s.util); d.To != s.want {
			t.Errorf("round %d: %+v; want %d replicas", i, d, s.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Target: 0, Min: 1, Max: 12},
		{Target: 1.5, Min: 1, Max: 12},
		{Target: 0.7, Min: 0, Max: 12},
		{Target: 0.7, Min: 3, Max: 2},
		{Target: 0.7, Min: 1, Max: 12, Window: -1},
		{Target: 0.7, Min: 1, Max: 12, Step: -1},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := New(Default(), 13); err == nil {
		t.Error("initial 13 above max 12 accepted")
	}
	names := map[string]Config{
		"untuned":                {Window: 1},
		"stabilization window 5": {Window: 5},
		"step limit 2":           {Step: 2},
		"window 3 + step 1":      {Window: 3, Step: 1},
	}
	for want, c := range names {
		if got := c.String(); got != want {
			t.Errorf("%+v names itself %q; want %q", c, got, want)
		}
	}
}

func TestDelayLine(t *testing.T) {
	l := NewDelayLine(2)
	for r, v := range []float64{0.1, 0.2, 0.3, 0.4} {
		l.Record(v)
		got, ok := l.At(r)
		want := []float64{0.1, 0.1, 0.1, 0.2}[r] // round 0's measurement until round 2
		if !ok || got != want {
			t.Errorf("round %d: %v %v; want %v", r, got, ok, want)
		}
	}
	if _, ok := l.At(7); ok {
		t.Error("round 7 has no measurement yet (round 5 was never recorded)")
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		name     string
		initial  int
		replicas []int
		required []int
		step     Step
		want     Score
	}{
		{"ideal", 1, []int{1, 2, 2, 1}, []int{1, 2, 2, 1}, Step{1, 3},
			Score{Changes: 2, Oscillation: 1, Total: 6, Peak: 2, Response: 0}},
		{"late", 2, []int{2, 2, 3, 4, 3, 4}, []int{1, 4, 4, 4, 2, 2}, Step{1, 4},
			Score{Changes: 4, Oscillation: 2, Over: 1 + 0 + 0 + 0 + 1 + 2, Under: 2, UnderInStep: 2, Total: 18, Peak: 4, Response: 2}},
		{"never responds", 3, []int{3, 3}, []int{1, 5}, Step{1, 2},
			Score{Over: 2, Under: 1, UnderInStep: 1, Total: 6, Peak: 3, Response: -1}},
	}
	for _, tt := range tests {
		if got := Rate(tt.initial, tt.replicas, tt.required, tt.step); got != tt.want {
			t.Errorf("%s: %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestRequired(t *testing.T) {
	tests := []struct {
		load float64
		want int
	}{
		{0, 1}, {278, 1}, {823.5, 1}, {823.6, 2}, {3915, 5},
	}
	for _, tt := range tests {
		if got := Required(tt.load, 1176.47, 0.7, 1); got != tt.want {
			t.Errorf("Required(%v) = %d; want %d", tt.load, got, tt.want)
		}
	}
}
