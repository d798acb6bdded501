package replica

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/edgeproof/rlharness/limiters"
)

// The bounded design's guard against a real redis-server in each state a store can be in:
// a decision waits up to the store wait, a sync the store timeout; only refused or reset
// connections and an open breaker say the store is down (limiters.ErrStoreDown); sync
// timeouts never open the breaker, and decisions that time out open it only when none
// succeeds.
func TestStoreGuardKnowsDownFromSlow(t *testing.T) {
	const timeout, wait = 50 * time.Millisecond, 250 * time.Millisecond
	type call struct {
		op       string
		wantErr  bool // the call fails
		wantDown bool // its error wraps limiters.ErrStoreDown
	}
	tests := []struct {
		name  string
		store func(t *testing.T, srv *redistest.Server) // puts the store in its state
		calls []call
	}{
		{"up: decisions and syncs answered", func(*testing.T, *redistest.Server) {},
			[]call{{opTake, false, false}, {opExchange, false, false}}},
		{"slow, 260 ms: syncs time out and the breaker stays shut; a decision waits it out",
			func(t *testing.T, srv *redistest.Server) { pauseClients(t, srv, 260*time.Millisecond) },
			[]call{{opExchange, true, false}, {opExchange, true, false}, {opExchange, true, false}, {opExchange, true, false},
				{opTake, false, false}, {opExchange, false, false}}},
		{"paused past the store wait: decisions time out, not down, until three in a row open the breaker",
			func(t *testing.T, srv *redistest.Server) { pauseClients(t, srv, 2*time.Second) },
			[]call{{opTake, true, false}, {opTake, true, false}, {opTake, true, false}, {opTake, true, true}, {opExchange, true, true}}},
		{"killed: refused connections say down at once",
			func(t *testing.T, srv *redistest.Server) { srv.Kill() },
			[]call{{opTake, true, true}, {opExchange, true, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			cfg := DefaultConfig()
			m := newMetrics(cfg, func() float64 { return 0 }, func() float64 { return 0 }, func() float64 { return 0 })
			g := newStoreGuard(timeout, wait, m, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
			rdb := newRedisClient(srv.Addr, timeout, wait)
			defer rdb.Close()
			ctx := context.Background()
			if err := rdb.Ping(ctx).Err(); err != nil { // one pooled connection, as a replica under load has
				t.Fatal(err)
			}
			tt.store(t, srv)
			for i, c := range tt.calls {
				start := time.Now()
				err := g.bounded(ctx, c.op, func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
				took := time.Since(start)
				limit := timeout
				if c.op == opTake {
					limit = wait
				}
				// "A little": half the limit, and at least the 50 ms a busy 2-core machine
				// takes to schedule the timer's goroutine; a store 260 ms slow still fails it.
				if took > limit+max(limit/2, 50*time.Millisecond) {
					t.Errorf("call %d (%s) took %v, want at most its %v and a little", i, c.op, took, limit)
				}
				if (err != nil) != c.wantErr || errors.Is(err, limiters.ErrStoreDown) != c.wantDown {
					t.Fatalf("call %d (%s): err %v after %v; want failed %v, store down %v", i, c.op, err, took, c.wantErr, c.wantDown)
				}
			}
		})
	}
}

// pauseClients holds every client's commands for d (CLIENT PAUSE), from a connection of its own.
func pauseClients(t *testing.T, srv *redistest.Server, d time.Duration) {
	t.Helper()
	if err := srv.Client().ClientPause(context.Background(), d).Err(); err != nil {
		t.Fatal(err)
	}
}

// storeDown reads only errors that mean the store is gone as down.
func TestStoreDownReadsTheError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)
	tests := []struct {
		err  error
		down bool
	}{
		{refused, true},
		{io.EOF, true},
		{context.DeadlineExceeded, false},
		{errors.New("ERR script error"), false},
	}
	for _, tt := range tests {
		if got := storeDown(tt.err); got != tt.down {
			t.Errorf("storeDown(%v) = %v, want %v", tt.err, got, tt.down)
		}
	}
}
