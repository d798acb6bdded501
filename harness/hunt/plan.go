package hunt

import (
	"cmp"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// rateBucket is the grain at which a round's asked rate is kept within the generator's
// burst rate.
const rateBucket = 25 * time.Millisecond

// place puts parts into one round of at most maxLen: each at the earliest whole multiple of
// its period at which, in every rateBucket it touches, the round asks for at most rate
// requests per second (a part alone in its buckets may ask more: it is sent as it is, and
// judged generator-bound if the generator falls behind). A part kept alone (Part.Alone) is
// placed at the earliest whole rateBucket where no request of another part lies within Alone
// of any of its own, and no part placed after it puts a request there. The first parts go
// first, in order; then pinned parts (period 0), then the longest. shift[i] is part i's move;
// placed[i] false means it waits for a later round.
func place(parts []Part, maxLen time.Duration, rate float64, first int) (shift []time.Duration, placed []bool) {
	shift, placed = make([]time.Duration, len(parts)), make([]bool, len(parts))
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	// parts[:first] go first, in their order (the learning probes); then the rest.
	slices.SortStableFunc(order[first:], func(a, b int) int {
		pa, pb := parts[a].Period == 0, parts[b].Period == 0
		if pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return cmp.Compare(parts[b].Schedule.Duration, parts[a].Schedule.Duration)
	})
	limit := rate * rateBucket.Seconds()
	n := int(maxLen/rateBucket) + 2
	busy := make([]float64, n)
	// kept[b]: bucket b is within Alone of a part kept alone; no other part may use it.
	kept := make([]bool, n)
	own := map[int]float64{}
	for _, i := range order {
		p := parts[i]
		step := p.Period
		guard := int((p.Alone + rateBucket - 1) / rateBucket)
		if p.Alone > 0 {
			step = rateBucket
		}
		for m := time.Duration(0); p.Schedule.Duration+m <= maxLen; m += step {
			clear(own)
			for _, r := range p.Schedule.Requests {
				own[int((r.At+m)/rateBucket)]++
			}
			fits := true
			for b, k := range own {
				if kept[b] || busy[b] > 0 && (p.Alone > 0 || busy[b]+k > limit) {
					fits = false
					break
				}
				for g := max(0, b-guard); fits && g <= min(n-1, b+guard) && p.Alone > 0; g++ {
					fits = busy[g] == 0
				}
				if !fits {
					break
				}
			}
			if fits {
				for b, k := range own {
					busy[b] += k
					for g := max(0, b-guard); g <= min(n-1, b+guard) && p.Alone > 0; g++ {
						kept[g] = true
					}
				}
				shift[i], placed[i] = m, true
				break
			}
			if step <= 0 {
				break
			}
		}
	}
	return shift, placed
}

// shifted is s with every request moved by d.
func shifted(s schedule.Schedule, d time.Duration) schedule.Schedule {
	out := s
	out.Requests = slices.Clone(s.Requests)
	for i := range out.Requests {
		out.Requests[i].At += d
	}
	out.Duration += d
	return out
}

// merged is a round's schedule built from its variants' schedules, with where each request
// came from: variant[i] and local[i] are request i's variant and its index there.
type merged struct {
	schedule.Schedule
	variant, local []int32
}

// merge puts the variants' schedules into one, each variant's clients after the previous
// ones', requests sorted by offset (at one offset, in the variants' order).
func merge(parts []schedule.Schedule) merged {
	var m merged
	type ref struct{ v, k int32 }
	var refs []ref
	base := make([]int32, len(parts))
	for v, p := range parts {
		base[v] = int32(len(m.Clients))
		m.Clients = append(m.Clients, p.Clients...)
		m.Duration = max(m.Duration, p.Duration)
		for k := range p.Requests {
			refs = append(refs, ref{int32(v), int32(k)})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int {
		return cmp.Compare(parts[a.v].Requests[a.k].At, parts[b.v].Requests[b.k].At)
	})
	m.Requests = make([]schedule.Request, len(refs))
	m.variant, m.local = make([]int32, len(refs)), make([]int32, len(refs))
	for i, r := range refs {
		q := parts[r.v].Requests[r.k]
		q.Client += base[r.v]
		m.Requests[i], m.variant[i], m.local[i] = q, r.v, r.k
	}
	return m
}
