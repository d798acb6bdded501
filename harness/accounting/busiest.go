// Package accounting turns what a run measured into the figures the
// requirements are judged by: per client, how many requests got through in
// the busiest window-long interval and whether a client under its limit was
// rejected; overall, errors inside and outside fault windows, latency and how
// faithfully the generator kept to its schedule.
package accounting

import "time"

// Busiest is the largest number of times in any half-open interval
// [t, t+window), for times sorted in ascending order. It is pencere.mjs's
// enYogunPencere: the "busiest 60 s" of the document.
func Busiest(times []time.Duration, window time.Duration) int {
	best := 0
	for i, j := 0, 0; i < len(times); i++ {
		for times[i]-times[j] >= window {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}
