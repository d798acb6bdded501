package accounting

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// TestZones: replicas 0 and 1 are near, 2 far. Client a (limit 3 a second) is admitted 4
// times by the far replica in one window and once by the near: the far zone's overshoot is
// 4/3, the near's 1/3. Its one rejection by the near zone came after 5 sends in the window:
// earned. Client b sends 2 and is refused its second by the far zone: a false reject there.
// A far request times out inside the fault window.
func TestZones(t *testing.T) {
	f := newFixture([]string{"a", "b"}, []sent{
		{client: 0, replica: 2, at: 0, code: 200, latency: 80 * ms},
		{client: 0, replica: 2, at: 10 * ms, code: 200, latency: 82 * ms},
		{client: 0, replica: 2, at: 20 * ms, code: 200, latency: 90 * ms},
		{client: 0, replica: 2, at: 30 * ms, code: 200, latency: 85 * ms},
		{client: 0, replica: 0, at: 40 * ms, code: 200, latency: 1 * ms},
		{client: 0, replica: 1, at: 50 * ms, code: 429, latency: 1 * ms},
		{client: 1, replica: 1, at: 100 * ms, code: 200, latency: 1 * ms},
		{client: 1, replica: 2, at: 110 * ms, code: 429, latency: 81 * ms},
		{client: 1, replica: 2, at: 5 * time.Second, err: traffic.ErrTimeout, latency: 5 * time.Second},
	})
	a, err := New(&f.s, []result.Interval{{From: 4 * time.Second, To: 6 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetZones([]Zone{{Name: "near", Replicas: []int{0, 1}}, {Name: "far", Replicas: []int{2}, Link: result.LinkFigures{Latency: 40 * ms}}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range f.outs {
		if err := a.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Report()
	if len(r.Zones) != 2 {
		t.Fatalf("zones %+v", r.Zones)
	}
	near, far := r.Zones[0], r.Zones[1]
	for _, tc := range []struct {
		what      string
		got, want float64
	}{
		{"near requests", float64(near.Requests), 3},
		{"far requests", float64(far.Requests), 6},
		{"near accepted", float64(near.Accepted), 2},
		{"far accepted", float64(far.Accepted), 4},
		{"near rejected", float64(near.Rejected), 1},
		{"far rejected", float64(far.Rejected), 1},
		{"far overshoot", far.Overshoot, 4.0 / 3},
		{"near overshoot", near.Overshoot, 1.0 / 3},
		{"near false rejects", float64(near.FalseRejects), 0},
		{"far false rejects", float64(far.FalseRejects), 1},
		{"far timeouts", float64(far.Errors.Timeout), 1},
		{"far errors in the fault", float64(far.ErrorsInFault), 1},
		{"near errors", float64(near.Errors.Total()), 0},
		{"far p50 ms", float64(far.Latency.P50) / float64(ms), 82},
		{"near max ms", float64(near.Latency.Max) / float64(ms), 1},
	} {
		if d := tc.got - tc.want; d > 0.5 || d < -0.5 || (tc.what == "far overshoot" && d != 0) {
			t.Errorf("%s = %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	if far.OvershootClient != "a" || far.Link.Latency != 40*ms || len(far.Replicas) != 1 || far.Replicas[0] != 2 {
		t.Errorf("far zone %+v", far)
	}
	if r.FalseRejects != 1 {
		t.Errorf("whole run false rejects %d, want 1: the zones split the run's count", r.FalseRejects)
	}
}

func TestSetZonesRejects(t *testing.T) {
	f := newFixture([]string{"a"}, []sent{{client: 0, replica: 0, code: 200}, {client: 0, replica: 1, code: 200}})
	for _, tc := range []struct {
		zones []Zone
		want  string
	}{
		{[]Zone{{Name: "a", Replicas: []int{0}}}, "sends to replica 1, which no zone holds"},
		{[]Zone{{Name: "a", Replicas: []int{0, 1}}, {Name: "b", Replicas: []int{1}}}, "replica 1 is in zones a and b"},
	} {
		a, err := New(&f.s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.SetZones(tc.zones); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetZones(%+v): %v, want %q", tc.zones, err, tc.want)
		}
	}
	a, _ := New(&f.s, nil)
	_ = a.Add(f.outs[0])
	if err := a.SetZones([]Zone{{Name: "a", Replicas: []int{0, 1}}}); err == nil {
		t.Error("zones set after an outcome were taken")
	}
}
