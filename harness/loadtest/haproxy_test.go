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

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
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

// TestHaproxyPeersAcrossZones starts two HAProxy processes in two zones, 20 ms apart each way:
// the near node's count still reaches the far one over the link between them; with the far
// zone partitioned, a new client's count does not, and the far node admits it alone; mended,
// the count crosses again.
func TestHaproxyPeersAcrossZones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zones, err := topology.Parse("near:1:0.5ms,far:1:19.5ms")
	if err != nil {
		t.Fatal(err)
	}
	tg, fl := startGatewayIn(t, ctx, "haproxy-peers.yaml", zones, 2, [2]string{"sc_http_req_rate(0) gt 600", "sc_http_req_rate(0) gt 3"})
	if n := fl.Conditions().PeerLinks; n != 2 {
		t.Fatalf("%d links between the nodes, want 2 (near to far, far to near)", n)
	}
	urls := fl.ReplicaURLs()
	refuse := func(client string) {
		t.Helper()
		var codes []int
		for range 4 {
			codes = append(codes, decide(t, ctx, tg, urls[0], client))
		}
		if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
			t.Fatalf("near node answered %v for %s, want %v", codes, client, want)
		}
	}
	// farRefuses is whether the far node refuses client within d: its peer's count reached it.
	farRefuses := func(client string, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			if decide(t, ctx, tg, urls[1], client) == http.StatusTooManyRequests {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	refuse("across-1")
	if !farRefuses("across-1", 5*time.Second) {
		t.Fatal("the far node did not refuse a client the near one refused within 5 s: the count did not cross the link")
	}
	if err := fl.CutLink(ctx, "far", fleet.LinkRefused); err != nil {
		t.Fatal(err)
	}
	refuse("across-2")
	// Cut from its peer, the far node has counted none of across-2's requests: a second later
	// (the push took 40 ms across the link before), it admits the client's first request.
	time.Sleep(time.Second)
	if c := decide(t, ctx, tg, urls[1], "across-2"); c != http.StatusOK {
		t.Fatalf("the far node answered %d to a client only the near one saw while the zones were partitioned, want 200", c)
	}
	if err := fl.CutLink(ctx, "far", fleet.LinkUp); err != nil {
		t.Fatal(err)
	}
	refuse("across-3")
	if !farRefuses("across-3", 10*time.Second) {
		t.Fatal("after the partition healed the far node did not refuse a client the near one refused within 10 s")
	}
}
