package result

import (
	"encoding/json"
	"testing"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// A summary written before runs stored their outcome is settled by today's rule when read:
// the old file's generator_bound (an OR over its scenarios) no longer hides a promise broken
// on schedule in another scenario.
func TestLegacySummarySettled(t *testing.T) {
	old := `{"pass": false, "generator_bound": true, "scenarios": [
		{"name": "a", "gated": true, "pass": false, "generator_bound": true},
		{"name": "b", "gated": true, "pass": false, "generator_bound": false},
		{"name": "c", "gated": false, "pass": false, "error": "no docker"}]}`
	var s Summary
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	want := []outcome.Outcome{outcome.GeneratorBound, outcome.Fail, outcome.NotMade}
	for i, sc := range s.Scenarios {
		if sc.Outcome != want[i] {
			t.Errorf("scenario %s: %s, want %s", sc.Name, sc.Outcome, want[i])
		}
	}
	if s.Outcome != outcome.Fail || s.Pass || s.GeneratorBound {
		t.Errorf("run %s (pass %v, generator-bound %v), want fail", s.Outcome, s.Pass, s.GeneratorBound)
	}
	// One written with its outcome keeps it.
	var kept Summary
	if err := json.Unmarshal([]byte(`{"outcome": "interrupted", "pass": false}`), &kept); err != nil || kept.Outcome != outcome.Interrupted {
		t.Errorf("stored outcome read as %q (%v), want interrupted", kept.Outcome, err)
	}
}

func TestFamilyOutcome(t *testing.T) {
	v := func(o outcome.Outcome) *HuntVariant { return &HuntVariant{Outcome: o} }
	for _, tc := range []struct {
		name string
		f    HuntFamily
		want outcome.Outcome
	}{
		{"not run", HuntFamily{NotRun: "budget", Worst: v(outcome.Fail)}, ""},
		{"no variant sent", HuntFamily{}, ""},
		{"held", HuntFamily{Worst: v(outcome.Pass)}, outcome.Pass},
		{"broke", HuntFamily{Worst: v(outcome.Fail)}, outcome.Fail},
		{"every variant late", HuntFamily{Worst: v(outcome.GeneratorBound)}, outcome.GeneratorBound},
		{"held, broke under pressure", HuntFamily{Worst: v(outcome.Pass), BrokeUnderPressure: true}, outcome.Fail},
		{"late, broke under pressure", HuntFamily{Worst: v(outcome.GeneratorBound), BrokeUnderPressure: true}, outcome.Fail},
	} {
		if got := FamilyOutcome(tc.f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
