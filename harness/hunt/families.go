package hunt

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// Family names, as hunt.json and the schedule files give them.
const (
	FamilyEdge          = "window-edge"
	FamilyRefill        = "refill"
	FamilySliceDrop     = "slice-drop"
	FamilySpread        = "spread-instant"
	FamilyFresh         = "fresh-client"
	FamilySyncTick      = "sync-tick"
	FamilyFault         = "store-fault"
	FamilyAtLimitPaced  = "at-limit-paced"
	FamilyAtLimitBursts = "at-limit-bursts"
	FamilyAtLimitSpread = "at-limit-spread"
	FamilyWindowApart   = "window-apart"
	FamilyWindowHerd    = "window-apart-herd"
	FamilyPartitionEdge = "partition-edge"
	FamilyFarClient     = "far-zone-client"
)

// Families are every family of aimed traffic, in the order the report lists them: the
// default set, then those hunted only when named (Family.ByName).
func Families() []Family {
	return []Family{edge(), refill(), sliceDrop(), spread(), fresh(), syncTick(), storeFault(), atLimitPaced(), atLimitBursts(),
		atLimitSpread(), windowApart(), windowApartHerd(), partitionEdge(), farClient()}
}

// DefaultFamilies are the families hunted when none is named.
func DefaultFamilies() []Family {
	var out []Family
	for _, f := range Families() {
		if !f.ByName {
			out = append(out, f)
		}
	}
	return out
}

// FamilyNames are the families' names in order.
func FamilyNames() []string {
	var out []string
	for _, f := range Families() {
		out = append(out, f.Name)
	}
	return out
}

// ms is a duration in milliseconds, as parameters carry it.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fromMS is a parameter's milliseconds as a duration.
func fromMS(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

// rateSpec is a burst's pace, from a quarter of the generator's burst rate to all of it,
// and at least fast enough to send n requests within maxSpan.
func rateSpec(e Env, n int, maxSpan time.Duration, points int) ParamSpec {
	lo := max(e.MaxRate/4, float64(n)/maxSpan.Seconds())
	return ParamSpec{Name: "rate", Unit: "req/s", Lo: min(lo, e.MaxRate), Hi: e.MaxRate, Points: points}
}

// edge is the fixed window's weak point: the limit just before a window edge and again just
// after it (the documents' boundary burst, aimed: as short as the generator can send it).
func edge() Family {
	return Family{
		Name: FamilyEdge, Kind: Attack,
		Doc: "the limit in a burst ending just before a window edge and again starting just after it",
		Space: func(e Env) []ParamSpec {
			s := e.Slice()
			return []ParamSpec{
				rateSpec(e, e.Limit, s, 3),
				{Name: "gap", Unit: "ms", Lo: 0, Hi: ms(s / 2), Points: 3},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			span, gap := spanFor(e.Limit, v[0]), fromMS(v[1])
			edge := e.FirstEdge
			for edge < gap+span {
				edge += e.Window
			}
			var b builder
			b.burst(edge-gap-span, span, e.Limit, 0, e.Replicas)
			b.burst(edge+gap, span, e.Limit, e.Limit, e.Replicas)
			return b.part(e.client(FamilyEdge), e.Window, e.Slice())
		},
	}
}

// refill is the token bucket's (and GCRA's) weak point: the whole burst allowance at once,
// then a steady stream at or above the refill rate for a window.
func refill() Family {
	return Family{
		Name: FamilyRefill, Kind: Attack,
		Doc: "the limit in a burst, then a steady stream at pace × the refill rate (limit per window) for a window",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				rateSpec(e, e.Limit, e.Slice(), 2),
				{Name: "pace", Unit: "× limit/window", Lo: 1, Hi: 2, Points: 3},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			span := spanFor(e.Limit, v[0])
			t0 := e.Slice() / 2
			var b builder
			b.burst(t0, span, e.Limit, 0, e.Replicas)
			n := int(math.Round(v[1] * float64(e.Limit)))
			b.burst(t0+span, e.Window, n, e.Limit, e.Replicas)
			return b.part(e.client(FamilyRefill), e.Slice(), e.Slice())
		},
	}
}

// sliceDrop is the sliced window's weak point: the limit at the end of a slice, and again
// right after the slice that holds it drops out of the window, W − slice later.
func sliceDrop() Family {
	return Family{
		Name: FamilySliceDrop, Kind: Attack,
		Doc: "the limit in a burst ending lead before a slice boundary, and again lag after that slice drops out of the window",
		Space: func(e Env) []ParamSpec {
			s := e.Slice()
			return []ParamSpec{
				// A burst as short as the generator can make it: the shorter, the more of
				// both bursts falls in one window (1 + (slice − span − lead − lag) / span,
				// at most 2).
				rateSpec(e, e.Limit, s*9/10, 3),
				// A margin for the arrivals' jitter either side.
				{Name: "lead", Unit: "ms", Lo: 0, Hi: ms(s / 10), Points: 2},
				{Name: "lag", Unit: "ms", Lo: 0, Hi: ms(s / 10), Points: 2},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			s := e.Slice()
			span, lead, lag := spanFor(e.Limit, v[0]), fromMS(v[1]), fromMS(v[2])
			if span+lead > s {
				return Part{}, fmt.Errorf("%s: a burst of %v ending %v before the boundary does not fit in a slice of %v", FamilySliceDrop, span, lead, s)
			}
			boundary := (lead + span + s - 1) / s * s // the first slice boundary the burst fits before
			var b builder
			b.burst(boundary-lead-span, span, e.Limit, 0, e.Replicas)
			b.burst(boundary-s+e.Window+lag, span, e.Limit, e.Limit, e.Replicas)
			return b.part(e.client(FamilySliceDrop), s, s)
		},
	}
}

// spread is the delayed sync's weak point: more than the limit split over every replica at
// one instant, each replica seeing less than the limit before they next sync.
func spread() Family {
	return Family{
		Name: FamilySpread, Kind: Attack,
		Doc: "share × limit split over every replica right after a slice boundary, repeated at the next boundaries",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "share", Unit: "× limit", Lo: 1.25, Hi: 3, Points: 3},
				rateSpec(e, 1, time.Second, 2),
				{Name: "repeat", Lo: 1, Hi: 2, Points: 2, Integer: true},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			s := e.Slice()
			n := int(math.Round(v[0] * float64(e.Limit)))
			span := spanFor(n, v[1])
			every := (span + s) / s * s // whole slices, past the burst
			var b builder
			for k := range int(v[2]) {
				b.burst(s+time.Duration(k)*every, span, n, 0, e.Replicas)
			}
			return b.part(e.client(FamilySpread), s, s)
		},
	}
}

// fresh is a client no replica has seen sending up to its limit to each replica: every
// replica decides it alone until the next sync.
func fresh() Family {
	return Family{
		Name: FamilyFresh, Kind: Attack,
		Doc: "a fresh client sends share × limit to each replica, interleaved (order 0) or replica after replica (order 1)",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "share", Unit: "× limit per replica", Lo: 0.25, Hi: 1, Points: 2},
				rateSpec(e, 1, time.Second, 2),
				{Name: "order", Lo: 0, Hi: 1, Points: 2, Integer: true},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			n := max(1, int(math.Round(v[0]*float64(e.Limit))))
			t0 := e.Slice() / 2
			var b builder
			if v[2] == 0 {
				b.burst(t0, spanFor(n*e.Replicas, v[1]), n*e.Replicas, 0, e.Replicas)
			} else {
				each := spanFor(n, v[1])
				for j := range e.Replicas {
					b.burstTo(t0+time.Duration(j)*each, each, n, j)
				}
			}
			return b.part(e.client(FamilyFresh), e.Slice(), e.Slice())
		},
	}
}

// syncTick aims at each replica's sync ticks, as learned: a burst right after the tick has
// a whole interval before the replica tells the others.
func syncTick() Family {
	return Family{
		Name: FamilySyncTick, Kind: Attack, NeedsTicks: true,
		Doc: "per requests to each replica delay after each of its sync ticks (the phase learned from responses), until twice the limit is sent",
		Space: func(e Env) []ParamSpec {
			most := max(1, math.Floor(e.MaxRate*e.Interval.Seconds()/float64(e.Replicas)))
			return []ParamSpec{
				{Name: "delay", Unit: "ms", Lo: 0, Hi: ms(e.Interval * 3 / 4), Points: 3},
				{Name: "per", Unit: "requests", Lo: max(1, math.Floor(most/3)), Hi: most, Points: 2, Integer: true},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			if e.Ticks == nil || e.Interval <= 0 {
				return Part{}, fmt.Errorf("%s: the replicas' sync ticks were not learned", FamilySyncTick)
			}
			delay, per := fromMS(v[0]), int(v[1])
			ticks := (2*e.Limit + per*e.Replicas - 1) / (per * e.Replicas)
			span := spanFor(per*e.Replicas, e.MaxRate)
			start := e.Slice() / 2
			var b builder
			for j, tick := range e.Ticks {
				for tick < start {
					tick += e.Interval
				}
				for k := range ticks {
					b.burstTo(tick+time.Duration(k)*e.Interval+delay, span, per, j)
				}
			}
			return b.part(e.client(FamilySyncTick), e.Interval, e.Slice())
		},
	}
}

// storeFault aims at a store fault: a burst while the store is away, then twice the limit once
// it is back and the recovery grace is over.
func storeFault() Family {
	return Family{
		Name: FamilyFault, Kind: Fault,
		Doc: "share × limit over every replica at when × the outage (negative: before it), then twice the limit lag after the recovery grace",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "when", Unit: "× outage", Lo: -0.2, Hi: 0.8, Points: 2},
				{Name: "share", Unit: "× limit", Lo: 1, Hi: float64(e.Replicas) + 1, Points: 2},
				// After the grace, and later: the store's return is measured, and may come
				// a little after its planned end.
				{Name: "lag", Unit: "ms", Lo: ms(e.Slice()), Hi: ms(e.Window / 2), Points: 2},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			o := e.Outage
			if o.To <= o.From {
				return Part{}, fmt.Errorf("%s: no outage in this round", FamilyFault)
			}
			n := int(math.Round(v[1] * float64(e.Limit)))
			at := o.From + time.Duration(v[0]*float64(o.To-o.From))
			var b builder
			b.burst(at, spanFor(n, e.MaxRate), n, 0, e.Replicas)
			b.burst(o.To+e.Grace+fromMS(v[2]), spanFor(2*e.Limit, e.MaxRate), 2*e.Limit, n, e.Replicas)
			return b.part(e.client(FamilyFault), 0, e.Slice())
		},
	}
}

// atLimitWindows is how many windows an at-limit client sends for.
const atLimitWindows = 3

// atLimitPaced is the well-behaved client: exactly its limit every window, evenly paced with
// jitter, over random replicas. Its jitter repeats every window, so no window-long interval
// holds more than the limit.
func atLimitPaced() Family {
	return Family{
		Name: FamilyAtLimitPaced, Kind: AtLimit,
		Doc: "exactly the limit in every window, evenly paced with jitter × the spacing (the same each window), over random replicas",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{{Name: "jitter", Unit: "× spacing", Lo: 0, Hi: 0.9, Points: 3}}
		},
		Build: func(e Env, v []float64, rng *rand.Rand) (Part, error) {
			// The spacing rounded up: L spacings span at least the window.
			gap := (e.Window + time.Duration(e.Limit) - 1) / time.Duration(e.Limit)
			shift := make([]time.Duration, e.Limit)
			for i := range shift {
				shift[i] = time.Duration(rng.Float64() * v[0] * float64(gap))
			}
			var b builder
			for i := range atLimitWindows * e.Limit {
				b.add(e.FirstEdge+time.Duration(i)*gap+shift[i%e.Limit], rng.IntN(e.Replicas))
			}
			return b.part(e.client(FamilyAtLimitPaced), e.Window, e.Slice())
		},
	}
}

// atLimitBursts is the well-behaved bursty client: exactly its limit in one burst a window
// apart, at a fixed place in the window, over the replicas in turn.
func atLimitBursts() Family {
	return Family{
		Name: FamilyAtLimitBursts, Kind: AtLimit,
		Doc: "exactly the limit in one burst every window, offset into the window, over the replicas in turn",
		Space: func(e Env) []ParamSpec {
			s := e.Slice()
			return []ParamSpec{
				{Name: "offset", Unit: "ms", Lo: 0, Hi: ms(e.Window - s), Points: 3},
				rateSpec(e, e.Limit, s, 2),
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			return limitEveryWindow(e, FamilyAtLimitBursts, fromMS(v[0]), spanFor(e.Limit, v[1]))
		},
	}
}

// atLimitSpread is the well-behaved client whose burst the network spreads: exactly its limit
// every window, spread evenly over tens of milliseconds, at the same offset into every window,
// over the replicas in turn. A limiter that admits it in one window must admit it in the next.
func atLimitSpread() Family {
	return Family{
		Name: FamilyAtLimitSpread, Kind: AtLimit,
		Doc: "exactly the limit every window, spread evenly over spread ms at the same offset into every window, over the replicas in turn",
		Space: func(e Env) []ParamSpec {
			s := e.Slice()
			return []ParamSpec{
				{Name: "offset", Unit: "ms", Lo: 0, Hi: ms(e.Window - s), Points: 3},
				{Name: "spread", Unit: "ms", Lo: 40, Hi: min(160, ms(s)), Points: 3},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			return limitEveryWindow(e, FamilyAtLimitSpread, fromMS(v[0]), fromMS(v[1]))
		},
	}
}

// limitEveryWindow is an at-limit client's traffic: exactly its limit, sent over span at off
// into each of atLimitWindows windows, over the replicas in turn.
func limitEveryWindow(e Env, family string, off, span time.Duration) (Part, error) {
	var b builder
	for k := range atLimitWindows {
		b.burst(e.FirstEdge+time.Duration(k)*e.Window+off, span, e.Limit, k*e.Limit, e.Replicas)
	}
	return b.part(e.client(family), e.Window, e.Slice())
}

// windowApart is two bursts of the limit a window apart less gap, each sent as fast as the
// generator can. By send time the second burst falls in the first's window (2× the limit); a
// limiter decides on arrivals, which an unpaced burst spreads over the time the generator and
// the network take to deliver it. It is judged on arrival bounds, as every variant is: a
// limiter that decides exactly on arrivals holds it there, one that takes arrivals a little
// less than a window apart to be a window apart does not.
//
// On arrival bounds a limiter with margin m shows only where the second burst's answers come
// back within the gap: with the bursts leaving over s and answered λ after they left, the
// admissions surely inside one window-long interval are about L(1 + (gap − λ)/s) for gap < m,
// so the gaps are dense over the first tens of milliseconds (whatever m is, one point lies a
// few milliseconds under it) and each variant is kept alone on the generator (Part.Alone): no
// other request within the time the generator takes to send a burst of the limit at
// drainFactor × the burst rate, so that its bursts leave in milliseconds, not spread over the
// sending of a herd's burst beside them.
func windowApart() Family {
	return Family{
		Name: FamilyWindowApart, Kind: Attack, Unpaced: true,
		Doc: "the limit at once, then the limit again a window less gap later (both unpaced, alone on the generator)",
		Space: func(e Env) []ParamSpec {
			// Points about 3.5 ms apart from 1 ms to 40 ms: the second burst lands around the
			// first's arrivals a window later, where a margin of tens of milliseconds shows.
			return []ParamSpec{{Name: "gap", Unit: "ms", Lo: 1, Hi: min(40, ms(e.Slice()/10)), Points: windowApartGaps}}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			gap := fromMS(v[0])
			t0 := e.Slice() / 2
			var b builder
			b.burst(t0, 0, e.Limit, 0, e.Replicas)
			b.burst(t0+e.Window-gap, 0, e.Limit, e.Limit, e.Replicas)
			p, err := b.part(e.client(FamilyWindowApart), e.Slice(), e.Slice())
			p.Alone = spanFor(e.Limit, drainFactor*e.MaxRate)
			return p, err
		},
	}
}

// windowApartGaps is how many gaps the window-apart family's coarse sweep sends (the hunt's
// default --coarse: all of them in one round).
const windowApartGaps = 12

// herdBursts is how many bursts each client of a window-apart herd sends, a window apart.
const herdBursts = 3

// herdSize is the herd that asks the generator's burst rate on average: each client sends its
// limit once a window, so limit × herd per window (at the documents' time, 1,500 req/s and
// limit 600 per minute: 150 clients; at time scale 0.2, 30).
func herdSize(e Env) float64 {
	return max(2, math.Round(e.MaxRate*e.Window.Seconds()/float64(e.Limit)))
}

// windowApartHerd is the everyday client that sends its whole limit once a window (a cron
// job's quota every minute), hundreds of them at once from one busy sender: each client's
// bursts are a window apart as scheduled, each moved by up to jitter as a busy sender moves
// them, so some land a little less than a window apart and some a little more. The clients'
// first bursts are spread evenly over a window, each burst unpaced over the replicas in turn,
// so that the herd asks about the generator's burst rate on average and each burst's answers
// come back within the tens of milliseconds that arrival bounds need to tell bursts a window
// apart.
// A limiter that decides on arrivals must hold every client to 1.1× in every window-long
// interval on arrival bounds; the variant reports how many of the herd it did not.
func windowApartHerd() Family {
	return Family{
		Name: FamilyWindowHerd, Kind: Attack, Unpaced: true, Herd: true,
		Doc: "herd fresh clients, each its limit at once every window for 3 windows, each burst moved by up to jitter; first bursts spread over a window",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "herd", Unit: "clients", Lo: math.Ceil(herdSize(e) / 2), Hi: math.Floor(herdSize(e) * 3 / 2), Points: 1, Integer: true},
				{Name: "jitter", Unit: "ms", Lo: 0, Hi: min(80, ms(e.Slice()/10)), Points: 1},
			}
		},
		Build: func(e Env, v []float64, rng *rand.Rand) (Part, error) {
			herd, jitter := int(v[0]), fromMS(v[1])
			if herd < 1 {
				return Part{}, fmt.Errorf("%s: a herd of %d clients", FamilyWindowHerd, herd)
			}
			t0 := e.Slice() / 2
			spread := e.Window
			s := schedule.Schedule{Clients: make([]schedule.Client, herd)}
			for c := range herd {
				s.Clients[c] = e.client(FamilyWindowHerd)
				first := t0 + time.Duration(c)*spread/time.Duration(herd)
				for k := range herdBursts {
					at := first + time.Duration(k)*e.Window + time.Duration(rng.Float64()*float64(jitter))
					for i := range e.Limit {
						s.Requests = append(s.Requests, schedule.Request{At: at, Client: int32(c), Replica: int16((c + k*e.Limit + i) % e.Replicas)})
					}
					s.Duration = max(s.Duration, at+e.Slice())
				}
			}
			slices.SortStableFunc(s.Requests, func(a, b schedule.Request) int { return cmp.Compare(a.At, b.At) })
			return Part{Schedule: s, Period: e.Slice()}, s.Validate()
		},
	}
}

// partitionEdge aims at the two instants a partition of the far zone changes what its
// replicas know: its start (the cut replicas learning, with calls in flight, that the store
// is gone) and its heal (the cut replicas back, with what they admitted alone). A burst at
// offset from the instant, over every replica or the far zone's only, then twice the limit
// after the recovery grace, judged as a fault round is. Only on a topology (Env.Far).
func partitionEdge() Family {
	return Family{
		Name: FamilyPartitionEdge, Kind: Fault, ByName: true, NeedsFar: true,
		Doc: "share × limit at offset from the far zone's partition's start (edge 0) or heal (edge 1), over every replica (zone 0) or the far zone's (zone 1), then twice the limit after the recovery grace",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "edge", Lo: 0, Hi: 1, Points: 2, Integer: true},
				{Name: "offset", Unit: "ms", Lo: -ms(e.Slice() / 2), Hi: ms(e.Slice() / 2), Points: 3},
				{Name: "share", Unit: "× limit", Lo: 1, Hi: float64(max(1, len(e.Far))) + 1, Points: 2},
				{Name: "zone", Lo: 0, Hi: 1, Points: 2, Integer: true},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			o := e.Outage
			switch {
			case len(e.Far) == 0:
				return Part{}, fmt.Errorf("%s: no far zone: hunt on a topology (--zones)", FamilyPartitionEdge)
			case o.To <= o.From:
				return Part{}, fmt.Errorf("%s: no partition in this round", FamilyPartitionEdge)
			}
			at := o.From
			if v[0] == 1 {
				at = o.To
			}
			at += fromMS(v[1])
			n := int(math.Round(v[2] * float64(e.Limit)))
			var b builder
			if v[3] == 1 {
				b.burstOver(at, spanFor(n, e.MaxRate), n, e.Far)
			} else {
				b.burst(at, spanFor(n, e.MaxRate), n, 0, e.Replicas)
			}
			b.burst(o.To+e.Grace+e.Slice(), spanFor(2*e.Limit, e.MaxRate), 2*e.Limit, n, e.Replicas)
			return b.part(e.client(FamilyPartitionEdge), 0, e.Slice())
		},
	}
}

// farClient is a client that sends only to the far zone: a fresh client's share × limit to
// each of the far zone's replicas, interleaved (order 0) or replica after replica (order 1).
// Replicas that wait a long round trip for their store, or stop waiting for it, are where
// such a client gets more than its limit. Only on a topology (Env.Far).
func farClient() Family {
	return Family{
		Name: FamilyFarClient, Kind: Attack, ByName: true, NeedsFar: true,
		Doc: "a fresh client sends share × limit to each replica of the far zone only, interleaved (order 0) or replica after replica (order 1)",
		Space: func(e Env) []ParamSpec {
			return []ParamSpec{
				{Name: "share", Unit: "× limit per replica", Lo: 0.5, Hi: 1, Points: 2},
				rateSpec(e, 1, time.Second, 2),
				{Name: "order", Lo: 0, Hi: 1, Points: 2, Integer: true},
			}
		},
		Build: func(e Env, v []float64, _ *rand.Rand) (Part, error) {
			if len(e.Far) == 0 {
				return Part{}, fmt.Errorf("%s: no far zone: hunt on a topology (--zones)", FamilyFarClient)
			}
			n := max(1, int(math.Round(v[0]*float64(e.Limit))))
			t0 := e.Slice() / 2
			var b builder
			if v[2] == 0 {
				b.burstOver(t0, spanFor(n*len(e.Far), v[1]), n*len(e.Far), e.Far)
			} else {
				each := spanFor(n, v[1])
				for k, j := range e.Far {
					b.burstTo(t0+time.Duration(k)*each, each, n, j)
				}
			}
			return b.part(e.client(FamilyFarClient), e.Slice(), e.Slice())
		},
	}
}
