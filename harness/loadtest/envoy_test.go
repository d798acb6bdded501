//go:build envoy

package loadtest

// make test-envoy builds rlharness/envoy-ratelimit:dev (envoyproxy/ratelimit, compiled
// outside this module) and runs this: the target file starts it for real and it decides.

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
)

// TestEnvoyRatelimitStartsAndDecides starts envoy's ratelimit from its target file, with the
// rule cut to 3 per minute, and wants a 200 then a 429 for one client through /json.
func TestEnvoyRatelimitStartsAndDecides(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := target.Load("../../targets/peers/envoy-ratelimit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tg.Start.Replicas = 1
	tg.Start.Files[0].Content = bytes.Replace(tg.Start.Files[0].Content, []byte("requests_per_unit: 600"), []byte("requests_per_unit: 3"), 1)
	sys := sut{t: tg}
	cfg := DefaultConfig().forTarget(tg, 0)
	cfg.Network = fleet.NetworkBridge
	fl, err := sys.start(ctx, fleet.DockerProvider{}, sys.spec(cfg, result.Scenario{Name: tg.Name}))
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Terminate(context.WithoutCancel(ctx))
	url := fl.ReplicaURLs()[0] + tg.Request.Path
	send := func(client string) int {
		req, err := http.NewRequestWithContext(ctx, tg.Request.Method, url, bytes.NewReader(tg.Request.BodyFor(client)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A minute's edge between the requests resets envoy's fixed window: try a second client.
	for attempt, client := range []string{"envoy-test-a", "envoy-test-b"} {
		var codes []int
		for range 4 {
			codes = append(codes, send(client))
		}
		if codes[0] == http.StatusOK && codes[3] == http.StatusTooManyRequests {
			if v := tg.Responses.Of(codes[3]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
			return
		}
		t.Logf("attempt %d: statuses %v", attempt, codes)
	}
	t.Fatal("envoy's ratelimit did not answer 200 and then 429 for 4 requests at 3 per minute")
}
