package replica

import (
	"context"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/edgeproof/rlharness/limiters"
)

// The ulule mode decides with ulule/limiter's middleware and Redis store on a real
// redis-server: the limit, then 429, one script call a decision and its key under the mode's
// prefix; with the store killed it fails closed (500 for every decision, no fallback) and
// with the store paused too, once the store timeout passes; restarted, it decides again.
func TestPeerUluleDecidesInTheStoreAndFailsClosed(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	rules := mustRules(t, "default: {limit: 3, window: 60s, algorithm: fixed_window}\n")
	r, ts := startReplica(t, Config{Mode: limiters.ModePeerUlule, Redis: srv.Addr, StoreTimeout: 200 * time.Millisecond}, rules)
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	want := []int{200, 200, 200, 429, 429}
	for i, w := range want {
		a := ask(t, ts.URL, "ulule-1")
		if a.status != w {
			t.Errorf("request %d: %d, want %d (%s)", i+1, a.status, w, a.body)
		}
		if got, wantRemaining := a.header.Get("X-RateLimit-Remaining"), []string{"2", "1", "0", "0", "0"}[i]; got != wantRemaining {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %q", i+1, got, wantRemaining)
		}
	}
	if v, err := rdb.Get(ctx, "ulule:default:ulule-1").Int(); err != nil || v != 5 {
		t.Errorf("ulule's key for ulule-1: %d (%v), want 5 hits counted", v, err)
	}
	if calls := scriptCalls(t, rdb); calls != 5 {
		t.Errorf("%d script calls for 5 decisions, want 5 (the scripts are loaded with SCRIPT LOAD)", calls)
	}
	if r.Degraded() {
		t.Error("the replica says it is degraded with its store up")
	}

	srv.Kill()
	for i := range 5 {
		if a := ask(t, ts.URL, "ulule-2"); a.status != 500 {
			t.Errorf("store down, request %d: %d, want 500 (fails closed): %s", i+1, a.status, a.body)
		}
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for ask(t, ts.URL, "ulule-3").status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("store restarted: no 200 within 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.Pause()
	start := time.Now()
	a := ask(t, ts.URL, "ulule-3")
	srv.Resume()
	if a.status != 500 || time.Since(start) > 2*time.Second {
		t.Errorf("store paused: %d after %v, want 500 within the store timeout", a.status, time.Since(start).Round(time.Millisecond))
	}
}

// A replica started before its store answers 500 until the store comes up, then decides.
func TestPeerUluleStartsBeforeItsStore(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	rules := mustRules(t, "default: {limit: 2, window: 60s, algorithm: fixed_window}\n")
	_, ts := startReplica(t, Config{Mode: limiters.ModePeerUlule, Redis: srv.Addr, StoreTimeout: 200 * time.Millisecond}, rules)
	if a := ask(t, ts.URL, "early"); a.status != 500 {
		t.Errorf("store not up yet: %d, want 500", a.status)
	}
	srv.Restart()
	var got []int
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 3 && time.Now().Before(deadline) {
		if s := ask(t, ts.URL, "early").status; s != 500 || len(got) > 0 {
			got = append(got, s)
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if len(got) != 3 || got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Errorf("store up: %v, want 200, 200, 429", got)
	}
}
