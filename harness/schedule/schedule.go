// Package schedule holds traffic as a value: every request's intended offset
// from the start, its client and the replica it goes to, computed in advance
// from a seed. The same schedule can be sent twice, inspected before it is
// sent, and compared with what was measured, because nothing about it is
// decided while the run is going.
package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Figures of the rate-limiter document (000) about its traffic; the limiter's own (limit and
// window HS3, nodes HS4, slices HS7) are limiters', spelled there only.
const (
	// DefaultClients is the number of distinct keys the limit is applied to. HS1
	DefaultClients = 200_000
	// PeakRate is the total request rate through the limiter at peak, per second. HS2
	PeakRate = 40_000
	// SyncStressFactor is how many times the limit rate the delayed-sync stress
	// client sends: dagitik.mjs's 90/s against 600 per 60 s (10/s).
	SyncStressFactor = 9
	// ModelWindows is the length of the pencere.mjs model (180 s) in windows.
	ModelWindows = 3
)

// Request is one scheduled request. It is kept to 16 bytes so that ten
// million of them fit in 160 MB; everything that is the same for many
// requests lives in Client.
type Request struct {
	At      time.Duration // offset from the start of the run
	Client  int32         // index into Schedule.Clients
	Replica int16         // index into the replica URLs the schedule is sent to
}

// Client is one rate-limited client as the schedule declares it: the limit
// and window the limiter is expected to enforce for it, already scaled.
type Client struct {
	ID      string        // value of the client header (X-Client-ID)
	Limit   int           // requests allowed in any Window-long interval
	Window  time.Duration // the declared window after time scaling
	Pattern string        // the pattern that produced the client's requests
	Probe   bool          // a single client driven at or over its limit on purpose
}

// Schedule is a whole run's traffic. Requests are sorted by At.
type Schedule struct {
	Requests []Request
	Clients  []Client
	Duration time.Duration // length of the run; no request is at or after it
}

// Validate reports the first way in which s is not a usable schedule.
func (s *Schedule) Validate() error {
	if s.Duration <= 0 {
		return fmt.Errorf("schedule duration must be > 0 (got %v)", s.Duration)
	}
	for i, c := range s.Clients {
		if c.ID == "" {
			return fmt.Errorf("client %d has an empty ID", i)
		}
		if c.Limit <= 0 || c.Window <= 0 {
			return fmt.Errorf("client %q: limit and window must be > 0 (got %d per %v)", c.ID, c.Limit, c.Window)
		}
	}
	if len(s.Requests) > math.MaxInt32 {
		return fmt.Errorf("schedule has %d requests, more than %d; split the run", len(s.Requests), math.MaxInt32)
	}
	var prev time.Duration
	for i, r := range s.Requests {
		if r.At < prev {
			return fmt.Errorf("request %d at %v comes before request %d at %v: requests must be sorted by At", i, r.At, i-1, prev)
		}
		if r.At < 0 || r.At >= s.Duration {
			return fmt.Errorf("request %d at %v is outside the schedule's duration [0, %v)", i, r.At, s.Duration)
		}
		if r.Client < 0 || int(r.Client) >= len(s.Clients) {
			return fmt.Errorf("request %d names client %d, but the schedule has %d clients", i, r.Client, len(s.Clients))
		}
		if r.Replica < 0 {
			return fmt.Errorf("request %d names replica %d", i, r.Replica)
		}
		prev = r.At
	}
	return nil
}

// Replicas is one more than the highest replica index any request names:
// how many replica URLs the schedule needs.
func (s *Schedule) Replicas() int {
	n := 0
	for _, r := range s.Requests {
		n = max(n, int(r.Replica)+1)
	}
	return n
}

// AssignReplicas sends each request to one of k replicas, chosen uniformly by
// rng. Patterns are built without replicas so that the same traffic can be
// spread over any number of them.
func (s *Schedule) AssignReplicas(k int, rng *rand.Rand) error {
	if k < 1 || k > 1<<15-1 {
		return fmt.Errorf("replica count must be in 1..32767 (got %d)", k)
	}
	for i := range s.Requests {
		s.Requests[i].Replica = int16(rng.IntN(k))
	}
	return nil
}

// Merge combines pattern schedules into one sorted schedule. Client indexes
// are renumbered so that each part's clients follow the previous parts';
// requests at the same offset keep the order of the parts. The result's
// duration is the longest part's.
func Merge(parts ...Schedule) Schedule {
	var out Schedule
	total := 0
	for _, p := range parts {
		total += len(p.Requests)
		out.Duration = max(out.Duration, p.Duration)
	}
	out.Requests = make([]Request, 0, total)
	base := make([]int32, len(parts))
	for i, p := range parts {
		base[i] = int32(len(out.Clients))
		out.Clients = append(out.Clients, p.Clients...)
	}
	// A linear scan over the heads is cheaper than a heap for the handful of
	// parts a run has (one background and a few probes).
	next := make([]int, len(parts))
	for len(out.Requests) < total {
		best := -1
		for i, p := range parts {
			if next[i] == len(p.Requests) {
				continue
			}
			if best < 0 || p.Requests[next[i]].At < parts[best].Requests[next[best]].At {
				best = i
			}
		}
		r := parts[best].Requests[next[best]]
		r.Client += base[best]
		out.Requests = append(out.Requests, r)
		next[best]++
	}
	return out
}

// ShardOf is the shard, of n, that sends every request of the client with
// index c: clients are dealt round-robin, so each client's requests are on
// exactly one shard and its counts are whole on that shard.
func ShardOf(c int32, n int) int { return int(c) % n }

// Shard is the part of s that shard i of n sends: the requests of the clients
// ShardOf puts on it, in order, with s's clients and duration unchanged so
// that client indexes mean the same on every shard. index[k] is the position
// in s of the part's request k, for outcomes to be attributed to the whole
// schedule.
func (s *Schedule) Shard(i, n int) (part Schedule, index []int32, err error) {
	if n < 1 || i < 0 || i >= n {
		return Schedule{}, nil, fmt.Errorf("shard %d/%d: want 0 <= i < n and n >= 1 (shards are numbered from 0)", i, n)
	}
	part = Schedule{Clients: s.Clients, Duration: s.Duration}
	if n == 1 {
		part.Requests = s.Requests
		index = make([]int32, len(s.Requests))
		for k := range index {
			index[k] = int32(k)
		}
		return part, index, nil
	}
	for k, r := range s.Requests {
		if ShardOf(r.Client, n) == i {
			part.Requests = append(part.Requests, r)
			index = append(index, int32(k))
		}
	}
	return part, index, nil
}
