// Package loadtest runs the scenarios against a real fleet and judges them: it builds each
// scenario's schedule, brings up Redis and the replicas, replays the traffic with Vegeta,
// injects the store faults, accounts for every response and writes summary.json.
package loadtest

import (
	"fmt"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/limiters"
)

// Scenarios lists what a run does: the design under test, its fault scenarios
// (FailOpenFaults), and, with matrix, every other algorithm × mode as a comparison. In
// delayed mode a scenario runs delayed sync's design (limiters.Design); the matrix's sliding
// window in delayed mode runs both, the other one as a comparison named for its design
// ("sliding_window/delayed-document"), so that the report shows them side by side.
func Scenarios(algorithm limiters.Algorithm, mode limiters.Mode, design limiters.Design, failOpen, matrix bool) []result.Scenario {
	if design == "" {
		design = limiters.DesignBounded
	}
	name := func(a limiters.Algorithm, m limiters.Mode, f string) string {
		n := fmt.Sprintf("%s/%s", a, m)
		if f != "" {
			n += "/" + f
		}
		return n
	}
	designOf := func(m limiters.Mode) string {
		if m != limiters.ModeDelayed {
			return ""
		}
		return string(design)
	}
	out := []result.Scenario{{Name: name(algorithm, mode, ""), Algorithm: string(algorithm), Mode: string(mode), Design: designOf(mode), Gated: true}}
	if failOpen {
		for _, f := range FailOpenFaults {
			out = append(out, result.Scenario{Name: name(algorithm, mode, f), Algorithm: string(algorithm), Mode: string(mode), Design: designOf(mode), Fault: f, Gated: true})
		}
	}
	if !matrix {
		return out
	}
	for _, a := range []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingWindow, limiters.TokenBucket} {
		for _, m := range limiters.Modes() {
			if a != algorithm || m != mode {
				out = append(out, result.Scenario{Name: name(a, m, ""), Algorithm: string(a), Mode: string(m), Design: designOf(m)})
			}
			if a != limiters.SlidingWindow || m != limiters.ModeDelayed {
				continue // the designs differ on sliding windows only (BoundedSync)
			}
			for _, d := range limiters.Designs() {
				if d != design {
					out = append(out, result.Scenario{Name: name(a, m, "") + "-" + string(d), Algorithm: string(a), Mode: string(m), Design: string(d)})
				}
			}
		}
	}
	return out
}

// RulesYAML is the replicas' rule file for a scenario: the document's rule (HS3, HS7, HS8)
// with the window scaled.
func RulesYAML(a limiters.Algorithm, window time.Duration) []byte {
	return fmt.Appendf(nil, `# written by harness loadtest: the document's rule at the run's time scale
default:
  limit: %d
  window: %s
  algorithm: %s
  slices: %d
  burst: %d
`, limiters.DefaultLimit, window, a, limiters.DefaultSlices, limiters.DefaultBurst)
}
