package schedule

import (
	"strings"
	"testing"
	"time"
)

// One node's share of HS2 at time scale 0.2: 5,000 req/s to one replica, the population's
// 25,000 clients and about an eighth of the probes' requests, in order, the same for a seed.
func TestBuildSliceIsOneNodesShare(t *testing.T) {
	s := Slice{TimeScale: 0.2, Rate: 5000, Clients: 25_000, Node: 0, Nodes: 8, Duration: 12 * time.Second, Seed: 7, Prefix: "s1-"}
	got, err := BuildSlice(s, DefaultClasses()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if r := got.Replicas(); r != 1 {
		t.Errorf("sent to %d replicas, want 1", r)
	}
	if n, want := float64(len(got.Requests)), s.Rate*s.Duration.Seconds(); n < 0.99*want || n > want {
		t.Errorf("%0.f requests, want %.0f", n, want)
	}
	probes, err := Probes(Params{Limit: 600, Window: time.Minute, Scale: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	inDuration := 0
	for _, r := range probes.Requests {
		if r.At < s.Duration {
			inDuration++
		}
	}
	perClient := map[string]int{}
	background := 0
	for _, r := range got.Requests {
		c := got.Clients[r.Client]
		if !strings.HasPrefix(c.ID, "s1-") || c.Window != 12*time.Second || c.Limit != 600 {
			t.Fatalf("client %+v: want the prefix s1- and 600 per 12s", c)
		}
		if c.Probe {
			perClient[c.ID]++
		} else {
			background++
		}
	}
	share := len(got.Requests) - background
	if lo, hi := inDuration/8*7/10, inDuration/8*13/10; share < lo || share > hi {
		t.Errorf("the probes' share: %d requests of their %d in %v, want about an eighth (%d..%d)", share, inDuration, s.Duration, lo, hi)
	}
	if len(perClient) != 4 || len(got.Clients) != 4+s.Clients {
		t.Errorf("%d probe clients sent, %d clients in all; want 4 and %d", len(perClient), len(got.Clients), 4+s.Clients)
	}
	again, _ := BuildSlice(s, DefaultClasses()[0])
	if len(again.Requests) != len(got.Requests) || again.Requests[len(got.Requests)/2] != got.Requests[len(got.Requests)/2] {
		t.Error("one seed built two schedules")
	}
}

func TestBuildSliceRefuses(t *testing.T) {
	ok := Slice{TimeScale: 0.2, Rate: 1000, Clients: 1000, Nodes: 8, Duration: time.Second}
	for _, tt := range []struct {
		name string
		edit func(*Slice)
		want string
	}{
		{"node outside the fleet", func(s *Slice) { s.Node = 8 }, "node 8 of 8"},
		{"no rate", func(s *Slice) { s.Rate = 0 }, "rate must be > 0"},
		{"no duration", func(s *Slice) { s.Duration = 0 }, "duration must be > 0"},
		{"less than the probes send", func(s *Slice) { s.Rate = 1 }, "the probes' share alone"},
		{"more than the population may send", func(s *Slice) { s.Clients = 1; s.Rate = 5000 }, "slice population"},
	} {
		s := ok
		tt.edit(&s)
		if _, err := BuildSlice(s, DefaultClasses()[0]); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestSliceRoutingNamesTheBalancer(t *testing.T) {
	for _, tc := range []struct {
		clients, nodes int
		want           string // a prefix; "" for none
	}{
		{DefaultClients / 8, 8, "HS1/8: each sends this node all its requests"},
		{DefaultClients, 8, "HS1: each sends this node 1/8 of its requests"},
		{DefaultClients / 4, 4, "HS1/4: "},
		{10_000, 8, ""},
		{DefaultClients, 1, ""},
	} {
		got := Slice{Clients: tc.clients, Nodes: tc.nodes}.Routing()
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%d clients on %d nodes: %q, want %q...", tc.clients, tc.nodes, got, tc.want)
		}
	}
}
