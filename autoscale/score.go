package autoscale

import "math"

// Required is the ideal replica count for a load: ⌈load / (saturation × target)⌉, at least
// min. The document's gereken, with saturation 1176.47 req/s per replica (M19).
func Required(load, saturation, target float64, min int) int {
	return max(min, int(math.Ceil(load/(saturation*target))))
}

// Score is the document's measures of one run: replicas per round judged against the
// replicas the load required.
type Score struct {
	Changes     int `json:"changes"`       // rounds in which the count changed
	Oscillation int `json:"oscillation"`   // direction reversals among the changes
	Over        int `json:"over"`          // over-provisioned replica-rounds: Σ max(0, replicas − required)
	Under       int `json:"under"`         // under-provisioned rounds: replicas < required
	UnderInStep int `json:"under_in_step"` // under-provisioned rounds inside the step window
	Total       int `json:"total"`         // replica-rounds
	Peak        int `json:"peak"`          // most replicas in a round
	// Response is how many rounds after the step's first round the replicas first reached
	// the required count; −1 when they never did.
	Response int `json:"response"`
}

// Step is the window of rounds [From, To) where the load steps up: rounds 60–89 in the
// document's series, and the step test's response is counted from From.
type Step struct{ From, To int }

// DocumentStep is the document's step: +1800 req/s in rounds 60–89.
var DocumentStep = Step{From: 60, To: 90}

// Rate scores replicas[t] (the count serving round t) against required[t]; initial is the
// count before round 0, so that a change in round 0 counts.
func Rate(initial int, replicas, required []int, step Step) Score {
	s := Score{Response: -1}
	prev, lastDir := initial, 0
	for t, r := range replicas {
		if dir := sign(r - prev); dir != 0 {
			s.Changes++
			if lastDir != 0 && dir != lastDir {
				s.Oscillation++
			}
			lastDir = dir
		}
		prev = r
		g := required[t]
		s.Total += r
		s.Over += max(0, r-g)
		if r < g {
			s.Under++
			if t >= step.From && t < step.To {
				s.UnderInStep++
			}
		}
		if t >= step.From && s.Response < 0 && r >= g {
			s.Response = t - step.From
		}
		s.Peak = max(s.Peak, r)
	}
	return s
}
