package traffic

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// connReplica counts the connections it accepted and when, and the warm-up requests.
type connReplica struct {
	srv *httptest.Server

	mu        sync.Mutex
	opened    []time.Time // one per accepted connection
	warmed    int         // requests naming WarmClient
	firstSeen time.Time   // the first scheduled request
	lastWarm  time.Time
}

func newConnReplica(t *testing.T) *connReplica {
	r := &connReplica{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := time.Now()
		r.mu.Lock()
		if req.Header.Get("X-Client-ID") == WarmClient {
			r.warmed++
			r.lastWarm = now
		} else if r.firstSeen.IsZero() {
			r.firstSeen = now
		}
		r.mu.Unlock()
		time.Sleep(2 * time.Millisecond) // a few concurrent requests need a connection each
		w.WriteHeader(http.StatusOK)
	}))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.mu.Lock()
			r.opened = append(r.opened, time.Now())
			r.mu.Unlock()
		}
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

// A warmed run opens its connections and has every replica answer before its origin, and
// is done warming before the first scheduled request: with Warm the schedule's requests
// find the connections open; without it none is opened before the origin.
func TestRunWarmsBeforeItsOrigin(t *testing.T) {
	const conns = 4
	for _, tc := range []struct {
		name string
		warm int
		want int // requests naming WarmClient per replica
	}{
		{"warmed", conns, warmRounds * conns},
		{"cold", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reps := []*connReplica{newConnReplica(t), newConnReplica(t)}
			called := time.Now()
			sum, err := Run(context.Background(), testSchedule(40, 200*time.Millisecond, "a", "b"),
				[]string{reps[0].srv.URL, reps[1].srv.URL}, Options{Warm: tc.warm, Align: 50 * time.Millisecond},
				func(Outcome) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if tc.warm > 0 && sum.Start.Sub(called) < warmLead {
				t.Errorf("origin %v after the call, want at least %v (the warm-up's lead)", sum.Start.Sub(called), warmLead)
			}
			for k, r := range reps {
				r.mu.Lock()
				before := 0
				for _, at := range r.opened {
					if at.Before(sum.Start) {
						before++
					}
				}
				if r.warmed != tc.want {
					t.Errorf("replica %d: %d warm-up requests, want %d", k, r.warmed, tc.want)
				}
				if tc.warm > 0 {
					if before < 1 || before > conns {
						t.Errorf("replica %d: %d connections opened before the origin, want 1 to %d", k, before, conns)
					}
					if !r.lastWarm.Before(sum.Start.Add(-warmQuiet / 2)) {
						t.Errorf("replica %d: last warm-up request %v before the origin, want it over by then", k, sum.Start.Sub(r.lastWarm))
					}
				} else if before != 0 {
					t.Errorf("replica %d: %d connections opened before a cold run's origin", k, before)
				}
				if r.firstSeen.Before(sum.Start) {
					t.Errorf("replica %d: a scheduled request arrived %v before the origin", k, sum.Start.Sub(r.firstSeen))
				}
				r.mu.Unlock()
			}
		})
	}
}

// The warm-up ends at its deadline whatever the replicas do: one that never answers does
// not hold the run's origin back.
func TestWarmStopsAtItsDeadline(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-req.Context().Done()
	}))
	t.Cleanup(hung.Close)
	start := time.Now()
	n := warm(context.Background(), http.DefaultTransport, []string{hung.URL}, "/check", "X-Client-ID", 2, start.Add(100*time.Millisecond))
	if took := time.Since(start); n != 0 || took > time.Second {
		t.Errorf("warm-up of a hung replica: %d answered in %v, want 0 within its 100ms deadline", n, took)
	}
}
