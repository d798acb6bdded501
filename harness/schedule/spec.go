package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// Spec is everything a load test's schedule is built from: the same spec gives the same
// schedule on every machine, so each shard builds the whole schedule and sends its own
// clients, the judge rebuilds it to attribute every outcome, and a Kubernetes Job's pods are
// given it as flags. It is the one recipe of the schedule and of its time scale: every
// window and duration a run derives from the time scale is Scale's.
type Spec struct {
	TimeScale float64 `json:"time_scale"` // every duration ×F, every rate ×1/F; 1 is the documents' own time
	Rate      float64 `json:"rate_asked"` // background population's aggregate rate, req/s
	Clients   int     `json:"clients"`    // background population; HS1 200,000
	Seed      uint64  `json:"seed"`
	Replicas  int     `json:"replicas"` // replica URLs the requests are spread over
	// Away, when set, is a replica the harness kills (replica-kill): the requests it was
	// given in the window go to the others instead (RouteAround), the same on every machine.
	Away *Away `json:"away,omitempty"`
}

// CheckTimeScale is the one rule of a time scale asked for on a command line (--time-scale
// of loadtest, hunt, attack, bench --slice and deploy render): a number in (0, 1], 1 the
// documents' own time, 0.1 ten times faster. Past checkScale, which every schedule's scale
// meets, it refuses a scale above 1: a run is made faster than the documents, never slower.
func CheckTimeScale(f float64) error {
	if err := checkScale(f); err != nil || f > 1 {
		return fmt.Errorf("--time-scale must be in (0, 1] (got %v): 1 is the documents' own time, 0.1 ten times faster", f)
	}
	return nil
}

// checkScale is what every schedule's time scale must be: a finite number > 0. A target
// file whose window is longer than the documents' 60 s runs at a scale above 1.
func checkScale(f float64) error {
	if !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("time scale must be a finite number > 0 (got %v); use 1 for the document's own time, 0.1 for ten times faster", f)
	}
	return nil
}

// Away is a replica whose requests sent at offsets in [From, To) go to the others.
type Away struct {
	Replica int           `json:"replica"`
	From    time.Duration `json:"from_ns"`
	To      time.Duration `json:"to_ns"`
}

// Scale is d at the spec's time scale, to the nanosecond.
func (s Spec) Scale(d time.Duration) time.Duration { return scale(d, s.TimeScale) }

// Window is the documents' window at the spec's time scale: the window every replica is
// configured with, the edge the generator's shards start on, the interval the judge counts.
func (s Spec) Window() time.Duration { return s.Scale(limiters.DefaultWindow) }

// scale is d × f rounded to the nanosecond; Spec.Scale and Params.ScaledWindow are it.
func scale(d time.Duration, f float64) time.Duration {
	return time.Duration(math.Round(float64(d) * f))
}

// Class is a class of clients whose probes a schedule carries: their IDs start with Prefix
// and each is declared Limit requests per window. The patterns are laid over the documents'
// window at the spec's time scale, so a class declares no window of its own.
type Class struct {
	Name   string
	Prefix string // "" for the default class
	Limit  int
}

// DefaultClasses is the built-in replica's one class: the documents' rule for every client.
func DefaultClasses() []Class {
	return []Class{{Name: "default", Limit: limiters.DefaultLimit}}
}

// Build is a load test's traffic: the documents' probe clients of every class (their IDs
// prefixed with the class's Prefix) plus the background population in the first class, each
// request sent to a replica drawn from the seeded generator. Every caller that sends, splits
// or judges a schedule builds it here, so that they agree to the byte.
func Build(spec Spec, classes []Class) (Schedule, error) {
	if len(classes) == 0 {
		return Schedule{}, errors.New("no client class to build a schedule for: give at least the default class")
	}
	var parts []Schedule
	for _, c := range classes {
		probes, err := Probes(Params{Limit: c.Limit, Window: limiters.DefaultWindow, Scale: spec.TimeScale})
		if err != nil {
			return Schedule{}, err
		}
		prefixIDs(&probes, c.Prefix)
		parts = append(parts, probes)
	}
	p := Params{Limit: classes[0].Limit, Window: limiters.DefaultWindow, Scale: spec.TimeScale}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	bg := DefaultBackground(p, spec.Rate, parts[0].Duration)
	bg.Clients = spec.Clients
	back, err := NewBackground(bg, rng)
	if err != nil {
		return Schedule{}, fmt.Errorf("background population: %w", err)
	}
	prefixIDs(&back, classes[0].Prefix)
	s := Merge(append(parts, back)...)
	if err := s.AssignReplicas(spec.Replicas, rng); err != nil {
		return Schedule{}, err
	}
	if a := spec.Away; a != nil {
		if _, err := s.RouteAround(a.Replica, a.From, a.To); err != nil {
			return Schedule{}, err
		}
	}
	return s, nil
}

// prefixIDs puts prefix before every client ID of s.
func prefixIDs(s *Schedule, prefix string) {
	if prefix == "" {
		return
	}
	for i := range s.Clients {
		s.Clients[i].ID = prefix + s.Clients[i].ID
	}
}
