package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Background describes the population of well-behaved clients that carries
// the bulk of a run's load. Rate and Duration are wall-clock figures, the
// load asked of the harness, and are not scaled; the per-client window is
// Params.ScaledWindow, the window the replicas are configured with.
type Background struct {
	Params
	Clients  int           // population size; HS1 200,000
	Rate     float64       // aggregate requests per second; HS2 40,000 at peak
	Duration time.Duration // how long the population sends

	// Fill is the share of its limit a background client may use in any
	// window-long interval, in (0, 1]. Headroom below 1 keeps a client under
	// its limit when the sending jitter of the generator squeezes two of its
	// requests together. 0 means DefaultFill.
	Fill float64
	// Poisson makes arrivals a Poisson process; otherwise they are evenly
	// spaced at 1/Rate with a seeded jitter of up to Jitter of the spacing.
	Poisson bool
	Jitter  float64 // in [0, 1); ignored for Poisson arrivals
	// Prefix starts each client ID, followed by the client's number;
	// "" means "bg-".
	Prefix string
}

// DefaultFill is the share of the limit a background client uses at most.
const DefaultFill = 0.5

// DefaultBackground is the document's population at the given time scale,
// asked for the given rate and duration.
func DefaultBackground(p Params, rate float64, d time.Duration) Background {
	return Background{Params: p, Clients: DefaultClients, Rate: rate, Duration: d, Jitter: 0.5}
}

// Capacity is the largest aggregate rate, in requests per second, that the
// population can send while every client stays at or under Fill of its limit.
func (b Background) Capacity() float64 {
	return float64(b.Clients) * float64(b.perWindow()) / b.ScaledWindow().Seconds()
}

func (b Background) fill() float64 {
	if b.Fill == 0 {
		return DefaultFill
	}
	return b.Fill
}

// perWindow is how many requests a background client may send in any
// window-long interval.
func (b Background) perWindow() int {
	return max(1, int(math.Floor(b.fill()*float64(b.Limit))))
}

func (b Background) check() error {
	if err := b.Params.check(); err != nil {
		return err
	}
	switch {
	case b.Clients <= 0 || b.Clients > math.MaxInt32:
		return fmt.Errorf("background clients must be in 1..%d (got %d); HS1 is %d", math.MaxInt32, b.Clients, DefaultClients)
	case !(b.Rate > 0) || math.IsInf(b.Rate, 0):
		return fmt.Errorf("background rate must be a finite number of requests per second > 0 (got %v)", b.Rate)
	case b.Duration <= 0:
		return fmt.Errorf("background duration must be > 0 (got %v)", b.Duration)
	case !(b.fill() > 0 && b.fill() <= 1):
		return fmt.Errorf("background fill must be in (0, 1] (got %v)", b.Fill)
	case !(b.Jitter >= 0 && b.Jitter < 1):
		return fmt.Errorf("background jitter must be in [0, 1) of the spacing (got %v)", b.Jitter)
	case b.Rate > b.Capacity():
		return fmt.Errorf("background rate %v req/s is more than %d clients can send at %d per %v each (%.0f req/s); add clients, raise Fill or lower the rate",
			b.Rate, b.Clients, b.perWindow(), b.ScaledWindow(), b.Capacity())
	}
	n := b.Rate * b.Duration.Seconds()
	if n > math.MaxInt32 {
		return fmt.Errorf("background of %v req/s for %v is %.0f requests, more than a schedule holds (%d)", b.Rate, b.Duration, n, math.MaxInt32)
	}
	return nil
}

// NewBackground builds the background population's schedule from rng.
//
// Arrivals come at the aggregate rate; each goes to a client drawn at random
// among those whose previous request is at least Window/(Fill·Limit) earlier.
// Keeping that spacing bounds every client's count in any half-open
// window-long interval by Fill·Limit, so no background client exceeds its
// limit and any rejection of one is a false rejection.
func NewBackground(b Background, rng *rand.Rand) (Schedule, error) {
	if err := b.check(); err != nil {
		return Schedule{}, err
	}
	w := b.ScaledWindow()
	gap := w / time.Duration(b.perWindow())
	if gap*time.Duration(b.perWindow()) < w {
		gap++ // round up: k requests spaced by gap must span at least (k-1)·gap ≥ W
	}
	prefix := b.Prefix
	if prefix == "" {
		prefix = "bg-"
	}
	s := Schedule{Clients: make([]Client, b.Clients), Duration: b.Duration}
	ids := numberedIDs(prefix, b.Clients)
	for i := range s.Clients {
		s.Clients[i] = Client{ID: ids[i], Limit: b.Limit, Window: w, Pattern: PatternBackground}
	}

	period := float64(time.Second) / b.Rate
	expect := b.Rate * b.Duration.Seconds()
	if b.Poisson {
		s.Requests = make([]Request, 0, int(expect+6*math.Sqrt(expect)+16))
	} else {
		s.Requests = make([]Request, 0, int(expect))
	}
	// last[c] is the offset of client c's latest request; a client is free
	// when last[c]+gap ≤ t. Starting at -gap makes every client free at 0.
	last := make([]time.Duration, b.Clients)
	for i := range last {
		last[i] = -gap
	}
	pick := func(t time.Duration) (int32, error) {
		for range 8 {
			c := rng.IntN(b.Clients)
			if last[c]+gap <= t {
				last[c] = t
				return int32(c), nil
			}
		}
		// Near capacity random draws mostly hit busy clients; walk from a
		// random one to the next free one so the draw still terminates.
		start := rng.IntN(b.Clients)
		for k := range b.Clients {
			c := (start + k) % b.Clients
			if last[c]+gap <= t {
				last[c] = t
				return int32(c), nil
			}
		}
		return 0, fmt.Errorf("at %v no background client is free: %d clients at %d per %v cannot carry %v req/s with this arrival process; add clients or lower the rate",
			t, b.Clients, b.perWindow(), w, b.Rate)
	}

	if b.Poisson {
		t := 0.0
		for {
			t += rng.ExpFloat64() * period
			at := time.Duration(t)
			if at >= b.Duration {
				break
			}
			c, err := pick(at)
			if err != nil {
				return Schedule{}, err
			}
			s.Requests = append(s.Requests, Request{At: at, Client: c})
		}
		return s, nil
	}
	// The i-th arrival lies in [i, i+Jitter)·period; with Jitter < 1 the
	// arrivals stay in order without sorting.
	for i := range int(expect) {
		at := min(time.Duration((float64(i)+b.Jitter*rng.Float64())*period), b.Duration-1)
		c, err := pick(at)
		if err != nil {
			return Schedule{}, err
		}
		s.Requests = append(s.Requests, Request{At: at, Client: c})
	}
	return s, nil
}

// numberedIDs is prefix followed by 0..n-1 padded to one width (pad), as substrings of one
// string: a 200,000-client population then costs two allocations, not 400,000, and the
// collector has one object to mark where it had a population. The numbers are padded
// with zeros to one width so that client IDs sort in client order.
func numberedIDs(prefix string, n int) []string {
	digits := len(strconv.Itoa(n - 1))
	width := len(prefix) + digits
	var b strings.Builder
	b.Grow(n * width)
	var num [20]byte
	for i := range n {
		d := strconv.AppendInt(num[:0], int64(i), 10)
		b.WriteString(prefix)
		for range digits - len(d) {
			b.WriteByte('0')
		}
		b.Write(d)
	}
	all := b.String()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = all[i*width : (i+1)*width]
	}
	return ids
}
