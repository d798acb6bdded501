package traffic

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// With Route, requests go wherever the route says at send time: here the second half of
// the run moves from one server to another, as replicas come and go.
func TestRunWithRoute(t *testing.T) {
	var hitsA, hitsB atomic.Int64
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hitsA.Add(1) }))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hitsB.Add(1) }))
	defer b.Close()
	s, err := schedule.Rounds([]float64{100, 100}, 200*time.Millisecond, 1) // 20 + 20 requests
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	route := func() string {
		if time.Since(start) < 200*time.Millisecond {
			return a.URL
		}
		return b.URL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum, err := Run(ctx, &s, nil, Options{Route: route, Timeout: time.Second, Grace: time.Second}, func(o Outcome) error {
		if o.Code != 200 {
			t.Errorf("request %d: code %d err %v", o.Index, o.Code, o.Err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 40 || hitsA.Load() < 10 || hitsB.Load() < 10 || hitsA.Load()+hitsB.Load() != 40 {
		t.Errorf("sent %d, a %d, b %d; want 40 split across both", sum.Sent, hitsA.Load(), hitsB.Load())
	}
}
