//go:build haproxy

package loadtest

// make test-haproxy installs Debian's haproxy package and runs this: the target files start
// HAProxy processes for real (--provider local), their stick table shared through peers, and
// they decide.

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
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
			tg, err := target.Load("../../targets/peers/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			tg.Start.Replicas = 2
			cfg := tg.Start.Files[0].Content
			if !bytes.Contains(cfg, []byte(tt.rule)) {
				t.Fatalf("%s's config has no %q to cut to %q", tt.file, tt.rule, tt.cut)
			}
			tg.Start.Files[0].Content = bytes.Replace(cfg, []byte(tt.rule), []byte(tt.cut), 1)
			sys := sut{t: tg}
			fl, err := sys.start(ctx, fleet.LocalProvider{}, sys.spec(DefaultConfig().forTarget(tg, 0), result.Scenario{Name: tg.Name}))
			if err != nil {
				t.Fatal(err)
			}
			defer fl.Terminate(context.WithoutCancel(ctx))
			if a := fl.RedisAddr(); a != "" {
				t.Errorf("a Redis was started at %s for a target without a store", a)
			}
			urls := fl.ReplicaURLs()
			send := func(url string) int {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+tg.Request.Path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set(tg.Request.ClientHeader, "haproxy-test")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			var codes []int
			for range 4 {
				codes = append(codes, send(urls[0]))
			}
			if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
				t.Fatalf("node 0 answered %v, want %v", codes, want)
			}
			if v := tg.Responses.Of(codes[3]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
			// The peers protocol pushes an entry as it changes; give it a moment on a busy machine.
			deadline := time.Now().Add(5 * time.Second)
			for {
				c := send(urls[1])
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
