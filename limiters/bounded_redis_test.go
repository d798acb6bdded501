package limiters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// The bounded design on a real redis-server, on the model clock: the aimed families that
// cost the store calls (a full limit to every replica at once, the slice-drop pair, the
// window-aligned at-limit bursts) give the memory store's verdicts, and a client at twice
// its limit stays within 1.1× when the store forgets everything mid-window (FLUSHALL) or
// is killed and restarted empty.
func TestBoundedOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	base := time.Unix(0, 0).Add(1000 * DefaultWindow)
	fleet := func() []aimedNode {
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		var ns []aimedNode
		for i := range aimedNodes {
			ns = append(ns, NewBoundedSync(NewRedisStore(srv.Client()), BoundedNode(fmt.Sprint(i), aimedNodes)))
		}
		return ns
	}
	rng := rand.New(rand.NewPCG(5, 5))
	jitter := func() time.Duration { return time.Duration(rng.Int64N(int64(5 * time.Millisecond))) }
	for _, f := range aimedFamilies(base, jitter) {
		if strings.Contains(f.name, "sync tick") || strings.Contains(f.name, "slice boundary") {
			continue // hundreds of thousands of sends: the memory store's test runs them
		}
		t.Run(f.name, func(t *testing.T) {
			rule := aimedRule()
			allowed := runAimed(t, fleet(), aimedInterval, rule, f.sends)
			v := judge(f.sends, allowed, rule.Window, rule.Limit)
			t.Logf("sent %d, accepted %d, rejected %d (%d false), overshoot %.3f×", len(f.sends), v.accepted, v.rejected, v.falseRejects, v.overshoot)
			if v.overshoot > 1.1 || v.falseRejects > 0 {
				t.Errorf("overshoot %.3f× (want ≤ 1.1×), %d false rejects (want 0)", v.overshoot, v.falseRejects)
			}
		})
	}
	for _, reset := range []struct {
		name string
		do   func()
	}{
		{"flushall", func() {
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"restart", srv.Restart},
	} {
		t.Run("store forgets: "+reset.name, func(t *testing.T) {
			rule := aimedRule()
			sends := uniform2x(base, jitter)
			allowed := runAimed(t, fleet(), aimedInterval, rule, sends, event{base.Add(DefaultWindow / 2), reset.do})
			v := judge(sends, allowed, rule.Window, rule.Limit)
			t.Logf("sent %d, accepted %d, %d false rejects, overshoot %.3f×", len(sends), v.accepted, v.falseRejects, v.overshoot)
			if v.overshoot > 1.1 || v.falseRejects > 0 {
				t.Errorf("overshoot %.3f× (want ≤ 1.1×), %d false rejects (want 0)", v.overshoot, v.falseRejects)
			}
			if v.accepted < 3*int(DefaultLimit)*9/10 {
				t.Errorf("accepted %d over three windows, want about %d", v.accepted, 3*DefaultLimit)
			}
		})
	}
}
