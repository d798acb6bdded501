package schedule

import (
	"testing"
	"time"
)

func TestRounds(t *testing.T) {
	s, err := Rounds([]float64{1000, 2000, 0, 300}, 500*time.Millisecond, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	// ×0.1 over half a second: 50, 100, 0 and 15 requests.
	per := map[int]int{}
	for _, r := range s.Requests {
		per[Round(r.At, 500*time.Millisecond)]++
	}
	if per[0] != 50 || per[1] != 100 || per[2] != 0 || per[3] != 15 || len(s.Requests) != 165 || s.Duration != 2*time.Second {
		t.Errorf("per round %v, %d requests over %v; want 50/100/0/15, 165 over 2s", per, len(s.Requests), s.Duration)
	}
	if first := s.Requests[0].At; first != 5*time.Millisecond {
		t.Errorf("first request at %v, want 5ms (centred in its 10 ms slot)", first)
	}
	for _, bad := range []struct {
		rates []float64
		round time.Duration
		scale float64
	}{{[]float64{1}, 0, 1}, {[]float64{1}, time.Second, 0}, {[]float64{-1}, time.Second, 1}} {
		if _, err := Rounds(bad.rates, bad.round, bad.scale); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
