package limiters

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// herdSends is a cron herd on the model clock: clients each sending their whole limit once a
// window, split over the nodes, every burst a window after the client's previous one give or
// take jitter (a busy sender's: each burst sent up to jitter early or late), for windows
// windows; each request reaches its node up to 5 ms after it was sent. gap, when not zero,
// spaces every client's bursts exactly gap apart instead (no jitter).
func herdSends(rng *rand.Rand, base time.Time, clients, windows int, rule *Rule, jitter, gap time.Duration) []send {
	var out []send
	for c := range clients {
		id := fmt.Sprintf("cron-%d", c)
		first := base.Add(time.Duration(rng.Int64N(int64(rule.Window))))
		for k := range windows {
			at := first.Add(time.Duration(k) * rule.Window)
			if gap != 0 {
				at = first.Add(time.Duration(k) * gap)
			} else if jitter > 0 {
				at = at.Add(time.Duration(rng.Int64N(int64(2*jitter))) - jitter)
			}
			for i := range int(rule.Limit) {
				out = append(out, send{at: at, arrive: at.Add(time.Duration(rng.Int64N(int64(5 * time.Millisecond)))),
					node: i % aimedNodes, client: id})
			}
		}
	}
	return out
}

// Clients whose bursts land a window apart, alone and in herds of hundreds, on 8 nodes: no
// client gets more than 1.1× its limit in any window-long interval of arrivals, bursts less
// than a window apart by a few ms included (the design before took arrivals between
// window − 25 ms and window apart to be a window apart and let such a client through at
// 2×), and no refusal is false on arrival bounds. The client's own clock is logged beside:
// a burst sent a window after the previous one may arrive a few ms less than a window after
// it, and its refusal is then earned on arrival bounds only.
func TestBoundedBurstsAWindowApart(t *testing.T) {
	srv := redistest.Start(t)
	base := time.Unix(0, 0).Add(1000 * DefaultWindow)
	documents := aimedRule()                                                                                 // 600 in 60 s: each node's budget is 3
	pressure := &Rule{Name: "p", Algorithm: SlidingWindow, Limit: 100, Window: 12 * time.Second, Slices: 12} // budget 0
	tests := []struct {
		name    string
		rule    *Rule
		clients int
		windows int
		jitter  time.Duration
		gap     time.Duration
		redis   bool
	}{
		{name: "one client, bursts 10 ms short of a window apart", rule: documents, clients: 1, windows: 3, gap: DefaultWindow - 10*time.Millisecond},
		{name: "one client, bursts 10 ms short of a window apart, redis", rule: documents, clients: 1, windows: 3, gap: DefaultWindow - 10*time.Millisecond, redis: true},
		{name: "one client, bursts exactly a window apart", rule: documents, clients: 1, windows: 3, gap: DefaultWindow},
		{name: "herd of 300, ±150 ms", rule: pressure, clients: 300, windows: 4, jitter: 150 * time.Millisecond},
		{name: "herd of 40, ±150 ms, redis", rule: pressure, clients: 40, windows: 4, jitter: 150 * time.Millisecond, redis: true},
		{name: "herd of 20 at the documents' rule, ±150 ms", rule: documents, clients: 20, windows: 3, jitter: 150 * time.Millisecond},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var store BoundedStore = NewMemoryStore()
			if tc.redis {
				if err := srv.Client().FlushAll(t.Context()).Err(); err != nil {
					t.Fatal(err)
				}
				store = NewRedisStore(srv.Client())
			}
			var nodes []aimedNode
			for n := range aimedNodes {
				nodes = append(nodes, NewBoundedSync(store, BoundedNode(fmt.Sprint(n), aimedNodes)))
			}
			rng := rand.New(rand.NewPCG(36, uint64(i)))
			sends := herdSends(rng, base, tc.clients, tc.windows, tc.rule, tc.jitter, tc.gap)
			allowed := runAimed(t, nodes, aimedInterval, tc.rule, sends)
			by := map[string][]int{}
			for k, s := range sends {
				by[s.client] = append(by[s.client], k)
			}
			var worst float64
			var over, accepted, rejected, falseRejects, falseSent int
			for id, idx := range by {
				var ss []send
				var ok []bool
				for _, k := range idx {
					ss, ok = append(ss, sends[k]), append(ok, allowed[k])
				}
				v := judge(ss, ok, tc.rule.Window, tc.rule.Limit)
				worst = max(worst, v.overshoot)
				accepted, rejected, falseRejects, falseSent = accepted+v.accepted, rejected+v.rejected, falseRejects+v.falseRejects, falseSent+v.falseRejectsSent
				if v.overshoot > 1.1 {
					over++
					t.Errorf("%s: x%.3f its limit in one window-long interval of arrivals, want at most x1.1", id, v.overshoot)
				}
			}
			t.Logf("%d clients, %d sends: %d accepted, %d rejected; worst x%.3f on arrivals, %d clients over x1.1; false rejects %d on arrival bounds, %d on the client's clock (shown, not gated)",
				len(by), len(sends), accepted, rejected, worst, over, falseRejects, falseSent)
			if falseRejects > 0 {
				t.Errorf("%d false rejects on arrival bounds, want 0", falseRejects)
			}
			// Each client's first burst is its limit in a window: admitted whole.
			if accepted < len(by)*int(tc.rule.Limit) {
				t.Errorf("%d accepted, want at least a limit per client (%d)", accepted, len(by)*int(tc.rule.Limit))
			}
			if tc.gap != 0 && tc.gap < tc.rule.Window && rejected == 0 {
				t.Errorf("bursts %v apart on a window of %v: none refused", tc.gap, tc.rule.Window)
			}
		})
	}
}
