package limiters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// storeWork is what a redis-server did: its top-level commands' calls and the CPU time INFO
// commandstats gives them (usec; a script's includes its inner commands').
func storeWork(tb testing.TB, rdb *redis.Client) (calls, usec int64) {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" || name == "cmdstat_config|resetstat" {
			continue
		}
		// A script's inner commands are in its own time already, and no round trip.
		if !strings.HasPrefix(name, "cmdstat_eval") && strings.Contains(scriptCommandsList, "|"+strings.TrimPrefix(name, "cmdstat_")+"|") {
			continue
		}
		for kv := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

// scriptCommandsList is ScriptCommands as one string, for the benchmark's lookups.
var scriptCommandsList = "|" + strings.Join(ScriptCommands, "|") + "|"

// benchNode is one node of design over rdb, emptied first, named as the replicas name a node.
func benchNode(b *testing.B, rdb *redis.Client, design Design) (*redis.Client, hs2Node) {
	b.Helper()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	if design == DesignBounded {
		return rdb, NewBoundedSync(NewRedisStore(rdb), BoundedNode("0-bench", DefaultNodes))
	}
	return rdb, NewDelayedSync(NewRedisStore(rdb), NodeID("0-bench"))
}

// measureSteps takes warm steps, then one step an op, and reports the store's round trips
// and Redis µs per op; it returns the µs.
func measureSteps(b *testing.B, rdb *redis.Client, warm int, step func()) float64 {
	for range warm {
		step()
	}
	if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	ops := 0
	for b.Loop() {
		step()
		ops++
	}
	calls, usec := storeWork(b, rdb)
	b.ReportMetric(float64(calls)/float64(ops), "round-trips/op")
	b.ReportMetric(float64(usec)/float64(ops), "redis-µs/op")
	return float64(usec) / float64(ops)
}

// hs2Node is one of the fleet's 8 nodes at the documents' HS2 (40,000 req/s over 200,000
// clients): 5,000 requests a second, each client seen about 1.5 times a window, synced
// every 200 ms. One op is one sync interval: 1,000 decisions, then the sync.
type hs2Node interface {
	Limiter
	Sync(ctx context.Context, now time.Time) error
}

// BenchmarkStoreAtHS2 runs one node's share of HS2 against a real redis-server, both designs
// side by side, and reports what the store did per sync interval: round trips and the CPU
// time Redis spent (INFO commandstats usec); redis-%core-HS2 is that for the 8 nodes'
// 5 intervals a second each, as a share of Redis's one core.
func BenchmarkStoreAtHS2(b *testing.B) {
	const (
		clients  = 200_000
		perSync  = 1_000 // 5,000 req/s per node × 0.2 s
		nodes    = 8
		interval = 200 * time.Millisecond
	)
	ids := make([]string, clients)
	for i := range ids {
		ids[i] = fmt.Sprintf("bg-%06d", i)
	}
	rule := Rule{Name: "default", Algorithm: SlidingWindow, Limit: DefaultLimit, Window: DefaultWindow, Slices: DefaultSlices}
	srv := redistest.Start(b)
	for _, design := range Designs() {
		b.Run(string(design), func(b *testing.B) {
			rdb, n := benchNode(b, srv.Client(), design)
			ctx := context.Background()
			now := time.Unix(1_800_000_000, 0)
			k := 0
			step := func() {
				for range perSync {
					if _, err := n.Allow(ctx, ids[k*7919%clients], &rule, now); err != nil {
						b.Fatal(err)
					}
					k++
				}
				if err := n.Sync(ctx, now); err != nil {
					b.Fatal(err)
				}
				now = now.Add(interval)
			}
			usec := measureSteps(b, rdb, 50, step) // warm: the node's view and the store's keys
			b.ReportMetric(usec*nodes*float64(time.Second/interval)/1e6*100, "redis-%core-HS2")
		})
	}
}

// BenchmarkHotClient is a client at its limit, sent to one node (the others' share
// unseen): the bounded design decides it past the budget with one settle a request, the
// document's design counts locally and exchanges it each interval. One op is one request;
// a sync every 20 requests (600 per minute is 10 a second: two a sync interval is the
// documents', 20 here so that the store's part shows).
func BenchmarkHotClient(b *testing.B) {
	rule := Rule{Name: "default", Algorithm: SlidingWindow, Limit: DefaultLimit, Window: DefaultWindow, Slices: DefaultSlices}
	srv := redistest.Start(b)
	for _, design := range Designs() {
		b.Run(string(design), func(b *testing.B) {
			rdb, n := benchNode(b, srv.Client(), design)
			ctx := context.Background()
			now := time.Unix(1_800_000_000, 0)
			gap := DefaultWindow / time.Duration(DefaultLimit) // at its limit, evenly
			i := 0
			step := func() {
				if _, err := n.Allow(ctx, "hot", &rule, now); err != nil {
					b.Fatal(err)
				}
				if i++; i%20 == 0 {
					if err := n.Sync(ctx, now); err != nil {
						b.Fatal(err)
					}
				}
				now = now.Add(gap)
			}
			measureSteps(b, rdb, 2*DefaultLimit, step) // warm: two windows, every sub-slice of the window holds some
		})
	}
}
