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
// (FailOpenFaults), and, with matrix, every other algorithm × mode as a comparison.
func Scenarios(design limiters.Algorithm, mode limiters.Mode, failOpen, matrix bool) []result.Scenario {
	name := func(a limiters.Algorithm, m limiters.Mode, f string) string {
		n := fmt.Sprintf("%s/%s", a, m)
		if f != "" {
			n += "/" + f
		}
		return n
	}
	out := []result.Scenario{{Name: name(design, mode, ""), Algorithm: string(design), Mode: string(mode), Gated: true}}
	if failOpen {
		for _, f := range FailOpenFaults {
			out = append(out, result.Scenario{Name: name(design, mode, f), Algorithm: string(design), Mode: string(mode), Fault: f, Gated: true})
		}
	}
	if matrix {
		for _, a := range []limiters.Algorithm{limiters.FixedWindow, limiters.SlidingWindow, limiters.TokenBucket} {
			for _, m := range limiters.Modes() {
				if a == design && m == mode {
					continue
				}
				out = append(out, result.Scenario{Name: name(a, m, ""), Algorithm: string(a), Mode: string(m)})
			}
		}
	}
	return out
}

// rulesYAML is the replicas' rule file for a scenario: the document's rule (HS3, HS7, HS8)
// with the window scaled.
func rulesYAML(a limiters.Algorithm, window time.Duration) []byte {
	return fmt.Appendf(nil, `# written by harness loadtest: the document's rule at the run's time scale
default:
  limit: %d
  window: %s
  algorithm: %s
  slices: %d
  burst: %d
`, limiters.DefaultLimit, window, a, limiters.DefaultSlices, limiters.DefaultBurst)
}
