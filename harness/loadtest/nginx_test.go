//go:build nginx

package loadtest

// make test-nginx installs Debian's nginx package and runs this: the target files start nginx
// for real (--provider local) and its limit_req decides.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/target"
)

// TestNginxStartsAndDecides starts nginx from each target file with the rule cut to one
// request a minute and burst=1: one instance with its worker processes answers 200, 200 (the
// burst), then 429 for one client; two independent instances, each with a zone of its own,
// let a client whose requests alternate between them through twice as often.
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
			tg, fl := startGateway(t, ctx, tt.file, tt.replicas,
				[2]string{"zone=clients:32m rate=50r/s;", "zone=clients:32m rate=1r/m;"},
				[2]string{"zone=clients burst=20 nodelay;", "zone=clients burst=1 nodelay;"})
			urls := fl.ReplicaURLs()
			var codes []int
			for i := range tt.want {
				codes = append(codes, decide(t, ctx, tg, urls[i%len(urls)], "nginx-test"))
			}
			if !slices.Equal(codes, tt.want) {
				t.Fatalf("answers %v, want %v", codes, tt.want)
			}
			checkReached(t, fl, codes)
			if v := tg.Responses.Of(codes[len(codes)-1]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
		})
	}
}
