package replica

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// farStore puts a real redis-server behind a TCP proxy (toxiproxy, in this process) whose
// every byte waits oneWay ± jitter each way: a store a round trip of 2 × oneWay away.
func farStore(t *testing.T, oneWay, jitter time.Duration) (addr string) {
	t.Helper()
	srv := redistest.Start(t)
	quiet := zerolog.Nop()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), quiet)
	p := toxiproxy.NewProxy(server, "far", "127.0.0.1:0", srv.Addr)
	p.Logger = &quiet
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	for _, stream := range []string{"upstream", "downstream"} {
		body := fmt.Sprintf(`{"name":"far-%s","type":"latency","stream":%q,"toxicity":1,"attributes":{"latency":%d,"jitter":%d}}`,
			stream, stream, oneWay.Milliseconds(), jitter.Milliseconds())
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := net.SplitHostPort(p.Listen); err != nil {
		t.Fatal(err)
	}
	return p.Listen
}

// The bounded design's store timeout follows the link: against a store 80 ms away (round
// trip, ± 10 ms), a guard with the configured 50 ms times out every sync, while the bounded
// design's guard, after a sync or two that time out and back off, waits about twice the
// measured round trip and every later sync succeeds; its decisions keep the store wait, and
// neither grows past the ceiling. A store beside the replica keeps the configured 50 ms.
func TestStoreTimeoutFollowsTheLink(t *testing.T) {
	const timeout, wait = 50 * time.Millisecond, 250 * time.Millisecond
	far := farStore(t, 40*time.Millisecond, 5*time.Millisecond)
	near := redistest.Start(t).Addr
	ctx := context.Background()
	for _, tt := range []struct {
		name          string
		addr          string
		follow        bool
		wantOK        int           // syncs of the 20 that succeed, at least
		wantAtLeast   time.Duration // the sync timeout after them
		wantAtMost    time.Duration
		wantFailedMin int // and at most this many fewer than 20: the rest
	}{
		{"far, fixed timeout", far, false, 0, timeout, timeout, 20},
		{"far, following the link", far, true, 17, 80 * time.Millisecond, followCeiling * wait, 0},
		{"near, following the link", near, true, 20, timeout, timeout, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMetrics(DefaultConfig(), func() float64 { return 0 }, func() float64 { return 0 }, func() float64 { return 0 })
			g := newStoreGuard(timeout, wait, m, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
			if tt.follow {
				g.followLink()
			}
			rdb := newRedisClient(tt.addr, timeout, wait)
			defer rdb.Close()
			ok, failed := 0, 0
			for range 20 {
				start := time.Now()
				limit := g.syncTimeout()
				err := g.bounded(ctx, opExchange, func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
				if err != nil {
					failed++
				} else {
					ok++
				}
				if took := time.Since(start); took > limit+max(limit/2, 50*time.Millisecond) {
					t.Errorf("a sync took %v, want at most its timeout %v and a little", took, limit)
				}
			}
			t.Logf("%d of 20 syncs succeeded, %d failed; the sync timeout is now %v, a decision's wait %v", ok, failed, g.syncTimeout(), g.follow(g.wait))
			if ok < tt.wantOK || (tt.wantFailedMin > 0 && failed < tt.wantFailedMin) {
				t.Errorf("%d of 20 syncs succeeded (%d failed), want at least %d to succeed and at least %d to fail", ok, failed, tt.wantOK, tt.wantFailedMin)
			}
			if got := g.syncTimeout(); got < tt.wantAtLeast || got > tt.wantAtMost {
				t.Errorf("sync timeout %v after the syncs, want %v to %v", got, tt.wantAtLeast, tt.wantAtMost)
			}
			// The replica's metrics say the limits as they stand.
			cs := g.collectors()
			if got, want := testutil.ToFloat64(cs[0]), g.syncTimeout().Seconds(); got != want {
				t.Errorf("rlreplica_store_timeout_seconds %v, want the sync timeout %v", got, want)
			}
			if got, want := testutil.ToFloat64(cs[1]), g.follow(g.wait).Seconds(); got != want {
				t.Errorf("rlreplica_store_wait_seconds %v, want the decision wait %v", got, want)
			}
			if tt.follow && tt.addr == far && testutil.ToFloat64(cs[0]) <= timeout.Seconds() {
				t.Errorf("rlreplica_store_timeout_seconds %v on a far link: want it past the configured %v", testutil.ToFloat64(cs[0]), timeout)
			}
			// A decision keeps the store wait, unless the link is longer than it allows.
			if got := g.follow(g.wait); got < wait || got > followCeiling*wait {
				t.Errorf("decision wait %v, want %v to %v", got, wait, followCeiling*wait)
			}
			if err := g.bounded(ctx, opTake, func(ctx context.Context) error { return rdb.Ping(ctx).Err() }); err != nil {
				t.Errorf("a decision's call: %v, want it answered within the store wait", err)
			}
		})
	}
}
