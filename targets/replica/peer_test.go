package replica

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/edgeproof/rlharness/limiters"
)

// The peer mode decides with go-redis/redis_rate: the limit as GCRA burst, then 429, with one
// script call per decision and its key in the store.
func TestPeerGCRADecidesInTheStore(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	rules := mustRules(t, "default: {limit: 3, window: 60s, algorithm: sliding_window, slices: 2}\n")
	_, ts := startReplica(t, Config{Mode: limiters.ModePeerGCRA, Redis: srv.Addr}, rules)
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	want := []int{200, 200, 200, 429, 429}
	for i, w := range want {
		a := ask(t, ts.URL, "peer-1")
		if a.status != w {
			t.Errorf("request %d: %d, want %d", i+1, a.status, w)
		}
		if i == 3 && a.header.Get("Retry-After") == "" {
			t.Errorf("request %d: 429 without Retry-After", i+1)
		}
		// redis_rate decides on Redis's clock, which the replica does not learn: it says nothing.
		if v := a.header.Get("X-RateLimit-Decided-At"); v != "" {
			t.Errorf("request %d: X-RateLimit-Decided-At %q from a limiter deciding on the store's clock, want none", i+1, v)
		}
	}
	if n, err := rdb.Exists(ctx, "rate:"+limiters.Key("peer-1", &rules.Default)).Result(); err != nil || n != 1 {
		t.Errorf("redis_rate's key for peer-1: exists %d (%v), want 1", n, err)
	}
	calls := scriptCalls(t, rdb)
	if calls < 5 || calls > 6 { // EVALSHA per decision, plus EVAL once when the script is loaded
		t.Errorf("%d script calls for 5 decisions, want 5 (6 with the first load)", calls)
	}
}

// scriptCalls is the number of EVAL and EVALSHA commands the store ran since its stats were reset.
func scriptCalls(t testing.TB, rdb interface {
	Info(context.Context, ...string) *redis.StringCmd
}) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		var c int
		if _, err := fmt.Sscanf(rest, "calls=%d", &c); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		n += c
	}
	return n
}
