package limiters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// The settle script's log, trimmed once and passed once per batch, gives what the memory
// store gives by trimming at every decision: the same answers and decision times, call by call, for a client driven past its limit by three
// nodes (decisions and pushes, requests arriving in bursts and gaps, on a window of 12
// slices) and left idle for most of a window in between.
func TestSettleRedisMatchesMemory(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rule := &Rule{Name: "default", Algorithm: SlidingWindow, Limit: 50, Window: 6 * time.Second, Slices: 12}
	bd := BoundsFor(rule, 3)
	mem, red := NewMemoryStore(), NewRedisStore(srv.Client())
	rng := rand.New(rand.NewPCG(7, 7))
	at := time.Unix(1_800_000_000, 0)
	counted := map[string]int64{}
	var allowed, full, late int
	for i := range 3000 {
		switch {
		case i%500 == 250: // idle for most of a window
			at = at.Add(rule.Window - time.Duration(rng.Int64N(int64(time.Second))))
		case rng.IntN(10) == 0: // a burst
		default:
			at = at.Add(time.Duration(rng.Int64N(int64(250 * time.Millisecond)))) // about the limit's rate
		}
		node := fmt.Sprint(rng.IntN(3))
		t0 := at.UnixMicro()
		e := SettleEntry{Client: "c", Rule: rule, Bounds: bd, At: t0}
		nd := rng.IntN(4)
		if rng.IntN(8) == 0 {
			nd = 1 + rng.IntN(40) // a burst, its requests across a few sub-slices
		}
		for k := range nd { // decisions in order, the last a µs before the call
			e.Decide = append(e.Decide, t0-int64(nd-k)*int64(rng.IntN(4))*1_000-int64(nd-k))
		}
		slices.Sort(e.Decide)
		if rng.IntN(4) == 0 || len(e.Decide) == 0 { // a push of what the node admitted alone
			n := 1 + rng.Int64N(3)
			e.Push = []SubCount{{Index: floorDiv(t0, bd.Sub), Count: n, Newest: t0}}
			e.Mark = PushMark{Node: node, Inc: 1, Base: counted[node], Total: counted[node] + n}
			counted[node] += n
		} else {
			e.Mark = PushMark{Node: node, Inc: 1, Base: counted[node], Total: counted[node]}
		}
		got := []SettleEntry{e}
		want := []SettleEntry{e}
		want[0].Decide = slices.Clone(e.Decide)
		if err := red.Settle(ctx, at, got); err != nil {
			t.Fatal(err)
		}
		if err := mem.Settle(ctx, at, want); err != nil {
			t.Fatal(err)
		}
		g, w := got[0], want[0]
		if !slices.Equal(g.Allowed, w.Allowed) || !slices.Equal(g.DecidedAt, w.DecidedAt) || g.Reset != w.Reset ||
			g.Count != w.Count || g.Clock != w.Clock || g.FullUntil != w.FullUntil || g.ResetAt != w.ResetAt {
			t.Fatalf("call %d at %v: redis {allowed %v at %v reset %v count %d clock %d full until %d reset at %d}, memory {%v %v %v %d %d %d %d}",
				i, at.Sub(time.Unix(1_800_000_000, 0)), g.Allowed, g.DecidedAt, g.Reset, g.Count, g.Clock, g.FullUntil, g.ResetAt,
				w.Allowed, w.DecidedAt, w.Reset, w.Count, w.Clock, w.FullUntil, w.ResetAt)
		}
		counted[node] += g.admitted()
		allowed += int(g.admitted())
		if g.FullUntil > 0 {
			full++
		}
		for k, d := range g.DecidedAt {
			if d > g.Decide[k] {
				late++ // decided at the store clock, another node's newer decision
			}
		}
	}
	t.Logf("%d admitted, %d answers full, %d decisions taken at the store clock after their arrival", allowed, full, late)
	// Three nodes' calls interleave out of arrival order: the store clock, not the arrival,
	// decides some of them.
	if allowed < 300 || full < 100 || late < 25 {
		t.Errorf("%d admitted, %d full, %d at the store clock: the stream does not drive the client past its limit out of order", allowed, full, late)
	}
}

// A burst of one client at one node, on a real redis-server: the requests past the node's
// budget that arrive while a store call of the client is in flight go together in the next
// call, so a thousand concurrent requests cost the store a few calls, not a thousand, and
// exactly the limit is admitted.
func TestBoundedBatchesABurst(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var calls atomic.Int64
	n := NewBoundedSync(NewRedisStore(srv.Client()), BoundedNode("0", aimedNodes),
		StoreCalls(func(ctx context.Context, op string, f func(context.Context) error) error {
			if op == "take" {
				calls.Add(1)
			}
			return f(ctx)
		}))
	rule := aimedRule()
	now := time.Unix(1_800_000_000, 0)
	const burst = 1000
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range burst {
		wg.Go(func() {
			d, err := n.Allow(ctx, "burst", rule, now)
			if err != nil {
				t.Error(err)
			}
			if d.Allowed {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("%d requests at once: %d admitted, %d store calls", burst, admitted.Load(), calls.Load())
	if admitted.Load() != DefaultLimit {
		t.Errorf("%d admitted, want the limit, %d", admitted.Load(), DefaultLimit)
	}
	if c := calls.Load(); c < 1 || c > 20 {
		t.Errorf("%d store calls for %d requests, want a few (one a round trip)", c, burst)
	}
}

// A node's store call that timed out at the node but reached the store after the node's
// next call (Redis ran them from two connections in the other order) must admit nothing:
// the node decided its requests alone and pushed them with the next call. CI saw the store
// count such a call's five requests a second time, and the client refused five requests
// before its limit (595 admitted of 600).
func TestSettleLateCallAdmitsNothing(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rule := quickRule()
	bd := BoundsFor(rule, 8)
	at := time.Unix(1_800_000_000, 0)
	t0 := at.UnixMicro()
	five := []int64{t0 - 5, t0 - 4, t0 - 3, t0 - 2, t0 - 1}
	// Call 1 carries five decisions; the node times out on it, admits the five alone and
	// sends call 2 with them pushed and one decision more.
	late := SettleEntry{Client: "c", Rule: rule, Bounds: bd, At: t0, Decide: five,
		Mark: PushMark{Node: "n0", Inc: 1, Base: 0, Total: 0, Call: 1}}
	next := SettleEntry{Client: "c", Rule: rule, Bounds: bd, At: t0 + 1_000, Decide: []int64{t0 + 1_000},
		Push: []SubCount{{Index: floorDiv(t0, bd.Sub), Count: 5, Newest: t0 - 1}},
		Mark: PushMark{Node: "n0", Inc: 1, Base: 0, Total: 5, Call: 2}}
	for _, tc := range boundedStores(srv) {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "redis" {
				if err := srv.Client().FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			calls := []SettleEntry{next, late} // the store runs call 2 first
			calls[0].Decide, calls[1].Decide = slices.Clone(next.Decide), slices.Clone(late.Decide)
			for i := range calls {
				if err := tc.store.Settle(ctx, at, calls[i:i+1]); err != nil {
					t.Fatal(err)
				}
			}
			n2, n1 := calls[0], calls[1]
			if n2.admitted() != 1 || n1.admitted() != 0 || n1.Count != 6 {
				t.Errorf("call 2 admitted %d, the late call 1 %d, the store then counts %d: want 1, 0 and 6 (the five the node admitted alone, once)",
					n2.admitted(), n1.admitted(), n1.Count)
			}
			// In order (no timeout), call 1 decides: the same five admitted by the store.
			inOrder := []SettleEntry{late}
			inOrder[0].Client, inOrder[0].Decide = "d", slices.Clone(late.Decide)
			if err := tc.store.Settle(ctx, at, inOrder); err != nil {
				t.Fatal(err)
			}
			if inOrder[0].admitted() != 5 {
				t.Errorf("call 1 in order admitted %d, want 5", inOrder[0].admitted())
			}
		})
	}
}

// A call's time is its last request's arrival; a request that arrived later, in the next
// sub-slice, may have been admitted within the node's budget before the call took its
// counts (concurrent requests take the node's lock in any order). Its count goes with the
// call's push: the store must hold every admission once the node has flushed, none dropped
// (a stress run of 8 nodes stored one fewer than they admitted in 2 rounds of 60).
func TestPushCarriesCountsNewerThanTheCall(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rule := quickRule()
	bd := BoundsFor(rule, 8) // budget 3, sub-slice 40 ms
	base := time.UnixMicro((1_800_000_000_000_000/bd.Sub + 1) * bd.Sub)
	for _, tc := range boundedStores(srv) {
		t.Run(tc.name, func(t *testing.T) {
			n := NewBoundedSync(tc.store, BoundedNode("n0", 8))
			// Within the budget: two in sub-slice k, the third in k+1; then a request that
			// arrived in k but took the lock last, past the budget: the store decides it.
			arrivals := []time.Time{base, base.Add(time.Millisecond), base.Add(time.Duration(bd.Sub+1) * time.Microsecond), base.Add(2 * time.Millisecond)}
			for i, at := range arrivals {
				d, err := n.Allow(ctx, "c", rule, at)
				if err != nil || !d.Allowed {
					t.Fatalf("request %d at %v: allowed %v, err %v; want admitted", i, at.Sub(base), d.Allowed, err)
				}
			}
			end := base.Add(time.Duration(2*bd.Sub) * time.Microsecond)
			if err := n.Flush(ctx, end); err != nil {
				t.Fatal(err)
			}
			probe := []SettleEntry{{Client: "c", Rule: rule, Bounds: bd, At: end.UnixMicro()}}
			if err := tc.store.Settle(ctx, end, probe); err != nil {
				t.Fatal(err)
			}
			if probe[0].Count != int64(len(arrivals)) {
				t.Errorf("the store counts %d after the node flushed, want the %d it admitted", probe[0].Count, len(arrivals))
			}
		})
	}
}

// A re-push (everything a node admitted in the window, under a new incarnation, after the
// store forgot or its epoch changed) adds only what the store lacks of the node's counts:
// one that lands twice, or finds a mark the node wrote since (a first call that needed no
// re-push, an earlier re-push the node gave up on), is counted once. Without it a client
// whose first store call came between a restart and its node's next sync was counted twice.
func TestRepushCountsEachCountOnce(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rule := quickRule()
	bd := BoundsFor(rule, 8)
	at := time.Unix(1_800_000_000, 0)
	t0 := at.UnixMicro()
	type push struct {
		inc, base, total int64
		repush           bool
	}
	for i, tc := range []struct {
		name   string
		pushes []push
		want   int64
	}{
		{"a re-push to a store that forgot adds it all", []push{{2, 0, 5, true}}, 5},
		{"a re-push that landed, sent again", []push{{2, 0, 5, true}, {2, 0, 5, true}}, 5},
		{"a mark written since: a first call that needed no re-push", []push{{1, 0, 3, false}, {2, 0, 5, true}}, 5},
		{"an earlier re-push that landed unseen, then another", []push{{2, 0, 5, true}, {3, 0, 6, true}}, 6},
		{"after adopting, the incarnation's pushes add their new counts", []push{{1, 0, 3, false}, {2, 0, 5, true}, {2, 5, 7, false}}, 7},
		{"a new incarnation that is not a re-push starts from nothing", []push{{1, 0, 3, false}, {2, 0, 4, false}}, 7},
	} {
		for _, st := range boundedStores(srv) {
			t.Run(tc.name+"/"+st.name, func(t *testing.T) {
				client := fmt.Sprintf("repush-%d", i)
				for k, p := range tc.pushes {
					e := []SettleEntry{{Client: client, Rule: rule, Bounds: bd, At: t0 + int64(k),
						Push: []SubCount{{Index: floorDiv(t0, bd.Sub), Count: p.total - p.base, Newest: t0}},
						Mark: PushMark{Node: "n0", Inc: p.inc, Base: p.base, Total: p.total, Call: int64(k + 1), Repush: p.repush}}}
					if err := st.store.Settle(ctx, at, e); err != nil {
						t.Fatal(err)
					}
					if e[0].Reset {
						t.Fatalf("push %d: the store asked for a re-push", k)
					}
				}
				probe := []SettleEntry{{Client: client, Rule: rule, Bounds: bd, At: t0 + 10}}
				if err := st.store.Settle(ctx, at, probe); err != nil {
					t.Fatal(err)
				}
				if probe[0].Count != tc.want {
					t.Errorf("the store counts %d, want %d", probe[0].Count, tc.want)
				}
			})
		}
	}
}

// The race the re-push mark closes, on one node: the store restarts empty, a client's first
// call past its budget lands there (it pushes its budget's counts, nothing was lost), and
// then the node's sync finds the new epoch and pushes the client again whole.
func TestSyncAfterARestartDoesNotCountAFreshClientTwice(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rule := quickRule()
	base := time.Unix(1_800_000_000, 0)
	for _, st := range []struct {
		name   string
		store  BoundedStore
		forget func()
	}{
		{"memory", NewMemoryStore(), nil},
		{"redis", NewRedisStore(srv.Client()), func() { srv.Client().FlushAll(ctx) }},
	} {
		t.Run(st.name, func(t *testing.T) {
			if st.forget == nil {
				st.forget = st.store.(*MemoryStore).Forget
			}
			n := NewBoundedSync(st.store, BoundedNode("n0", 8))
			if err := n.Sync(ctx, base); err != nil { // the node learns the store's epoch
				t.Fatal(err)
			}
			st.forget()
			const sent = 5 // three within the budget, two decided by the store
			for i := range sent {
				if d, _ := n.Allow(ctx, "fresh", rule, base.Add(time.Duration(i+1)*time.Millisecond)); !d.Allowed {
					t.Fatalf("request %d refused", i)
				}
			}
			if err := n.Sync(ctx, base.Add(50*time.Millisecond)); err != nil { // finds the new epoch
				t.Fatal(err)
			}
			probe := []SettleEntry{{Client: "fresh", Rule: rule, Bounds: BoundsFor(rule, 8), At: base.Add(60 * time.Millisecond).UnixMicro()}}
			if err := st.store.Settle(ctx, base.Add(60*time.Millisecond), probe); err != nil {
				t.Fatal(err)
			}
			if probe[0].Count != sent {
				t.Errorf("the store counts %d after the sync's re-push, want the %d admitted", probe[0].Count, sent)
			}
		})
	}
}

// namedStore is a bounded store a test runs on, by name.
type namedStore struct {
	name  string
	store BoundedStore
}

// boundedStores are the stores a bounded test runs on alike: the memory store and srv.
func boundedStores(srv *redistest.Server) []namedStore {
	return []namedStore{{"memory", NewMemoryStore()}, {"redis", NewRedisStore(srv.Client())}}
}

// quickRule is the default rule at the quick load test's time scale (0.2): 600 in 12 s.
func quickRule() *Rule {
	return &Rule{Name: "default", Algorithm: SlidingWindow, Limit: 600, Window: 12 * time.Second, Slices: 12}
}

// A bounded node's sync costs the store one command for the document's exchange of its
// fixed-window and token-bucket clients, and reads the store's epoch only while it tracks
// sliding-window clients (whose re-push after a restart the epoch is for).
func TestBoundedSyncReadsTheEpochOnlyForSlidingClients(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	fixed := &Rule{Name: "f", Algorithm: FixedWindow, Limit: 100, Window: time.Minute}
	bucket := &Rule{Name: "b", Algorithm: TokenBucket, Limit: 100, Window: time.Minute, Burst: 10}
	sliding := &Rule{Name: "s", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	tests := []struct {
		name  string
		rules []*Rule
		want  int64 // store commands per sync
	}{
		{"fixed window only", []*Rule{fixed}, 1},
		{"token bucket only", []*Rule{bucket}, 1},
		{"fixed window and token bucket", []*Rule{fixed, bucket}, 1},
		{"sliding window within its budget", []*Rule{sliding}, 1},
		{"fixed window and sliding window", []*Rule{fixed, sliding}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			n := NewBoundedSync(NewRedisStore(rdb), BoundedNode("0-t", 8))
			now := time.Unix(1_800_000_000, 0)
			const syncs = 10
			for i := range syncs + 1 {
				if i == 1 { // the first sync loads the scripts (EVALSHA, then EVAL)
					if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				at := now.Add(time.Duration(i) * 200 * time.Millisecond)
				for _, r := range tt.rules {
					if _, err := n.Allow(ctx, fmt.Sprint("c", i), r, at); err != nil {
						t.Fatal(err)
					}
				}
				if err := n.Sync(ctx, at); err != nil {
					t.Fatal(err)
				}
			}
			calls, _ := storeWork(t, rdb)
			if calls != tt.want*syncs {
				t.Errorf("%d store commands over %d syncs, want %d a sync", calls, syncs, tt.want)
			}
		})
	}
}
