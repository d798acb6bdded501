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

var testRules = []Rule{
	{Name: "fixed", Algorithm: FixedWindow, Limit: 20, Window: 2 * time.Second},
	{Name: "sliding", Algorithm: SlidingWindow, Limit: 20, Window: 2 * time.Second, Slices: 4},
	{Name: "bucket", Algorithm: TokenBucket, Limit: 20, Window: 2 * time.Second, Burst: 5},
}

// The central script in Redis and the Go algorithm must agree on every decision.
func TestRedisTakeMatchesLocal(t *testing.T) {
	srv := redistest.Start(t)
	rs := NewRedisStore(srv.Client())
	for _, r := range testRules {
		t.Run(string(r.Algorithm), func(t *testing.T) {
			takeMatchesLocal(t, rs, &r, "client-1", 40*time.Millisecond, 400)
		})
	}
}

// The document's sliding window (600 per 60 s in 12 slices, HS3 and HS7) kept as one small
// hash per client must decide exactly as the Go algorithm does: the layout that replaces the
// document's twelve records per client changes memory, not decisions. Clients at 10, 20 and
// 40 requests/s against 10/s cross the limit, come back under it and fill every slice.
func TestRedisSlidingHashMatchesLocalAtTheDocumentsRule(t *testing.T) {
	srv := redistest.Start(t)
	rs := NewRedisStore(srv.Client())
	r := Rule{Name: "default", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	for _, gap := range []time.Duration{200 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond} {
		t.Run(gap.String(), func(t *testing.T) {
			takeMatchesLocal(t, rs, &r, "doc-"+gap.String(), gap, 3000)
		})
	}
}

// takeMatchesLocal sends n requests of one client, with seeded gaps of up to maxGap, to the
// Redis store and to the single-process limiter, and fails on the first decision that differs.
func takeMatchesLocal(t *testing.T, rs *RedisStore, r *Rule, client string, maxGap time.Duration, n int) {
	t.Helper()
	ctx := context.Background()
	base := time.Unix(1_800_000_000, 0)
	local := NewLocal()
	rng := rand.New(rand.NewPCG(1, 2))
	ms := int64(0)
	allowed := 0
	for i := range n {
		ms += rng.Int64N(maxGap.Milliseconds()) // bursts and gaps
		now := base.Add(time.Duration(ms) * time.Millisecond)
		want := local.Take(client, r, now)
		got, err := rs.Take(ctx, client, r, now)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("request %d at %dms: redis %+v, local %+v", i, ms, got, want)
		}
		if got.Allowed {
			allowed++
		}
	}
	if allowed == 0 || allowed == n {
		t.Errorf("allowed %d of %d: the test exercises nothing", allowed, n)
	}
}

func TestRedisKeysExpireAndAreEscaped(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	rs := NewRedisStore(rdb)
	ctx := context.Background()
	now := time.Now()
	for _, r := range testRules {
		if _, err := rs.Take(ctx, "a}:x{", &r, now); err != nil {
			t.Fatal(err)
		}
		key := Key("a}:x{", &r)
		ttl, err := rdb.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > r.Window+r.Window/2+5*time.Second {
			t.Errorf("%s: key %q TTL %v, want a TTL of about a window", r.Name, key, ttl)
		}
	}
	tests := []struct{ a, b string }{
		{"a}b", "a%7Db"}, {"x:y", "x%3Ay"}, {"{a}", "%7Ba%7D"}, {"p%7D", "p%257D"},
	}
	r := &testRules[0]
	for _, tt := range tests {
		if Key(tt.a, r) == Key(tt.b, r) {
			t.Errorf("clients %q and %q share key %q", tt.a, tt.b, Key(tt.a, r))
		}
	}
	if k := Key("a}b", r); k != "rl:{a%7Db}:fixed:fixed_window" {
		t.Errorf("Key = %q: the client must be the only hash tag", k)
	}
}

func TestRedisExchangeSharesCountsBetweenNodes(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	base := time.Unix(1_800_000_000, 0)
	for _, r := range testRules {
		t.Run(string(r.Algorithm), func(t *testing.T) {
			a := NewDelayedSync(NewRedisStore(srv.Client()))
			b := NewDelayedSync(NewRedisStore(srv.Client()))
			client := "exchange-" + r.Name
			now := base
			passed := 0
			for i := range 60 { // 60 requests in 600 ms, alternating nodes, sync every 100 ms
				now = base.Add(time.Duration(i*10) * time.Millisecond)
				if i%10 == 0 {
					for _, n := range []*DelayedSync{a, b} {
						if err := n.Sync(ctx, now); err != nil {
							t.Fatal(err)
						}
					}
				}
				n := a
				if i%2 == 1 {
					n = b
				}
				if d, _ := n.Allow(ctx, client, &r, now); d.Allowed {
					passed++
				}
			}
			limit, low := int(r.Limit), int(r.Limit)
			if r.Algorithm == TokenBucket {
				limit = int(r.Burst) + 6 // burst + 600 ms of refill at 10/s
				// The shared bucket starts at the first exchange, 100 ms after the first
				// request: one token of refill is never credited.
				low = limit - 1
			}
			// Each node passes at most one sync interval's worth unseen.
			if passed < low || passed > limit+10 {
				t.Errorf("two nodes passed %d, want %d..%d", passed, limit, limit+10)
			}
		})
	}
}

func TestRedisExchangeSurvivesARestartedStore(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r := testRules[1]
	n := NewDelayedSync(NewRedisStore(srv.Client()))
	now := time.Now()
	n.Allow(ctx, "c", &r, now)
	if err := n.Sync(ctx, now); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	n.Allow(ctx, "c", &r, now)
	if err := n.Sync(ctx, now); err == nil {
		t.Fatal("sync to a dead store succeeded")
	}
	srv.Restart() // empty, without the script cache
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := n.Sync(ctx, now)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync never recovered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, err := srv.Client().HGetAll(ctx, Key("c", &r)).Result()
	if err != nil || len(got) == 0 {
		t.Fatalf("restarted store holds %v (%v), want the count kept through the outage", got, err)
	}
}

// A delayed-sync exchange is one command however many clients it carries: the document's
// 40 touches/s for 8 nodes at 0.2 s, not one per client.
func TestRedisExchangeIsOneCommand(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	n := NewDelayedSync(NewRedisStore(rdb))
	now := time.Now()
	for i := range 500 {
		r := &testRules[i%len(testRules)]
		n.Allow(ctx, fmt.Sprintf("client-%d", i), r, now)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(ctx, now); err != nil { // nothing pending: no exchange at all
		t.Fatal(err)
	}
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:") || strings.HasPrefix(line, "cmdstat_eval:") {
			var c int
			fmt.Sscanf(line[strings.Index(line, "calls=")+6:], "%d", &c)
			calls += c
		}
	}
	if calls != 1 && calls != 2 { // EVALSHA, plus EVAL the first time the script is sent
		t.Errorf("sync of 500 clients made %d script calls, want 1 (2 with the first load)\n%s", calls, info)
	}
	if got := n.Touches(); got != 1 {
		t.Errorf("node counted %d exchanges, want 1", got)
	}
	if keys, _ := rdb.DBSize(ctx).Result(); keys != 500 {
		t.Errorf("store holds %d keys, want 500", keys)
	}
}
