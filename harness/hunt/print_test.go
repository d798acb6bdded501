package hunt

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/topology"
)

// The terminal shows a family's worst variant on both clocks, the gated one first, so the
// client's view is never hidden behind what a limiter could know.
func TestWriteSummaryShowsBothClocks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		clocks *result.Clocks
		want   string
	}{
		{"arrival gate", &result.Clocks{Gate: result.ClockArrival, OvershootArrival: 1.05, OvershootClient: 1.25, FalseRejectsArrival: 0, FalseRejectsClient: 7, ArrivalWidth: 30 * time.Millisecond},
			"clocks: gated on arrival bounds; overshoot x1.050 (arrival ±30ms p99) x1.250 (client); false rejects 0 (arrival ±30ms p99) 7 (client)"},
		{"client gate", &result.Clocks{Gate: result.ClockClient, OvershootArrival: 1.05, OvershootClient: 1.25, FalseRejectsClient: 7, ArrivalWidth: 30 * time.Millisecond},
			"clocks: gated on the client's send times; overshoot x1.250 (client) x1.050 (arrival ±30ms p99); false rejects 7 (client) 0 (arrival ±30ms p99)"},
		{"no clocks", nil, ""},
	} {
		h := result.Hunt{Systems: []result.HuntSystem{{System: "replica", Families: []result.HuntFamily{
			{Name: "fresh-client", Kind: "attack", Worst: &result.HuntVariant{Overshoot: 1.05, Clocks: tc.clocks}}}}}}
		var b strings.Builder
		WriteSummary(&b, h, "/tmp/run")
		out := b.String()
		if tc.want == "" {
			if strings.Contains(out, "clocks:") {
				t.Errorf("%s: a variant without clocks printed a clocks line:\n%s", tc.name, out)
			}
			continue
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: summary lacks %q:\n%s", tc.name, tc.want, out)
		}
	}
}

// A hunt on a topology prints replay commands on the same topology: without it, a partition
// round's schedule has no far zone to cut.
func TestReplayFlagsKeepTheZones(t *testing.T) {
	zones, err := topology.Parse("near:4:0.5ms,far:4:40ms±10ms")
	if err != nil {
		t.Fatal(err)
	}
	s := result.HuntSystem{System: "replica", Design: "bounded"}
	s.Conditions.Zones = zones.Zones
	if got, want := replayFlags(s), "--design bounded --zones 'near:4:500µs,far:4:40ms±10ms' "; got != want {
		t.Errorf("replay flags %q, want %q", got, want)
	}
	s.Conditions.Zones = nil
	if got := replayFlags(s); got != "--design bounded " {
		t.Errorf("without zones: %q", got)
	}
}
