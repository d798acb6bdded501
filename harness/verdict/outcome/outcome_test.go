package outcome

import "testing"

// The order is the contract: a promise broken on schedule is FAIL whatever else was
// generator-bound, not made, interrupted or incomplete; each of the others outranks those
// below it.
func TestCombine(t *testing.T) {
	tests := []struct {
		name  string
		parts []Outcome
		want  Outcome
	}{
		{"none", nil, ""},
		{"only unjudged parts", []Outcome{"", ""}, ""},
		{"every part passed", []Outcome{Pass, Pass}, Pass},
		{"unjudged parts are left out", []Outcome{"", Pass}, Pass},
		{"generator-bound beside a pass", []Outcome{Pass, GeneratorBound}, GeneratorBound},
		{"broken on schedule beside generator-bound", []Outcome{GeneratorBound, Fail}, Fail},
		{"broken on schedule, generator-bound after it", []Outcome{Fail, GeneratorBound}, Fail},
		{"not made beside generator-bound", []Outcome{GeneratorBound, NotMade}, NotMade},
		{"not made beside broken", []Outcome{NotMade, Fail}, Fail},
		{"interrupted beside not made", []Outcome{NotMade, Interrupted}, Interrupted},
		{"interrupted beside broken", []Outcome{Interrupted, Fail}, Fail},
		{"incomplete beside interrupted", []Outcome{Interrupted, Incomplete}, Incomplete},
		{"incomplete beside broken", []Outcome{Fail, Incomplete}, Fail},
		{"an unknown value reads as a failure", []Outcome{Pass, "weird"}, "weird"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Combine(tc.parts...); got != tc.want {
				t.Errorf("Combine(%v) = %q, want %q", tc.parts, got, tc.want)
			}
		})
	}
	// Every pair, both ways round: the one later in All wins.
	for i, a := range All {
		for j, b := range All {
			want := All[max(i, j)]
			if got := Combine(a, b); got != want {
				t.Errorf("Combine(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
}

func TestOf(t *testing.T) {
	tests := []struct {
		passed, bound bool
		want          Outcome
	}{
		{true, false, Pass},
		{false, false, Fail},
		// The generator's checks failed: the others judged other traffic than the schedule.
		{false, true, GeneratorBound},
		{true, true, GeneratorBound},
	}
	for _, tc := range tests {
		if got := Of(tc.passed, tc.bound); got != tc.want {
			t.Errorf("Of(%v, %v) = %s, want %s", tc.passed, tc.bound, got, tc.want)
		}
	}
}

func TestWordAndExitCode(t *testing.T) {
	tests := []struct {
		o    Outcome
		word string
		code int
	}{
		{Pass, "PASS", 0},
		{Fail, "FAIL", 1},
		{Interrupted, "INTERRUPTED", 1},
		{Incomplete, "INCOMPLETE", 1},
		{NotMade, "NOT MADE", 2},
		{GeneratorBound, "GENERATOR-BOUND", 3},
		{"", "NOT RUN", 2},
		{"weird", "FAIL", 1},
	}
	for _, tc := range tests {
		if got := tc.o.Word(); got != tc.word {
			t.Errorf("%q.Word() = %q, want %q", tc.o, got, tc.word)
		}
		if got := tc.o.ExitCode(); got != tc.code {
			t.Errorf("%q.ExitCode() = %d, want %d", tc.o, got, tc.code)
		}
	}
}
