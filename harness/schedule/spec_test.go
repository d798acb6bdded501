package schedule_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

func TestSpecScale(t *testing.T) {
	for _, tc := range []struct {
		scale   float64
		d, want time.Duration
		window  time.Duration
	}{
		{1, 200 * time.Millisecond, 200 * time.Millisecond, time.Minute},
		{0.2, 30 * time.Second, 6 * time.Second, 12 * time.Second},
		{0.1, time.Minute, 6 * time.Second, 6 * time.Second},
		{1.0 / 3, time.Second, 333333333, 20 * time.Second}, // rounded to the nanosecond
		{0.05, 200 * time.Millisecond, 10 * time.Millisecond, 3 * time.Second},
	} {
		s := schedule.Spec{TimeScale: tc.scale}
		if got := s.Scale(tc.d); got != tc.want {
			t.Errorf("Spec{TimeScale: %v}.Scale(%v) = %v, want %v", tc.scale, tc.d, got, tc.want)
		}
		if got := s.Window(); got != tc.window {
			t.Errorf("Spec{TimeScale: %v}.Window() = %v, want %v", tc.scale, got, tc.window)
		}
		p := schedule.Params{Limit: 600, Window: time.Minute, Scale: tc.scale}
		if got := p.ScaledWindow(); got != s.Window() {
			t.Errorf("Params at scale %v: window %v, the spec's %v", tc.scale, got, s.Window())
		}
	}
}

// digest is a schedule's SHA-256 over every request's offset, client and replica, then every
// client and the duration.
func digest(s schedule.Schedule) string {
	h := sha256.New()
	var b [14]byte
	for _, r := range s.Requests {
		binary.LittleEndian.PutUint64(b[0:], uint64(r.At))
		binary.LittleEndian.PutUint32(b[8:], uint32(r.Client))
		binary.LittleEndian.PutUint16(b[12:], uint16(r.Replica))
		h.Write(b[:])
	}
	for _, c := range s.Clients {
		fmt.Fprintf(h, "%q %d %d %q %t\n", c.ID, c.Limit, c.Window, c.Pattern, c.Probe)
	}
	fmt.Fprintf(h, "%d\n", s.Duration)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Build gives the schedules the load test has always sent: the digests were taken from the
// builder before it moved here (loadtest.BuildSchedule and buildClassSchedule).
func TestBuildIsTheLoadTestsSchedule(t *testing.T) {
	for _, tc := range []struct {
		name              string
		spec              schedule.Spec
		classes           []schedule.Class
		requests, clients int
		digest            string
	}{
		{"make loadtest", schedule.Spec{TimeScale: 0.2, Rate: 500, Clients: 200_000, Seed: 20260730, Replicas: 8}, schedule.DefaultClasses(),
			31200, 200_004, "e2b1efca022469a4d38dad70c265fdc70b2f9a815f0a8888d30d0582316eed7c"},
		{"small", schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 7, Replicas: 2}, schedule.DefaultClasses(),
			13650, 304, "f3f0217131736c0dfd8050ac840a2813d8a4ca2fd6013a518df96704c7bd0290"},
		{"two classes", schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 7, Replicas: 3},
			[]schedule.Class{{Name: "default", Limit: 100}, {Name: "gold", Prefix: "gold-", Limit: 1200}},
			29050, 308, "fa55bc2d7184ba769fc15fd5e35115c91fb1ec3b2b09694da37a080c721f2aec"},
	} {
		s, err := schedule.Build(tc.spec, tc.classes)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(s.Requests) != tc.requests || len(s.Clients) != tc.clients {
			t.Errorf("%s: %d requests, %d clients, want %d and %d", tc.name, len(s.Requests), len(s.Clients), tc.requests, tc.clients)
		}
		if got := digest(s); got != tc.digest {
			t.Errorf("%s: digest %s, want %s", tc.name, got, tc.digest)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		for _, c := range s.Clients {
			if want := tc.spec.Window(); c.Window != want {
				t.Fatalf("%s: client %s has window %v, the spec's is %v", tc.name, c.ID, c.Window, want)
			}
		}
	}
	gold := 0
	s, _ := schedule.Build(schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 7, Replicas: 3},
		[]schedule.Class{{Name: "default", Limit: 100}, {Name: "gold", Prefix: "gold-", Limit: 1200}})
	for _, c := range s.Clients {
		if strings.HasPrefix(c.ID, "gold-") {
			gold++
			if !c.Probe || c.Limit != 1200 {
				t.Errorf("gold client %s: probe %v, limit %d; want a probe of limit 1200", c.ID, c.Probe, c.Limit)
			}
		}
	}
	if gold != 4 {
		t.Errorf("%d gold clients, want the 4 probes", gold)
	}
}

func TestBuildNeedsAClass(t *testing.T) {
	_, err := schedule.Build(schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 7, Replicas: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "no client class") {
		t.Errorf("Build without classes: %v, want an error naming the missing class", err)
	}
}

// TestCheckTimeScale is the one rule every --time-scale is held to: (0, 1].
func TestCheckTimeScale(t *testing.T) {
	for _, tc := range []struct {
		f  float64
		ok bool
	}{{1, true}, {0.2, true}, {0.001, true}, {0, false}, {-0.5, false}, {1.5, false}, {math.NaN(), false}, {math.Inf(1), false}} {
		if err := schedule.CheckTimeScale(tc.f); (err == nil) != tc.ok {
			t.Errorf("CheckTimeScale(%v) = %v, want ok %v", tc.f, err, tc.ok)
		}
	}
}
