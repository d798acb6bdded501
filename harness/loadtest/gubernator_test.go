//go:build gubernator

package loadtest

// make test-gubernator builds rlharness/gubernator:dev (gubernator, compiled outside this
// module) and runs this: the target files start two nodes for real, on host networking as
// they must, and they decide.

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
)

// TestGubernatorStartsAndDecides starts two gubernator nodes from each target file, with the
// rule cut to 3 per window, and wants UNDER_LIMIT three times then OVER_LIMIT for one client
// whose requests alternate between the nodes (so one of them forwards to the key's owner),
// read through the file's JSON rule.
func TestGubernatorStartsAndDecides(t *testing.T) {
	for _, file := range []string{"gubernator-batching.yaml", "gubernator-global.yaml"} {
		t.Run(file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tg, err := target.Load("../../targets/peers/" + file)
			if err != nil {
				t.Fatal(err)
			}
			tg.Start.Replicas = 2
			tg.Request.Body = strings.NewReplacer(`"limit":600`, `"limit":3`, `"burst":600`, `"burst":3`, `"duration":12000`, `"duration":60000`).Replace(tg.Request.Body)
			sys := sut{t: tg}
			cfg := DefaultConfig().forTarget(tg, 0)
			cfg.Network = fleet.NetworkHost
			fl, err := sys.start(ctx, fleet.DockerProvider{}, sys.spec(cfg, result.Scenario{Name: tg.Name}))
			if err != nil {
				t.Fatal(err)
			}
			defer fl.Terminate(context.WithoutCancel(ctx))
			urls := fl.ReplicaURLs()
			send := func(node int, client string) (target.Verdict, string) {
				req, err := http.NewRequestWithContext(ctx, tg.Request.Method, urls[node]+tg.Request.Path, bytes.NewReader(tg.Request.BodyFor(client)))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				return tg.Responses.Decide(resp.StatusCode, b.Bytes()), b.String()
			}
			// Two nodes need a moment to find each other; a request before then may be an
			// error (no owner yet). Try fresh clients until the pair answers in full.
			deadline := time.Now().Add(45 * time.Second)
			for attempt := 0; time.Now().Before(deadline); attempt++ {
				client := "gub-test-" + time.Now().Format("150405.000")
				var got []target.Verdict
				var last string
				for k := range 4 {
					v, body := send(k%2, client)
					got = append(got, v)
					last = body
					if strings.HasSuffix(tg.Name, "global") {
						time.Sleep(300 * time.Millisecond) // GLOBAL: the owner's count reaches the other node after its sync wait
					}
				}
				if got[0] == target.Accepted && got[1] == target.Accepted && got[2] == target.Accepted && got[3] == target.Rejected {
					t.Logf("%s: accepted 3, then rejected: %s", tg.Name, last)
					return
				}
				t.Logf("attempt %d: verdicts %v, last body %s", attempt, got, last)
				time.Sleep(2 * time.Second)
			}
			t.Fatal("gubernator did not answer UNDER_LIMIT three times and then OVER_LIMIT for 4 requests at 3 per window")
		})
	}
}
