package limiters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// storedCount is what the store holds for client under rule: the window's count, or the
// tokens taken from a full bucket.
func storedCount(t *testing.T, rs *RedisStore, client string, rule *Rule, now time.Time) float64 {
	t.Helper()
	e := []SyncEntry{{Client: client, Rule: rule}}
	if err := rs.Exchange(context.Background(), now, e); err != nil {
		t.Fatal(err)
	}
	if rule.Algorithm == TokenBucket {
		return float64(rule.Burst) - e[0].Tokens
	}
	var n int64
	for _, c := range e[0].View {
		n += c.Count
	}
	return float64(n)
}

// An exchange that times out may still have been applied: a paused store holds the command
// in its socket and runs it when it wakes, after the node gave up on the reply. The node
// pushes the same counts again with its next sync, and the store must count them once: a
// count pushed twice rejects clients under their limit (the false rejects of the cluster
// run) for the rest of the window.
func TestExchangeThatTimedOutButLandedCountsOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 50 * time.Millisecond,
		WriteTimeout: 50 * time.Millisecond, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	rs := NewRedisStore(rdb)
	ctx := context.Background()
	base := time.Unix(1_800_000_000, 0)
	rules := []Rule{
		{Name: "sliding", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12},
		{Name: "bucket", Algorithm: TokenBucket, Limit: 600, Window: 24 * time.Hour, Burst: 100},
	}
	for _, r := range rules {
		t.Run(string(r.Algorithm), func(t *testing.T) {
			node := NewDelayedSync(rs, NodeID("node-a"))
			other := NewDelayedSync(rs, NodeID("node-b"))
			now := base
			allow := func(n *DelayedSync, k int) {
				for range k {
					now = now.Add(10 * time.Millisecond)
					if d, _ := n.Allow(ctx, "c", &r, now); !d.Allowed {
						t.Fatalf("request refused at %v", now)
					}
				}
			}
			allow(node, 7)
			allow(other, 3)
			if err := other.Sync(ctx, now); err != nil {
				t.Fatal(err)
			}
			srv.Pause()
			err := node.Sync(ctx, now)
			srv.Resume()
			if err == nil {
				t.Fatal("the exchange with a paused store did not time out")
			}
			time.Sleep(100 * time.Millisecond) // the store runs the abandoned exchange
			allow(node, 5)
			if err := node.Sync(ctx, now); err != nil {
				t.Fatal(err)
			}
			// A retried push that lands after its predecessor did, and one that lands twice.
			if err := node.Sync(ctx, now); err != nil {
				t.Fatal(err)
			}
			if got, want := storedCount(t, rs, "c", &r, now), 15.0; got < want-0.5 || got > want+0.5 {
				t.Errorf("store holds %.1f, want %.0f (7 + 5 from the node whose exchange timed out, 3 from the other)", got, want)
			}
		})
	}
}

// The same on a Redis Cluster: one master paused while two nodes sync a hundred clients
// (the exchange fails on that shard only, a PartialExchangeError, and runs there when the
// master wakes); after it wakes every client's count in the cluster is what the nodes
// allowed, none counted twice.
func TestClusterExchangeThatTimedOutButLandedCountsOnce(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0, 5*time.Second)
	ctx := context.Background()
	addrs := c.Client().Options().Addrs
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 50 * time.Millisecond,
		WriteTimeout: 50 * time.Millisecond, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	r := &Rule{Name: "paused", Algorithm: SlidingWindow, Limit: 1_000_000, Window: time.Hour, Slices: 4}
	nodes := []*DelayedSync{NewDelayedSync(NewRedisStore(rdb), NodeID("a")), NewDelayedSync(NewRedisStore(rdb), NodeID("b"))}
	const clients = 100
	accepted := make([]int64, clients)
	now := time.Unix(1_800_000_200, 0)
	step := func() {
		now = now.Add(10 * time.Millisecond)
		for i := range clients {
			if d, _ := nodes[i%2].Allow(ctx, fmt.Sprintf("p-%d", i), r, now); d.Allowed {
				accepted[i]++
			}
		}
	}
	syncAll := func() (partial int) {
		for _, n := range nodes {
			var pe *PartialExchangeError
			if err := n.Sync(ctx, now); errors.As(err, &pe) {
				partial++
			} else if err != nil {
				t.Fatalf("sync failed whole: %v", err)
			}
		}
		return partial
	}
	step()
	syncAll()
	victim := c.Masters()[0]
	step()
	victim.Pause()
	partial := syncAll()
	victim.Resume()
	if partial != len(nodes) {
		t.Fatalf("%d of %d syncs failed in part while a master was paused, want all", partial, len(nodes))
	}
	time.Sleep(200 * time.Millisecond) // the woken master runs the abandoned exchanges
	step()
	for range 2 {
		if p := syncAll(); p != 0 {
			t.Fatalf("%d syncs still failed in part after the master woke", p)
		}
	}
	for i := range clients {
		h, err := rdb.HGetAll(ctx, Key(fmt.Sprintf("p-%d", i), r)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := hashTotal(h); got != accepted[i] {
			t.Errorf("client %d: cluster holds %d, nodes allowed %d", i, got, accepted[i])
		}
	}
}

// The store's side of a push mark, exchange by exchange on one key: each step sends a push
// of the node's counts base..total (window: its oldest counts first) and the store must
// end up holding each count once.
func TestPushMarkCountsEachCountOnce(t *testing.T) {
	srv := redistest.Start(t)
	rs := NewRedisStore(srv.Client())
	now := time.Unix(1_800_000_300, 0)
	win := &Rule{Name: "marks", Algorithm: SlidingWindow, Limit: 1000, Window: time.Hour, Slices: 4}
	bkt := &Rule{Name: "marks", Algorithm: TokenBucket, Limit: 1, Window: 24 * time.Hour, Burst: 1000}
	d := win.sliceIndex(now)
	type push struct {
		node       string
		inc        int64
		base, tot  int64
		old, young int64 // the window push: counts in slice d-1, then in slice d
	}
	tests := []struct {
		name   string
		pushes []push
		want   float64
	}{
		{"no mark adds as it is", []push{{"", 0, 0, 5, 2, 3}, {"", 0, 0, 5, 2, 3}}, 10},
		{"first push", []push{{"a", 1, 0, 5, 2, 3}}, 5},
		{"the same push twice", []push{{"a", 1, 0, 5, 2, 3}, {"a", 1, 0, 5, 2, 3}}, 5},
		{"a landed push sent again with newer counts", []push{{"a", 1, 0, 5, 2, 3}, {"a", 1, 0, 8, 2, 6}}, 8},
		{"an older push landing after a newer one", []push{{"a", 1, 0, 8, 2, 6}, {"a", 1, 0, 5, 2, 3}}, 8},
		{"counts that left the window unpushed", []push{{"a", 1, 0, 5, 2, 3}, {"a", 1, 4, 8, 0, 4}}, 8},
		{"two nodes", []push{{"a", 1, 0, 5, 2, 3}, {"b", 1, 0, 5, 2, 3}, {"a", 1, 0, 5, 2, 3}}, 10},
		{"a new incarnation starts from nothing", []push{{"a", 1, 0, 5, 2, 3}, {"a", 2, 0, 4, 1, 3}}, 9},
	}
	for i, tc := range tests {
		for _, r := range []*Rule{win, bkt} {
			t.Run(tc.name+"/"+string(r.Algorithm), func(t *testing.T) {
				client := fmt.Sprintf("mark-%d", i)
				for _, p := range tc.pushes {
					e := SyncEntry{Client: client, Rule: r, Mark: PushMark{Node: p.node, Inc: p.inc, Base: p.base, Total: p.tot}}
					if r.Algorithm == TokenBucket {
						e.Spent = p.old + p.young
					} else {
						for _, c := range []SliceCount{{d - 1, p.old}, {d, p.young}} {
							if c.Count > 0 {
								e.Push = append(e.Push, c)
							}
						}
					}
					if err := rs.Exchange(context.Background(), now, []SyncEntry{e}); err != nil {
						t.Fatal(err)
					}
				}
				if got := storedCount(t, rs, client, r, now); got < tc.want-0.01 || got > tc.want+0.01 {
					t.Errorf("store holds %.2f, want %.0f", got, tc.want)
				}
			})
		}
	}
}

// ScriptCommands names every command the store's scripts run inside Redis, so a harness that
// counts round trips from INFO commandstats can leave them out: a command missing from it
// (as HGET was when the push marks came) counts one round trip per client per sync.
func TestScriptCommandsNameWhatTheScriptsRun(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	rs := NewRedisStore(rdb)
	now := time.Unix(1_800_000_400, 0)
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range testRules {
		if _, err := rs.Take(ctx, "central", &r, now); err != nil {
			t.Fatal(err)
		}
		node := NewDelayedSync(rs, NodeID("n"))
		for range 2 {
			if _, err := node.Allow(ctx, "delayed", &r, now); err != nil {
				t.Fatal(err)
			}
			if err := node.Sync(ctx, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The bounded design's settle (a decision past the budget, a sync's push) and epoch.
	b := NewBoundedSync(rs, BoundedNode("b", 1))
	r := testRules[1]
	for i := range r.Limit + 2 {
		if _, err := b.Allow(ctx, "bounded", &r, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Sync(ctx, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if b.Calls() == 0 {
		t.Fatal("the bounded node made no store call past its budget")
	}
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"evalsha": true, "eval": true, "info": true, "config|resetstat": true, "hello": true, "client|setinfo": true}
	for _, c := range ScriptCommands {
		known[c] = true
	}
	for _, line := range strings.Split(info, "\n") {
		name, _, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		if cmd := strings.TrimPrefix(name, "cmdstat_"); !known[cmd] {
			t.Errorf("the scripts ran %s, which ScriptCommands does not name", cmd)
		}
	}
}
