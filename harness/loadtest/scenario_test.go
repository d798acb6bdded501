package loadtest

import (
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/limiters"
)

func TestScenarios(t *testing.T) {
	tests := []struct {
		name             string
		failOpen, matrix bool
		want             string // the scenarios' names in run order; a gated one ends in *
	}{
		{name: "design only", want: "sliding_window/delayed*"},
		{name: "fail-open", failOpen: true,
			want: "sliding_window/delayed* sliding_window/delayed/store-stop* sliding_window/delayed/store-pause* sliding_window/delayed/store-slow* " +
				"sliding_window/delayed/store-restart* sliding_window/delayed/replica-kill*"},
		{name: "matrix: every other algorithm × mode, in the document's order", matrix: true,
			want: "sliding_window/delayed* " +
				"fixed_window/central fixed_window/split fixed_window/delayed " +
				"sliding_window/central sliding_window/split " +
				"token_bucket/central token_bucket/split token_bucket/delayed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for _, sc := range Scenarios(limiters.SlidingWindow, limiters.ModeDelayed, tc.failOpen, tc.matrix) {
				n := sc.Name
				if sc.Gated {
					n += "*"
				}
				if want := sc.Algorithm + "/" + sc.Mode; !strings.HasPrefix(sc.Name, want) {
					t.Errorf("%s runs %s", sc.Name, want)
				}
				names = append(names, n)
			}
			if got := strings.Join(names, " "); got != tc.want {
				t.Errorf("scenarios %q,\nwant %q", got, tc.want)
			}
		})
	}
}
