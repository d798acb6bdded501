package accounting

import (
	"fmt"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
)

// zoneAccount is what the accumulator keeps of a topology: each replica's zone and the
// answer times by zone.
type zoneAccount struct {
	of      []int8 // by replica index
	names   []string
	members [][]int
	links   []result.LinkFigures
	latency []*Latency
}

// Zone is one zone as SetZones takes it.
type Zone struct {
	Name     string
	Replicas []int // node indexes
	Link     result.LinkFigures
}

// SetZones says which zone each replica is in, so that Report gives the figures per zone
// (Report.Zones). Call it before the first Add; every replica the schedule sends to must be
// in one zone.
func (a *Accumulator) SetZones(zones []Zone) error {
	if a.outcomes > 0 {
		return fmt.Errorf("zones set after %d outcomes: set them before the first", a.outcomes)
	}
	if len(zones) > 127 {
		return fmt.Errorf("%d zones: at most 127", len(zones))
	}
	z := &zoneAccount{of: make([]int8, len(a.replica))}
	for i := range z.of {
		z.of[i] = -1
	}
	for k, zn := range zones {
		for _, r := range zn.Replicas {
			if r < 0 || r >= len(z.of) {
				continue // a replica the schedule never sends to
			}
			if z.of[r] >= 0 {
				return fmt.Errorf("replica %d is in zones %s and %s", r, z.names[z.of[r]], zn.Name)
			}
			z.of[r] = int8(k)
		}
		z.names = append(z.names, zn.Name)
		z.members = append(z.members, zn.Replicas)
		z.links = append(z.links, zn.Link)
		z.latency = append(z.latency, NewLatency())
	}
	for r, k := range z.of {
		if k < 0 {
			return fmt.Errorf("the schedule sends to replica %d, which no zone holds", r)
		}
	}
	a.zones = z
	return nil
}

// zoneOf is request i's zone, -1 without zones.
func (a *Accumulator) zoneOf(i int32) int8 {
	if a.zones == nil {
		return -1
	}
	return a.zones.of[a.s.Requests[i].Replica]
}

// zoneClient is one client's account in one zone, built beside its whole account.
type zoneClient struct {
	accepted         []span // the zone's acceptances, sent and answered
	requests, homeOf int
}

// zoneTally is the run's per-zone account as the clients are scanned.
type zoneTally struct {
	figures []result.ZoneFigures
	clients []zoneClient // by zone, reset for each client
	arrival arrivalScratch
}

func (a *Accumulator) newZoneTally() *zoneTally {
	if a.zones == nil {
		return nil
	}
	t := &zoneTally{clients: make([]zoneClient, len(a.zones.names))}
	for k, name := range a.zones.names {
		t.figures = append(t.figures, result.ZoneFigures{Zone: name, Replicas: a.zones.members[k], Link: a.zones.links[k]})
	}
	return t
}

// begin starts a client.
func (t *zoneTally) begin() {
	if t == nil {
		return
	}
	for k := range t.clients {
		t.clients[k].accepted = t.clients[k].accepted[:0]
		t.clients[k].requests = 0
	}
}

// add counts one of the client's outcomes in zone k.
func (t *zoneTally) add(k int8, c class, s span, inFault bool) {
	if t == nil {
		return
	}
	f, zc := &t.figures[k], &t.clients[k]
	f.Requests++
	zc.requests++
	switch c {
	case accepted:
		f.Accepted++
		zc.accepted = append(zc.accepted, s)
	case rejected:
		f.Rejected++
	default:
		addError(&f.Errors, c)
		if inFault {
			f.ErrorsInFault++
		}
	}
}

// falseReject counts one of the client's false rejections in zone k.
func (t *zoneTally) falseReject(k int8) {
	if t != nil && k >= 0 {
		t.figures[k].FalseRejects++
	}
}

// end closes a client: its overshoot in each zone, and its lock-out in the zone that got
// most of its requests.
func (t *zoneTally) end(cr result.ClientReport, window time.Duration, minShare float64) {
	if t == nil {
		return
	}
	home := -1
	for k := range t.clients {
		zc := &t.clients[k]
		if home < 0 || zc.requests > t.clients[home].requests {
			home = k
		}
		if cr.Limit <= 0 || len(zc.accepted) == 0 {
			continue
		}
		over := float64(busiestArrived(zc.accepted, window, &t.arrival)) / float64(cr.Limit)
		if f := &t.figures[k]; over > f.Overshoot {
			f.Overshoot, f.OvershootClient = over, cr.ID
		}
	}
	if home >= 0 && cr.SteadyWindows > 0 {
		t.figures[home].SteadyClients++
		if cr.SteadyShareArrival < minShare {
			t.figures[home].LockedOut++
		}
	}
}

// report finishes the figures with the answer times.
func (t *zoneTally) report(z *zoneAccount) []result.ZoneFigures {
	if t == nil {
		return nil
	}
	for k := range t.figures {
		t.figures[k].Latency = z.latency[k].Percentiles()
	}
	return t.figures
}
