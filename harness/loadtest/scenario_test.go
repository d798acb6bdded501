package loadtest

import (
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/limiters"
)

func TestScenarios(t *testing.T) {
	tests := []struct {
		name             string
		design           limiters.Design
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
				"sliding_window/central sliding_window/split sliding_window/delayed-document " +
				"token_bucket/central token_bucket/split token_bucket/delayed"},
		{name: "the document's design under test, the bounded one beside it", design: limiters.DesignDocument, matrix: true,
			want: "sliding_window/delayed* " +
				"fixed_window/central fixed_window/split fixed_window/delayed " +
				"sliding_window/central sliding_window/split sliding_window/delayed-bounded " +
				"token_bucket/central token_bucket/split token_bucket/delayed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			design := tc.design
			if design == "" {
				design = limiters.DesignBounded
			}
			for _, sc := range Scenarios(limiters.SlidingWindow, limiters.ModeDelayed, tc.design, tc.failOpen, tc.matrix) {
				n := sc.Name
				switch {
				case sc.Mode != string(limiters.ModeDelayed) && sc.Design != "":
					t.Errorf("%s: design %q outside delayed mode", sc.Name, sc.Design)
				case sc.Mode == string(limiters.ModeDelayed) && strings.HasSuffix(sc.Name, "-"+sc.Design) == (sc.Design == string(design)):
					t.Errorf("%s: design %q (under test: %s)", sc.Name, sc.Design, design)
				}
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

// --only keeps the scenarios whose name contains it, or one of its comma-separated parts.
func TestOnly(t *testing.T) {
	names := []string{"sliding_window/delayed", "sliding_window/delayed/store-stop", "sliding_window/central", "sliding_window/delayed-document", "fixed_window/central"}
	for _, tc := range []struct{ only, want string }{
		{"", "sliding_window/delayed sliding_window/delayed/store-stop sliding_window/central sliding_window/delayed-document fixed_window/central"},
		{"central", "sliding_window/central fixed_window/central"},
		{"sliding_window/central,delayed-document", "sliding_window/central sliding_window/delayed-document"},
		{"nothing,", ""},
	} {
		var got []string
		for _, n := range names {
			if (Config{Only: tc.only}).only(n) {
				got = append(got, n)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("--only %q runs %q, want %q", tc.only, g, tc.want)
		}
	}
}

// The built-in replica's fleet runs the scenario's design: the document's when asked
// (--design document, harness hunt's too), the bounded one by default; other modes none.
func TestSpecRunsTheScenariosDesign(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		mode   limiters.Mode
		design string
		want   limiters.Design
	}{
		{limiters.ModeDelayed, "", limiters.DesignBounded},
		{limiters.ModeDelayed, "document", limiters.DesignDocument},
		{limiters.ModeCentral, "document", ""},
	} {
		cfg.Mode, cfg.Design = tc.mode, tc.design
		sc := Scenarios(cfg.Algorithm, cfg.Mode, limiters.Design(cfg.Design), false, false)[0]
		if got := (sut{}).spec(cfg, sc).Design; got != tc.want {
			t.Errorf("mode %s, --design %q: the fleet runs design %q, want %q", tc.mode, tc.design, got, tc.want)
		}
	}
}
