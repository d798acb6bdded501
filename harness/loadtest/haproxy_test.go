//go:build haproxy

package loadtest

// make test-haproxy installs Debian's haproxy package and runs this: the target files start
// HAProxy processes for real (--provider local), their stick table shared through peers, and
// they decide.

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/target"
)

// TestHaproxyStartsAndDecides starts two HAProxy processes from each target file, the limit
// cut to 3 per window, and wants 200 three times then 429 from the first for one client;
// then a 429 from the second, which saw none of the client's requests: its peer pushed the
// client's count to it.
func TestHaproxyStartsAndDecides(t *testing.T) {
	for _, tt := range []struct{ file, rule, cut string }{
		{"haproxy-peers.yaml", "sc_http_req_rate(0) gt 600", "sc_http_req_rate(0) gt 3"},
		{"haproxy-peers-gpc.yaml", "sc_gpc0_rate(0) ge 600", "sc_gpc0_rate(0) ge 3"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tg, fl := startGateway(t, ctx, tt.file, 2, [2]string{tt.rule, tt.cut})
			urls := fl.ReplicaURLs()
			var codes []int
			for range 4 {
				codes = append(codes, decide(t, ctx, tg, urls[0], "haproxy-test"))
			}
			if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
				t.Fatalf("node 0 answered %v, want %v", codes, want)
			}
			checkReached(t, fl, codes)
			if v := tg.Responses.Of(codes[3]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
			// The peers protocol pushes an entry as it changes; give it a moment on a busy machine.
			deadline := time.Now().Add(5 * time.Second)
			for {
				c := decide(t, ctx, tg, urls[1], "haproxy-test")
				if c == http.StatusTooManyRequests {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node 1 still answers %d 5 s after node 0 refused the client: the peers did not share its count", c)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
