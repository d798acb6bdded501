package hunt

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// marginLog is an exact log of each client's admissions that takes arrivals margin less than
// a window apart to be a window apart: with margin > 0 it is the known break of bursts a
// window apart (a design whose 25 ms margin let clients sending their limit once a window
// through at 2×); with margin 0 it holds every client to its limit in every window-long
// interval.
type marginLog struct {
	margin time.Duration
	log    map[string][]time.Time
}

func (m *marginLog) Allow(_ context.Context, client string, r *limiters.Rule, now time.Time) (limiters.Decision, error) {
	l := m.log[client]
	k := 0
	for k < len(l) && !l[k].After(now.Add(-(r.Window - m.margin))) {
		k++
	}
	l = l[k:]
	ok := int64(len(l)) < r.Limit
	if ok {
		l = append(l, now)
	}
	m.log[client] = l
	return limiters.Decision{Allowed: ok, Limit: r.Limit}, nil
}

// overloaded is a limiter whose store gives way under a herd: a node that sees
// more than most clients ask within one millisecond decides that request alone and lets it
// through, as a replica whose store calls time out under load does. Only a herd larger than
// most breaks it.
type overloaded struct {
	limiters.Limiter
	most    int
	instant time.Time
	seen    map[string]bool
}

func (o *overloaded) Allow(ctx context.Context, client string, r *limiters.Rule, now time.Time) (limiters.Decision, error) {
	if t := now.Truncate(time.Millisecond); !t.Equal(o.instant) {
		o.instant, o.seen = t, map[string]bool{}
	}
	o.seen[client] = true
	if len(o.seen) > o.most {
		return limiters.Decision{Allowed: true, Limit: r.Limit}, nil
	}
	return o.Limiter.Allow(ctx, client, r, now)
}

// The default hunt finds the known breaks it is for, on the model clock: the window-apart
// families break a limiter whose margin takes bursts a little less than a window apart to be a
// window apart (and count the herd's clients it let through), and hold one without the margin,
// judged on what was sent however late the generator sent it;
// the pressure ladder's first round sends the top level, whose herd is what breaks a store that
// gives way only under a large herd.
func TestHuntFindsTheKnownBreaks(t *testing.T) {
	rule := &limiters.Rule{Name: "m", Algorithm: limiters.SlidingWindow, Limit: 600, Window: 12 * time.Second, Slices: 12}
	for _, tc := range []struct {
		margin time.Duration
		breaks bool
	}{{25 * time.Millisecond, true}, {0, false}} {
		t.Run(fmt.Sprintf("margin %v", tc.margin), func(t *testing.T) {
			m := &marginLog{margin: tc.margin, log: map[string][]time.Time{}}
			nodes := []modelNode{{Limiter: m}, {Limiter: m}}
			var names []string
			for _, f := range DefaultFamilies() {
				names = append(names, f.Name)
			}
			// Every request reported 30 ms late (the lateness gate is 20 ms): the paced families
			// are generator-bound, the unpaced ones judged on what was sent.
			h, _ := huntModelLate(t, nodes, 0, rule, func(c *Config) { c.Levels = 0 }, 30*time.Millisecond, names...)
			for _, name := range []string{FamilyWindowApart, FamilyWindowHerd} {
				f := family(t, h, name)
				if f.Worst == nil {
					t.Fatalf("%s: %s", name, f.Verdict())
				}
				t.Logf("%s: %s (%s; %d of %d clients over 1.1x)", name, f.Verdict(), f.Worst.ParamString(), f.Worst.ClientsOver, f.Worst.Clients)
				if f.Breaks != tc.breaks || tc.breaks && f.Worst.Overshoot < 1.9 || !tc.breaks && f.Worst.Overshoot > 1.0 {
					t.Errorf("%s: breaks %v at x%.3f, want breaks %v", name, f.Breaks, f.Worst.Overshoot, tc.breaks)
				}
				if f.GeneratorBound || f.Worst.GeneratorBound {
					t.Errorf("%s: generator-bound, though its lateness is what it is made of", name)
				}
				if name == FamilyWindowHerd && (f.Worst.Clients < 20 || tc.breaks != (f.Worst.ClientsOver > 0)) {
					t.Errorf("%s: %d of %d clients over 1.1x", name, f.Worst.ClientsOver, f.Worst.Clients)
				}
			}
			for _, f := range h.Families {
				switch {
				case f.Name == FamilyWindowApart || f.Name == FamilyWindowHerd:
				case f.Breaks:
					t.Errorf("%s breaks: %s", f.Name, f.Verdict())
				case f.Worst != nil && !f.GeneratorBound:
					t.Errorf("%s: %s, though every request was sent 30 ms late", f.Name, f.Verdict())
				}
			}
		})
	}
	// On a busy sender (the generator sends 20,000 requests a second, and a request's answer
	// waits for what was sent within 40 ms of it), a burst shows a margin on arrival bounds only
	// where its answers come back within the gap: the window-apart family finds a margin of
	// 15 ms as one of 25 ms, for each keeps its variants alone on the generator and sends gaps
	// dense enough that one lies a few milliseconds under either; it holds a limiter without one.
	for _, tc := range []struct {
		margin time.Duration
		min    float64
	}{{15 * time.Millisecond, 1.2}, {25 * time.Millisecond, 1.3}, {0, 0}} {
		t.Run(fmt.Sprintf("a busy sender, margin %v", tc.margin), func(t *testing.T) {
			m := &marginLog{margin: tc.margin, log: map[string][]time.Time{}}
			snd := &modelSender{nodes: []modelNode{{Limiter: m}, {Limiter: m}}, rule: rule, rate: 20_000, busy: 40 * time.Millisecond}
			h, dir := huntModelOn(t, snd, func(c *Config) { c.Levels = 0 }, FamilyWindowApart, FamilyWindowHerd)
			f := family(t, h, FamilyWindowApart)
			if f.Worst == nil {
				t.Fatalf("%s: %s", f.Name, f.Verdict())
			}
			t.Logf("%s: %s (%s), %d variants", f.Name, f.Verdict(), f.Worst.ParamString(), len(f.Tried))
			herd := family(t, h, FamilyWindowHerd)
			if herd.Worst != nil {
				t.Logf("%s: %s (%d of %d clients over 1.1x)", herd.Name, herd.Verdict(), herd.Worst.ClientsOver, herd.Worst.Clients)
			}
			switch {
			case tc.margin > 0 && (!f.Breaks || f.Worst.Overshoot < tc.min):
				t.Errorf("breaks %v at x%.3f, want x%.1f or more", f.Breaks, f.Worst.Overshoot, tc.min)
			case tc.margin == 0 && (f.Breaks || f.Worst.Overshoot > 1 || herd.Breaks):
				t.Errorf("breaks %v at x%.3f (the herd %v): want it held", f.Breaks, f.Worst.Overshoot, herd.Breaks)
			}
			assertAlone(t, h, dir)
		})
	}
	t.Run("a store that gives way under a herd", func(t *testing.T) {
		exact := &marginLog{log: map[string][]time.Time{}}
		var nodes []modelNode
		for range 2 {
			nodes = append(nodes, modelNode{Limiter: &overloaded{Limiter: exact, most: 16}})
		}
		h, _ := huntModelWith(t, nodes, 0, rule, func(c *Config) { c.Pressure = 3; c.Levels = 0 }, FamilySliceDrop)
		f := family(t, h, FamilySliceDrop)
		t.Logf("%s: %s; pressure: %s", f.Name, f.Verdict(), f.PressureVerdict)
		if f.Breaks || len(f.PressureRounds) == 0 || f.PressureRounds[0].Level != 3 || !f.BrokeUnderPressure || f.PressureRounds[0].Herd <= 16 {
			t.Errorf("breaks %v in the search; pressure rounds %+v: want the top level first, a herd over 16, broken", f.Breaks, f.PressureRounds)
		}
	})
}

// assertAlone checks the unpaced rounds h sent: every window-apart variant's requests are alone
// on the generator, no other client's request within the time it takes to send a burst of the
// limit at drainFactor × the burst rate, while the herd shares the round.
func assertAlone(t *testing.T, h result.HuntSystem, dir string) {
	t.Helper()
	env := modelEnv(2, 0)
	guard := spanFor(env.Limit, drainFactor*env.MaxRate)
	rounds := 0
	for _, r := range h.Rounds {
		if r.Kind != kindUnpaced {
			continue
		}
		rounds++
		file, err := schedule.ReadFile(filepath.Join(dir, r.Schedule))
		if err != nil {
			t.Fatal(err)
		}
		s := file.Schedule
		herd, alone := false, 0
		for _, c := range s.Clients {
			herd = herd || c.Pattern == FamilyWindowHerd
		}
		for i, q := range s.Requests {
			if s.Clients[q.Client].Pattern != FamilyWindowApart {
				continue
			}
			alone++
			for k := i - 1; k >= 0 && s.Requests[k].At > q.At-guard; k-- {
				if o := s.Requests[k]; o.Client != q.Client {
					t.Fatalf("round %d: %s's request at %v has %s's at %v, within %v", r.Round, s.Clients[q.Client].ID, q.At, s.Clients[o.Client].ID, o.At, guard)
				}
			}
			for k := i + 1; k < len(s.Requests) && s.Requests[k].At < q.At+guard; k++ {
				if o := s.Requests[k]; o.Client != q.Client {
					t.Fatalf("round %d: %s's request at %v has %s's at %v, within %v", r.Round, s.Clients[q.Client].ID, q.At, s.Clients[o.Client].ID, o.At, guard)
				}
			}
		}
		if !herd || alone == 0 {
			t.Errorf("round %d: the herd sent %v, %d window-apart requests: want both in the round", r.Round, herd, alone)
		}
	}
	if rounds == 0 {
		t.Error("no unpaced round")
	}
}
