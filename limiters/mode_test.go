package limiters

import (
	"slices"
	"testing"
)

func TestModes(t *testing.T) {
	tests := []struct {
		mode Mode
		want string // the spelling of flags, rule files and result files
	}{
		{ModeCentral, "central"},
		{ModeSplit, "split"},
		{ModeDelayed, "delayed"},
	}
	var want []Mode
	for _, tc := range tests {
		if string(tc.mode) != tc.want {
			t.Errorf("mode spelled %q, want %q", tc.mode, tc.want)
		}
		want = append(want, tc.mode)
	}
	if got := Modes(); !slices.Equal(got, want) {
		t.Errorf("Modes() = %v, want %v (the document's order)", got, want)
	}
}
