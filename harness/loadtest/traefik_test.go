//go:build traefik

package loadtest

// make test-traefik builds rlharness/traefik:dev (Traefik, compiled outside this module) and
// runs this: the target files start two Traefik instances for real and their rateLimit
// middleware decides, with its Redis store and with its in-memory one.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
)

// TestTraefikStartsAndDecides starts two Traefik instances from each target file, with the
// rule cut to 3 per minute (burst 3), and sends one client 8 requests alternating between
// the instances. With Redis the instances share one bucket: 200 three times, then 429. In
// memory each instance has its own: 200 six times, 3 from each instance, then 429.
func TestTraefikStartsAndDecides(t *testing.T) {
	for _, tc := range []struct {
		file     string
		accepted int
	}{
		{"traefik-redis.yaml", 3},
		{"traefik-memory.yaml", 6},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tg, err := target.Load("../../targets/peers/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			tg.Start.Replicas = 2
			rule := strings.NewReplacer("average: 600", "average: 3", "period: 12s", "period: 60s", "burst: 600", "burst: 3")
			before := string(tg.Start.Files[0].Content)
			tg.Start.Files[0].Content = []byte(rule.Replace(before))
			if string(tg.Start.Files[0].Content) == before {
				t.Fatal("the rule in the target file's dynamic.yaml was not found to cut")
			}
			sys := sut{t: tg}
			cfg := DefaultConfig().forTarget(tg, 0)
			cfg.Network = fleet.NetworkBridge
			fl, err := sys.start(ctx, fleet.DockerProvider{}, sys.spec(cfg, result.Scenario{Name: tg.Name}))
			if err != nil {
				t.Fatal(err)
			}
			defer fl.Terminate(context.WithoutCancel(ctx))
			urls := fl.ReplicaURLs()
			var codes []int
			for i := range 8 {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, urls[i%2]+tg.Request.Path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set(tg.Request.ClientHeader, "traefik-test")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
			t.Logf("statuses: %v", codes)
			for i, c := range codes {
				want := http.StatusOK
				if i >= tc.accepted {
					want = http.StatusTooManyRequests
				}
				if c != want {
					t.Fatalf("request %d: status %d, want %d (statuses %v; %d accepted expected of 8 at 3 per minute over 2 instances)",
						i, c, want, codes, tc.accepted)
				}
			}
			if v := tg.Responses.Of(codes[len(codes)-1]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
		})
	}
}
