package limiters

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// shardDown is a store one of whose shards is down: the clients named "down-…" are not
// exchanged, every other one is, in the in-process store.
type shardDown struct {
	*MemoryStore
	down bool
}

func (s *shardDown) Exchange(ctx context.Context, now time.Time, entries []SyncEntry) error {
	var up []SyncEntry
	var upIdx, failed []int
	for i, e := range entries {
		if s.down && strings.HasPrefix(e.Client, "down-") {
			failed = append(failed, i)
			continue
		}
		up = append(up, e)
		upIdx = append(upIdx, i)
	}
	if err := s.MemoryStore.Exchange(ctx, now, up); err != nil {
		return err
	}
	for j, i := range upIdx {
		entries[i] = up[j]
	}
	if len(failed) > 0 {
		return &PartialExchangeError{Failed: failed, Of: len(entries), Err: errors.New("shard down")}
	}
	return nil
}

// A sync that reaches only some shards applies those clients' views and keeps the others'
// counts for the next sync: nothing is lost while the shard is down, nothing pushed twice.
func TestDelayedSyncPartialExchange(t *testing.T) {
	ctx := context.Background()
	store := &shardDown{MemoryStore: NewMemoryStore(), down: true}
	a, b := NewDelayedSync(store), NewDelayedSync(store)
	r := &Rule{Name: "p", Algorithm: SlidingWindow, Limit: 1000, Window: time.Minute, Slices: 6}
	bucket := &Rule{Name: "pb", Algorithm: TokenBucket, Limit: 600, Window: time.Minute, Burst: 1000}
	now := time.Unix(1_800_000_000, 0)
	for round := range 4 {
		for _, n := range []*DelayedSync{a, b} {
			for _, c := range []string{"up-1", "down-1"} {
				n.Allow(ctx, c, r, now)
				n.Allow(ctx, c, bucket, now)
			}
			var pe *PartialExchangeError
			if err := n.Sync(ctx, now); !errors.As(err, &pe) || len(pe.Failed) != 2 {
				t.Fatalf("round %d: sync error %v, want two clients failed", round, err)
			}
		}
		now = now.Add(100 * time.Millisecond)
	}
	// The healthy shard's view is shared: node a's last sync saw its own 4 counts of up-1
	// and the 3 b had pushed by then.
	if d, _ := a.Allow(ctx, "up-1", r, now); d.Remaining != 1000-8 {
		t.Errorf("up-1 on node a: remaining %d, want %d (7 in its view, and this one)", d.Remaining, 1000-8)
	}
	store.down = false
	for _, n := range []*DelayedSync{a, b} {
		if err := n.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	got := store.local.Take("down-1", r, now) // one more through the store itself
	if got.Remaining != 1000-8-1 {
		t.Errorf("down-1 in the store after the shard came back: remaining %d, want %d (each count once)", got.Remaining, 1000-9)
	}
	got = store.local.Take("up-1", r, now)
	if got.Remaining != 1000-9-1 {
		t.Errorf("up-1 in the store: remaining %d, want %d (each count once)", got.Remaining, 1000-10)
	}
}
