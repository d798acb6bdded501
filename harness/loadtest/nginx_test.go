//go:build nginx

package loadtest

// make test-nginx installs Debian's nginx package and runs this: the target files start nginx
// for real (--provider local) and its limit_req decides.

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

// TestNginxStartsAndDecides starts nginx from each target file with the rule cut to one
// request a minute and burst=1: one instance with its worker processes answers 200, 200 (the
// burst), then 429 for one client; two independent instances, each with a zone of its own,
// answer a client whose requests alternate between them 200 twice as often.
func TestNginxStartsAndDecides(t *testing.T) {
	for _, tt := range []struct {
		file     string
		replicas int
		want     []int // one client's answers, its requests sent to the replicas in turn
	}{
		{"nginx-workers.yaml", 1, []int{200, 200, 429, 429}},
		{"nginx-independent.yaml", 2, []int{200, 200, 200, 200, 429, 429}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tg, err := target.Load("../../targets/peers/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			tg.Start.Replicas = tt.replicas
			conf := tg.Start.Files[0].Content
			for _, r := range [][2]string{{"zone=clients:32m rate=50r/s;", "zone=clients:32m rate=1r/m;"}, {"zone=clients burst=20 nodelay;", "zone=clients burst=1 nodelay;"}} {
				if !bytes.Contains(conf, []byte(r[0])) {
					t.Fatalf("%s's config has no %q to cut to %q", tt.file, r[0], r[1])
				}
				conf = bytes.Replace(conf, []byte(r[0]), []byte(r[1]), 1)
			}
			tg.Start.Files[0].Content = conf
			sys := sut{t: tg}
			fl, err := sys.start(ctx, fleet.LocalProvider{}, sys.spec(DefaultConfig().forTarget(tg, 0), result.Scenario{Name: tg.Name}))
			if err != nil {
				t.Fatal(err)
			}
			defer fl.Terminate(context.WithoutCancel(ctx))
			urls := fl.ReplicaURLs()
			var codes []int
			for i := range tt.want {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, urls[i%len(urls)]+tg.Request.Path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set(tg.Request.ClientHeader, "nginx-test")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
			if !slices.Equal(codes, tt.want) {
				t.Fatalf("answers %v, want %v", codes, tt.want)
			}
			if v := tg.Responses.Of(codes[len(codes)-1]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
		})
	}
}
