package replica

import (
	"fmt"
	"github.com/edgeproof/rlharness/limiters"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// BenchmarkDecide is one decision through the replica's HTTP handler, in process (no network,
// no generator): the header read, the rule, the limiter, the metrics, the RateLimit fields.
// Beside it the no-op target's handler, so the difference is what the limiter adds to a
// request's service time; "parallel" runs it from GOMAXPROCS goroutines, where the delayed
// limiter's lock and the metrics' are shared (go test -mutexprofile shows them). The sync
// loop is held off (an hour's interval): at this rate, hundreds of thousands of decisions a
// second from one replica, every sync would carry a hundred times a real node's news;
// limiters' BenchmarkDelayedSyncWithManyClients measures the sync's time under the lock.
func BenchmarkDecide(b *testing.B) {
	srv := redistest.Start(b)
	rules := mustRules(b, "default: {limit: 600, window: 60s, algorithm: sliding_window, slices: 12}\n")
	const clients = 200_000
	ids := make([]string, clients)
	for i := range ids {
		ids[i] = fmt.Sprintf("bg-%06d", i)
	}
	key := http.CanonicalHeaderKey(DefaultClientHeader)
	noop := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	for _, tc := range []struct {
		name string
		mode limiters.Mode
	}{{"noop", ""}, {"split", limiters.ModeSplit}, {"delayed", limiters.ModeDelayed}} {
		var h http.Handler = noop
		if tc.mode != "" {
			r, _ := startReplica(b, Config{Mode: tc.mode, Redis: srv.Addr, SyncInterval: time.Hour, NodeCount: 8}, rules)
			h = r
		}
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/check?seq=1", nil)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				req.Header = http.Header{key: {ids[i%clients]}}
				i++
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
		b.Run(tc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/check?seq=1", nil)
				i := 0
				for pb.Next() {
					req.Header = http.Header{key: {ids[i%clients]}}
					i += 7
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
			})
		})
	}
}
