package schedule

import (
	"testing"
	"time"
)

func TestRouteAroundMovesOnlyTheWindowOfOneReplica(t *testing.T) {
	s := Schedule{Clients: []Client{{ID: "c", Limit: 10, Window: time.Second}}, Duration: time.Second}
	for i := range 40 { // replicas 0,1,2,3 in turn, one request every 25 ms
		s.Requests = append(s.Requests, Request{At: time.Duration(i) * 25 * time.Millisecond, Replica: int16(i % 4)})
	}
	moved, err := s.RouteAround(2, 250*time.Millisecond, 750*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Replica 2 had requests 2, 6, 10, …, 38; those at 250 ms ≤ At < 750 ms are 10, 14, 18, 22, 26.
	if moved != 5 {
		t.Errorf("moved %d, want 5", moved)
	}
	perReplica := map[int16]int{}
	for i, r := range s.Requests {
		if r.Replica == 2 && r.At >= 250*time.Millisecond && r.At < 750*time.Millisecond {
			t.Errorf("request %d at %v still goes to replica 2", i, r.At)
		}
		perReplica[r.Replica]++
	}
	// 10 each before; replica 2 lost 5, sent by index to the (i mod 3)-th other: 10 → 1,
	// 14 → 3, 18 → 0, 22 → 1, 26 → 3.
	want := map[int16]int{0: 11, 1: 12, 2: 5, 3: 12}
	for k, n := range want {
		if perReplica[k] != n {
			t.Errorf("replica %d has %d requests, want %d", k, perReplica[k], n)
		}
	}
	if _, err := (&Schedule{Requests: []Request{{Replica: 0}}}).RouteAround(0, 0, time.Second); err == nil {
		t.Error("a one-replica schedule was routed around its only replica")
	}
}

// A spec with a replica away builds the same schedule but for that replica's requests in the
// window, which go to the others: none is left to it there, none is lost or added.
func TestBuildRoutesAroundTheReplicaAway(t *testing.T) {
	spec := Spec{TimeScale: 0.05, Rate: 200, Clients: 500, Seed: 7, Replicas: 4}
	plain, err := Build(spec, DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	spec.Away = &Away{Replica: 3, From: 2 * time.Second, To: 4 * time.Second}
	away, err := Build(spec, DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	if len(away.Requests) != len(plain.Requests) {
		t.Fatalf("%d requests, want %d", len(away.Requests), len(plain.Requests))
	}
	moved := 0
	for i, r := range away.Requests {
		p := plain.Requests[i]
		inside := p.At >= 2*time.Second && p.At < 4*time.Second
		switch {
		case r.At != p.At || r.Client != p.Client:
			t.Fatalf("request %d changed: %+v, was %+v", i, r, p)
		case inside && p.Replica == 3:
			if r.Replica == 3 {
				t.Fatalf("request %d at %v still goes to the replica away", i, r.At)
			}
			moved++
		case r.Replica != p.Replica:
			t.Fatalf("request %d outside the window moved from %d to %d", i, p.Replica, r.Replica)
		}
	}
	if moved < 50 {
		t.Errorf("%d requests moved, want the replica's quarter of two seconds' traffic (> 50)", moved)
	}
}
