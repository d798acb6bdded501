// Package hunt searches for the traffic that breaks a limiter's promises: families of aimed
// traffic, each a schedule generator with parameters (pure and seeded), a search over those
// parameters under a budget of time and requests (a coarse sweep, then refinement of the
// best), and the live hunt that sends many variants at once at a running fleet, each its own
// clients, judged exactly as harness loadtest judges (harness/accounting).
package hunt

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// Kind is how a family's variants are judged.
type Kind string

// Kinds of family.
const (
	// Attack traffic aims past the limit: it breaks the promise when its busiest
	// window-long interval of accepted requests is over 1.1× the limit.
	Attack Kind = "attack"
	// AtLimit traffic never sends more than the limit in any window-long interval of its
	// own: any rejection of it is a false reject.
	AtLimit Kind = "at-limit"
	// Fault traffic aims at a store fault: it is judged as loadtest judges a fail-open
	// scenario, at most one limit per node while the store is away and 1.1× once it is back.
	Fault Kind = "fault"
)

// Env is what a family aims with: the limiter's declared rule as the run scales it, the
// fleet, the generator's pace and what the learning step found. Offsets are from the round's
// origin, which is on a slice boundary since the Unix epoch.
type Env struct {
	Limit    int
	Window   time.Duration
	Slices   int           // the documents' slices per window (12): the slice-drop family's grain
	Replicas int           // replicas the requests are spread over
	Interval time.Duration // the replicas' sync interval at the run's scale; 0 when not known
	// MaxRate is the most requests per second a burst is asked for: above it the generator
	// falls behind and the variant is generator-bound.
	MaxRate float64
	// FirstEdge is the first window edge at or after the origin: a whole multiple of the
	// window since the epoch unless the learning step found the target's edges elsewhere.
	FirstEdge time.Duration
	// Ticks[i] is replica i's first sync tick at or after the origin, as learned; nil when
	// not learned.
	Ticks []time.Duration
	// Outage is the store's outage in a fault round; Grace how long after it the 1.1× gate
	// applies again (loadtest's recovery grace).
	Outage result.Interval
	Grace  time.Duration
	// Far are the replicas of the topology's farthest zone (--zones: the zone the link faults
	// hit), in node order; nil without a topology. The zone families aim at them.
	Far []int
}

// Slice is a slice of the window: Window / Slices.
func (e Env) Slice() time.Duration { return e.Window / time.Duration(e.Slices) }

// spanFor is how long n requests take at rate per second.
func spanFor(n int, rate float64) time.Duration {
	return time.Duration(float64(n) / rate * float64(time.Second))
}

func (e Env) check() error {
	switch {
	case e.Limit < 1:
		return fmt.Errorf("limit must be >= 1 (got %d)", e.Limit)
	case e.Slices < 1 || e.Window < time.Duration(e.Slices)*time.Millisecond:
		return fmt.Errorf("window %v in %d slices: want at least a millisecond a slice", e.Window, e.Slices)
	case e.Replicas < 1:
		return fmt.Errorf("replicas must be >= 1 (got %d)", e.Replicas)
	case !(e.MaxRate > 0) || math.IsInf(e.MaxRate, 0):
		return fmt.Errorf("the generator's burst rate must be > 0 requests/s (got %v)", e.MaxRate)
	case e.Ticks != nil && len(e.Ticks) != e.Replicas:
		return fmt.Errorf("%d sync ticks learned for %d replicas", len(e.Ticks), e.Replicas)
	case slices.ContainsFunc(e.Far, func(j int) bool { return j < 0 || j >= e.Replicas }):
		return fmt.Errorf("the far zone's replicas %v are not all among the %d replicas", e.Far, e.Replicas)
	}
	return nil
}

// ParamSpec is one parameter a family is searched over: a range, how many points the coarse
// sweep puts on it, its unit, and whether it takes whole values only.
type ParamSpec struct {
	Name    string
	Unit    string
	Lo, Hi  float64
	Points  int
	Integer bool
}

// coarse is the sweep's points on the parameter: Points evenly over [Lo, Hi] (the middle
// for one point).
func (p ParamSpec) coarse() []float64 {
	if p.Points <= 1 || p.Hi <= p.Lo {
		return []float64{p.clamp((p.Lo + p.Hi) / 2)}
	}
	var out []float64
	for i := range p.Points {
		v := p.clamp(p.Lo + (p.Hi-p.Lo)*float64(i)/float64(p.Points-1))
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// step is the coarse sweep's spacing: refinement level k looks at step / 2^k either side.
func (p ParamSpec) step() float64 {
	if p.Points <= 1 {
		return (p.Hi - p.Lo) / 2
	}
	return (p.Hi - p.Lo) / float64(p.Points-1)
}

// clamp puts v in [Lo, Hi], on a whole value for an integer parameter, and rounds a real one
// to a part in 10⁶ of its range so that the same point reached two ways is one point.
func (p ParamSpec) clamp(v float64) float64 {
	v = min(max(v, p.Lo), p.Hi)
	if p.Integer {
		return min(max(math.Round(v), math.Ceil(p.Lo)), math.Floor(p.Hi))
	}
	if q := (p.Hi - p.Lo) / 1e6; q > 0 {
		v = p.Lo + math.Round((v-p.Lo)/q)*q
	}
	return v
}

// Part is one variant's traffic before it is placed in a round: its clients' requests in
// offsets from the round's origin, with their replicas. Period is how far it may be moved
// and keep its aim (a whole window for traffic aimed at a window edge, a slice for traffic
// aimed at a slice boundary, a sync interval for traffic aimed at sync ticks); 0 pins it.
type Part struct {
	Schedule schedule.Schedule
	Period   time.Duration
	// Alone, when > 0, keeps the part's requests alone on the generator: no other part's
	// request within Alone of any of them, so that each of its unpaced bursts leaves as fast as
	// the generator sends one burst, not spread over the time it takes to send another part's
	// burst beside it. Such a part aims at the gaps between its own requests only, so it is
	// placed at any whole rateBucket, not at multiples of Period (which a pressure level
	// still repeats it by).
	Alone time.Duration
}

// Family is one kind of aimed traffic: a schedule generator with parameters to search.
type Family struct {
	Name string
	Kind Kind
	// Doc says in a line what the traffic does, for the report.
	Doc string
	// NeedsTicks: the family aims at the replicas' sync ticks and is not run until they are
	// learned.
	NeedsTicks bool
	// NeedsFar: the family aims at the topology's far zone (Env.Far) and is stopped, saying
	// why, on a system without one.
	NeedsFar bool
	// ByName: the family is hunted only when named (--families), not in the default set.
	ByName bool
	// Unpaced: the family's bursts are sent as fast as the generator can, so how late their
	// requests leave is part of the traffic (the jitter a busy sender has): its variants are
	// judged on the send times achieved, never called generator-bound, in rounds of their own.
	Unpaced bool
	// Herd: a variant is a herd of many clients; it is not pressed further (the pressure
	// ladder herds single clients).
	Herd bool
	// Space is the parameters to search, in the environment of the run.
	Space func(Env) []ParamSpec
	// Build makes one variant's traffic from values in Space's order. It is pure: the same
	// environment, values and generator give the same part.
	Build func(env Env, v []float64, rng *rand.Rand) (Part, error)
}

// client is a variant's one client, at the declared limit and window; its ID is given when
// the variant is placed in a round.
func (e Env) client(pattern string) schedule.Client {
	return schedule.Client{ID: pattern, Limit: e.Limit, Window: e.Window, Pattern: pattern, Probe: true}
}

// builder collects one client's requests.
type builder struct {
	at      []time.Duration
	replica []int16
}

// burst adds n requests evenly over [from, from+span), the i-th at from + ⌊i·span/n⌋, to
// the replicas in turn starting at first.
func (b *builder) burst(from, span time.Duration, n, first, replicas int) {
	for i := range n {
		b.at = append(b.at, from+time.Duration(float64(span)*float64(i)/float64(n)))
		b.replica = append(b.replica, int16((first+i)%replicas))
	}
}

// burstOver adds n requests evenly over [from, from+span), to the given replicas in turn.
func (b *builder) burstOver(from, span time.Duration, n int, replicas []int) {
	for i := range n {
		b.at = append(b.at, from+time.Duration(float64(span)*float64(i)/float64(n)))
		b.replica = append(b.replica, int16(replicas[i%len(replicas)]))
	}
}

// burstTo adds n requests evenly over [from, from+span), all to one replica.
func (b *builder) burstTo(from, span time.Duration, n, replica int) {
	for i := range n {
		b.at = append(b.at, from+time.Duration(float64(span)*float64(i)/float64(n)))
		b.replica = append(b.replica, int16(replica))
	}
}

// add adds one request.
func (b *builder) add(at time.Duration, replica int) {
	b.at = append(b.at, at)
	b.replica = append(b.replica, int16(replica))
}

// part sorts the requests into a one-client schedule that lasts until tail after the last.
func (b *builder) part(c schedule.Client, period, tail time.Duration) (Part, error) {
	idx := make([]int, len(b.at))
	for i := range idx {
		idx[i] = i
	}
	// Stable by offset: requests at one instant keep the order they were added in.
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(b.at[x], b.at[y]) })
	s := schedule.Schedule{Clients: []schedule.Client{c}, Requests: make([]schedule.Request, len(idx))}
	for k, i := range idx {
		s.Requests[k] = schedule.Request{At: b.at[i], Replica: b.replica[i]}
		s.Duration = max(s.Duration, b.at[i]+tail)
	}
	if len(idx) == 0 {
		return Part{}, fmt.Errorf("%s: no requests", c.Pattern)
	}
	if s.Requests[0].At < 0 {
		return Part{}, fmt.Errorf("%s: a request at %v, before the round's origin", c.Pattern, s.Requests[0].At)
	}
	return Part{Schedule: s, Period: period}, s.Validate()
}
