package result

import (
	"strings"
	"testing"
)

// A family's verdict says what the store did in the round of a variant that refused a
// client within its limit, and nothing of it where none was refused or it was not read.
func TestHuntFamilyVerdictSaysTheRoundsStore(t *testing.T) {
	for _, tc := range []struct {
		name         string
		falseRejects int
		store        *HuntStore
		want, absent string
	}{
		{"refused in a round with timeouts", 1, &HuntStore{Timeouts: 3, Degraded: 0},
			"; its round: 3 store calls timed out, 0 decisions with the store down", ""},
		{"refused, store not read", 1, nil, "BREAKS: x1.000 the limit in one window, 1 false rejects", "its round"},
		{"none refused", 0, &HuntStore{Timeouts: 3}, "BREAKS: x1.200 the limit in one window, 0 false rejects", "its round"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over := 1.0
			if tc.falseRejects == 0 {
				over = 1.2
			}
			f := HuntFamily{Name: "window-apart-herd", Kind: "attack", Breaks: true,
				Worst: &HuntVariant{Overshoot: over, FalseRejects: tc.falseRejects, Store: tc.store}}
			got := f.Verdict()
			if !strings.Contains(got, tc.want) || tc.absent != "" && strings.Contains(got, tc.absent) {
				t.Errorf("verdict %q: want %q in it and not %q", got, tc.want, tc.absent)
			}
		})
	}
}

// A client's promises read on the clock named: its send times, the run's exact clock, or
// arrival bounds.
func TestClientReportOnAClock(t *testing.T) {
	c := ClientReport{Overshoot: 1.3, OvershootArrival: 1.2, OvershootExact: 1.05, FalseRejectsSent: 4, FalseRejects: 2, FalseRejectsExact: 1}
	for _, tc := range []struct {
		clock string
		over  float64
		rej   int
	}{{ClockClient, 1.3, 4}, {ClockArrival, 1.2, 2}, {ClockDecision, 1.05, 1}, {ClockBackend, 1.05, 1}} {
		if got, rej := c.OvershootOn(tc.clock), c.FalseRejectsOn(tc.clock); got != tc.over || rej != tc.rej {
			t.Errorf("%s: overshoot %v, false rejects %d; want %v, %d", tc.clock, got, rej, tc.over, tc.rej)
		}
	}
}
