package schedule

import (
	"fmt"
	"math"
	"time"
)

// PatternRounds names the client of a Rounds schedule.
const PatternRounds = "rounds"

// Rounds is a load series as a schedule: round t lasts round and carries rates[t] × scale
// requests/s, evenly spaced, from one client. The horizontal-scaling document's 120-round
// series replays this way, scaled down by scale so that the generator keeps up; the
// replicas' saturation is scaled by the same factor, so the replica counts are the document's.
func Rounds(rates []float64, round time.Duration, scale float64) (Schedule, error) {
	if round <= 0 {
		return Schedule{}, fmt.Errorf("round length must be > 0 (got %v)", round)
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return Schedule{}, fmt.Errorf("rate scale must be a finite number > 0 (got %v)", scale)
	}
	s := Schedule{Duration: time.Duration(len(rates)) * round}
	for t, rate := range rates {
		if rate < 0 || math.IsNaN(rate) {
			return Schedule{}, fmt.Errorf("round %d: rate must be >= 0 (got %v)", t, rate)
		}
		n := int(math.Round(rate * scale * round.Seconds()))
		base := time.Duration(t) * round
		for i := range n {
			// Centred in its slot, so no request sits on a round's edge.
			at := base + time.Duration((float64(i)+0.5)*float64(round)/float64(n))
			s.Requests = append(s.Requests, Request{At: at})
		}
	}
	s.Clients = []Client{{ID: "autoscale-load", Limit: max(1, len(s.Requests)), Window: s.Duration, Pattern: PatternRounds}}
	return s, s.Validate()
}

// Round is the round a request of a Rounds schedule belongs to.
func Round(at, round time.Duration) int { return int(at / round) }
