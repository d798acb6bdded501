package model

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// One lockstep sync: each node makes one exchange of its own, and every node's view has
// every node's push, whatever order the exchanges reach the store in.
func TestLockstepSync(t *testing.T) {
	ctx := context.Background()
	rule := limiters.Rule{Name: "r", Algorithm: limiters.SlidingWindow, Limit: 10, Window: time.Minute, Slices: 12}
	epoch := time.Unix(0, 0)
	l := newLockstep(3)
	for node, n := range []int{3, 2, 1} {
		for range n {
			if d, err := l.nodes[node].Allow(ctx, "c", &rule, epoch); err != nil || !d.Allowed {
				t.Fatalf("node %d: %+v, %v", node, d, err)
			}
		}
	}
	if err := l.sync(ctx, epoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := l.touches(); got != 3 {
		t.Errorf("%d exchanges after one sync of 3 nodes, want 3", got)
	}
	for i, n := range l.nodes {
		d, err := n.Allow(ctx, "c", &rule, epoch.Add(2*time.Second))
		// 6 counted by the fleet, this one makes 7: 3 left.
		if err != nil || !d.Allowed || d.Remaining != 3 {
			t.Errorf("node %d after the sync: %+v, %v; want allowed with 3 remaining", i, d, err)
		}
	}
	// A second sync: every node tracks the client and pulls its view (FullView), news or not.
	if err := l.sync(ctx, epoch.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := l.touches(); got != 6 {
		t.Errorf("%d exchanges after two syncs, want 6", got)
	}
	for i, n := range l.nodes {
		if d, _ := n.Allow(ctx, "c", &rule, epoch.Add(4*time.Second)); d.Remaining != 0 || !d.Allowed {
			t.Errorf("node %d: %+v; want the 10th request allowed with 0 remaining", i, d)
		}
	}
}

// The delayed-sync rows' nodes are DelayedSync making one exchange per node per sync: the
// document's model syncs on the first request an interval after the last (290 times in the
// window at 90/s and 0.2 s, floating point shifting a few), so the nodes make 8 × 290; the
// document's touches are its timer's, 8 × 300, which the nodes count on a timer (TestTimerTouches).
func TestDelayedSyncExchanges(t *testing.T) {
	tests := []struct {
		rate     int
		interval float64
		syncs    int64 // instants the model synced at
		accepted int
	}{
		{90, 0.2, 290, 609},
		{90, 1, 59, 630},
		{90, 5, 11, 900},
	}
	for _, tt := range tests {
		ex, accepted, err := delayedExchanges(tt.rate, tt.interval)
		if err != nil {
			t.Fatal(err)
		}
		if ex != Nodes*tt.syncs || accepted != tt.accepted {
			t.Errorf("%d/s every %gs: %d exchanges, %d accepted; want %d × %d, %d", tt.rate, tt.interval, ex, accepted, Nodes, tt.syncs, tt.accepted)
		}
	}
}

func delayedExchanges(rate int, interval float64) (int64, int, error) {
	row, ex, err := runDistributed(limiters.ModeDelayed, rate, interval, DistSeed)
	if err == nil && row.RunExchanges != ex {
		err = fmt.Errorf("the row says the run made %d exchanges, the nodes counted %d", row.RunExchanges, ex)
	}
	return ex, row.Accepted, err
}

// The document's touches are the nodes' timers over one window: each node that holds the
// client makes one exchange a tick, whatever it has to push.
func TestTimerTouches(t *testing.T) {
	ctx := context.Background()
	rule := Rule(limiters.SlidingWindow)
	tests := []struct {
		nodes    int
		window   time.Duration
		interval time.Duration
		want     int64
	}{
		{8, time.Minute, 200 * time.Millisecond, 2400}, // dagitik.mjs: 8 × ⌊60 / 0.2⌋
		{8, time.Minute, time.Second, 480},
		{8, time.Minute, 2 * time.Second, 240},
		{8, time.Minute, 5 * time.Second, 96},
		{3, 10 * time.Second, 3 * time.Second, 9}, // ticks at 3, 6 and 9 s
		{1, time.Second, 2 * time.Second, 0},      // no tick inside the window
	}
	for _, tt := range tests {
		got, err := timerTouches(ctx, tt.nodes, &rule, tt.window, tt.interval)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%d nodes, %v window, every %v: %d exchanges, want %d", tt.nodes, tt.window, tt.interval, got, tt.want)
		}
	}
	if _, err := timerTouches(ctx, 8, &rule, time.Minute, 0); err == nil {
		t.Error("a zero interval was accepted")
	}
}
