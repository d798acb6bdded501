package limiters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

var epoch = time.Unix(0, 0)

func at(ms int64) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }

func TestRuleValidate(t *testing.T) {
	ok := Rule{Name: "r", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	tests := []struct {
		name string
		edit func(*Rule)
		want string // substring of the error; empty for valid
	}{
		{"valid", func(*Rule) {}, ""},
		{"no algorithm", func(r *Rule) { r.Algorithm = "" }, "algorithm is missing"},
		{"unknown algorithm", func(r *Rule) { r.Algorithm = "leaky" }, `"leaky" is unknown`},
		{"zero limit", func(r *Rule) { r.Limit = 0 }, "limit must be > 0 (got 0)"},
		{"negative limit", func(r *Rule) { r.Limit = -5 }, "limit must be > 0 (got -5)"},
		{"zero window", func(r *Rule) { r.Window = 0 }, "window must be > 0"},
		{"no slices", func(r *Rule) { r.Slices = 0 }, "slices must be >= 1"},
		{"uneven slices", func(r *Rule) { r.Window = 61 * time.Nanosecond }, "does not divide"},
		{"bucket without burst", func(r *Rule) { r.Algorithm = TokenBucket; r.Burst = 0 }, "burst must be >= 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			err := r.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFixedWindowDecisions(t *testing.T) {
	r := Rule{Name: "f", Algorithm: FixedWindow, Limit: 3, Window: 10 * time.Second}
	l := NewLocal()
	tests := []struct {
		ms        int64
		allowed   bool
		remaining int64
		reset     time.Duration
		retry     time.Duration
	}{
		{1000, true, 2, 9 * time.Second, 0},
		{2000, true, 1, 8 * time.Second, 0},
		{3000, true, 0, 7 * time.Second, 0},
		{4000, false, 0, 6 * time.Second, 6 * time.Second},
		{9999, false, 0, time.Millisecond, time.Millisecond},
		{10000, true, 2, 10 * time.Second, 0}, // a new window
	}
	for _, tt := range tests {
		d := l.Take("c", &r, at(tt.ms))
		if d.Allowed != tt.allowed || d.Remaining != tt.remaining || d.ResetAfter != tt.reset || d.RetryAfter != tt.retry || d.Limit != 3 {
			t.Errorf("t=%dms: %+v, want allowed=%v remaining=%d reset=%v retry=%v", tt.ms, d, tt.allowed, tt.remaining, tt.reset, tt.retry)
		}
	}
}

func TestSlidingWindowRetryWaitsForEnoughSlices(t *testing.T) {
	// 4 per 4 s in 4 slices of 1 s: two in slice 0, two in slice 1.
	r := Rule{Name: "s", Algorithm: SlidingWindow, Limit: 4, Window: 4 * time.Second, Slices: 4}
	l := NewLocal()
	for _, ms := range []int64{0, 100, 1000, 1100} {
		if !l.Take("c", &r, at(ms)).Allowed {
			t.Fatalf("t=%dms rejected", ms)
		}
	}
	d := l.Take("c", &r, at(2500))
	// Slice 0 leaves the window at 4 s: 2 of 4 expire, so a retry passes then.
	if d.Allowed || d.RetryAfter != 1500*time.Millisecond || d.ResetAfter != 1500*time.Millisecond || d.Remaining != 0 {
		t.Errorf("decision at 2.5 s = %+v; want rejected, retry 1.5 s", d)
	}
	if !l.Take("c", &r, at(4000)).Allowed {
		t.Error("rejected after slice 0 left the window")
	}
	if got := l.Take("c", &r, at(4001)); !got.Allowed || got.Remaining != 0 {
		t.Errorf("second request at 4 s = %+v, want allowed with 0 remaining", got)
	}
	if l.Take("c", &r, at(4002)).Allowed {
		t.Error("allowed a fifth request in the window")
	}
}

func TestTokenBucketDecisions(t *testing.T) {
	// 10 per second refill (600/60 s), burst 3.
	r := Rule{Name: "b", Algorithm: TokenBucket, Limit: 600, Window: time.Minute, Burst: 3}
	l := NewLocal()
	tests := []struct {
		ms      int64
		allowed bool
		rem     int64
		retry   time.Duration
	}{
		{0, true, 2, 0}, {0, true, 1, 0}, {0, true, 0, 0},
		{0, false, 0, 100 * time.Millisecond},
		{50, false, 0, 50 * time.Millisecond},
		{100, true, 0, 0},
		{10000, true, 2, 0}, // refilled to the burst, not beyond
	}
	for _, tt := range tests {
		d := l.Take("c", &r, at(tt.ms))
		if d.Allowed != tt.allowed || d.Remaining != tt.rem || d.RetryAfter != tt.retry {
			t.Errorf("t=%dms: %+v, want allowed=%v remaining=%d retry=%v", tt.ms, d, tt.allowed, tt.rem, tt.retry)
		}
	}
}

func TestClientsAreIndependentAndPruned(t *testing.T) {
	r := Rule{Name: "f", Algorithm: FixedWindow, Limit: 1, Window: time.Second}
	l := NewLocal()
	if !l.Take("a", &r, at(0)).Allowed || !l.Take("b", &r, at(0)).Allowed || l.Take("a", &r, at(1)).Allowed {
		t.Fatal("clients share a counter")
	}
	if n := l.Prune(at(500)); n != 2 {
		t.Errorf("Prune kept %d clients, want 2", n)
	}
	if n := l.Prune(at(5000)); n != 0 {
		t.Errorf("Prune kept %d idle clients, want 0", n)
	}
}

func TestSplitEnforcesTheShare(t *testing.T) {
	r := Rule{Name: "f", Algorithm: FixedWindow, Limit: 600, Window: time.Minute}
	s := NewSplit(8)
	ctx := context.Background()
	n := 0
	for i := range 100 {
		if d, _ := s.Allow(ctx, "c", &r, at(int64(i))); d.Allowed {
			n++
		}
	}
	if n != 75 {
		t.Errorf("split node allowed %d of 100, want 75 (600/8)", n)
	}
}

func TestDelayedSyncBoundsTheFleet(t *testing.T) {
	// Four nodes, each sees the client at its full rate; between syncs each may pass what
	// the last view leaves, so the fleet overshoots by at most one interval's worth.
	r := Rule{Name: "s", Algorithm: SlidingWindow, Limit: 100, Window: 10 * time.Second, Slices: 10}
	store := NewMemoryStore()
	ctx := context.Background()
	nodes := make([]*DelayedSync, 4)
	for i := range nodes {
		nodes[i] = NewDelayedSync(store)
	}
	accepted := 0
	for ms := int64(0); ms < 10000; ms += 10 { // 100/s per node, 400/s in all
		now := at(ms)
		if ms%200 == 0 {
			for _, n := range nodes {
				if err := n.Sync(ctx, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, n := range nodes {
			if d, _ := n.Allow(ctx, "c", &r, now); d.Allowed {
				accepted++
			}
		}
	}
	if accepted < 100 || accepted > 100+4*20 {
		t.Errorf("fleet accepted %d in one window, want 100..180", accepted)
	}
	if store.Touches() == 0 || nodes[0].Touches() == 0 {
		t.Error("no exchange was counted")
	}
}

func TestDelayedSyncKeepsCountsWhenTheStoreFails(t *testing.T) {
	r := Rule{Name: "f", Algorithm: FixedWindow, Limit: 5, Window: time.Minute}
	store := &failingStore{Store: NewMemoryStore(), fail: true}
	n := NewDelayedSync(store)
	ctx := context.Background()
	for i := range 3 {
		if d, _ := n.Allow(ctx, "c", &r, at(int64(i))); !d.Allowed {
			t.Fatal("rejected under the limit")
		}
	}
	if err := n.Sync(ctx, at(10)); err == nil {
		t.Fatal("Sync hid the store's failure")
	}
	// The failed push is kept: 3 still count, and are pushed once the store is back.
	for i := range 3 {
		d, _ := n.Allow(ctx, "c", &r, at(int64(20+i)))
		if d.Allowed != (i < 2) {
			t.Errorf("request %d after the failure: allowed=%v", 4+i, d.Allowed)
		}
	}
	store.fail = false
	if err := n.Sync(ctx, at(30)); err != nil {
		t.Fatal(err)
	}
	// Another node that has seen the client learns the 5 on its next sync.
	other := NewDelayedSync(store)
	if d, _ := other.Allow(ctx, "c", &r, at(32)); !d.Allowed {
		t.Fatal("a node that knows nothing rejected")
	}
	if err := other.Sync(ctx, at(33)); err != nil {
		t.Fatal(err)
	}
	if d, _ := other.Allow(ctx, "c", &r, at(34)); d.Allowed || d.Remaining != 0 {
		t.Errorf("after sync: %+v; want rejected, the store holding the 5 pushed after the outage", d)
	}
}

type failingStore struct {
	Store
	fail bool
}

func (f *failingStore) Exchange(ctx context.Context, now time.Time, e []SyncEntry) error {
	if f.fail {
		return context.DeadlineExceeded
	}
	return f.Store.Exchange(ctx, now, e)
}

func TestShareAndBlindCeiling(t *testing.T) {
	r := Rule{Name: "b", Algorithm: TokenBucket, Limit: 600, Window: time.Minute, Burst: 60}
	if s := r.Share(8); s.Limit != 75 || s.Burst != 7 {
		t.Errorf("Share(8) = %d/%d, want 75/7", s.Limit, s.Burst)
	}
	if c := r.BlindCeiling(200*time.Millisecond, 8); c != 16 {
		t.Errorf("BlindCeiling = %g, want 16", c)
	}
}

// A sync carries only the clients that sent since the last one, however many the node
// tracks, so the lock that decisions wait on is held in proportion to the news; idle
// clients leave at Prune.
func TestDelayedSyncExchangesOnlyNewsAndPrunesIdleClients(t *testing.T) {
	r := Rule{Name: "s", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	store := &countingStore{Store: NewMemoryStore()}
	n := NewDelayedSync(store)
	ctx := context.Background()
	for i := range 50_000 {
		n.Allow(ctx, fmt.Sprintf("c%d", i), &r, at(0))
	}
	if err := n.Sync(ctx, at(100)); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		n.Allow(ctx, fmt.Sprintf("c%d", i), &r, at(200))
	}
	n.Allow(ctx, "c3", &r, at(201)) // twice in one interval: still one entry
	if err := n.Sync(ctx, at(300)); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(ctx, at(400)); err != nil { // nothing new: no exchange
		t.Fatal(err)
	}
	if want := []int{50_000, 7}; len(store.sizes) != 2 || store.sizes[0] != want[0] || store.sizes[1] != want[1] {
		t.Errorf("exchange sizes %v, want %v", store.sizes, want)
	}
	if got := n.Prune(at(30_000)); got != 50_000 {
		t.Errorf("Prune within the window kept %d, want 50000", got)
	}
	if got := n.Prune(at(60_150)); got != 7 {
		t.Errorf("Prune a window later kept %d, want the 7 recent clients", got)
	}
}

type countingStore struct {
	Store
	sizes []int
}

func (c *countingStore) Exchange(ctx context.Context, now time.Time, e []SyncEntry) error {
	c.sizes = append(c.sizes, len(e))
	return c.Store.Exchange(ctx, now, e)
}

// The lock time of one sync: 200,000 tracked clients (HS1), 100 of them with news.
func BenchmarkDelayedSyncWithManyClients(b *testing.B) {
	r := Rule{Name: "s", Algorithm: SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	n := NewDelayedSync(NewMemoryStore())
	ctx := context.Background()
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("client-%d", i)
		n.Allow(ctx, ids[i], &r, at(0))
	}
	_ = n.Sync(ctx, at(1))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now := at(int64(2 + i))
		for j := range 100 {
			n.Allow(ctx, ids[(i*100+j)%len(ids)], &r, now)
		}
		_ = n.Sync(ctx, now)
	}
}

// A node syncs only the clients it has news of; with FullView it pulls every client it
// tracks, so a node that saw nothing new still learns what the others counted.
func TestDelayedSyncFullView(t *testing.T) {
	ctx := context.Background()
	rule := Rule{Name: "r", Algorithm: SlidingWindow, Limit: 10, Window: time.Minute, Slices: 12}
	t0 := time.Unix(0, 0)
	for _, tt := range []struct {
		name      string
		opts      []DelayedOption
		touches   int64 // the quiet node's exchanges
		remaining int64 // its next decision's
	}{
		{"news only", nil, 1, 8},
		{"full view", []DelayedOption{FullView()}, 2, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := NewMemoryStore()
			quiet, busy := NewDelayedSync(store, tt.opts...), NewDelayedSync(store, tt.opts...)
			if _, err := quiet.Allow(ctx, "c", &rule, t0); err != nil {
				t.Fatal(err)
			}
			if err := quiet.Sync(ctx, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := busy.Allow(ctx, "c", &rule, t0.Add(2*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []*DelayedSync{busy, quiet} {
				if err := n.Sync(ctx, t0.Add(3*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			d, err := quiet.Allow(ctx, "c", &rule, t0.Add(4*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if quiet.Touches() != tt.touches || d.Remaining != tt.remaining {
				t.Errorf("quiet node: %d exchanges, %d remaining; want %d, %d", quiet.Touches(), d.Remaining, tt.touches, tt.remaining)
			}
		})
	}
}
