package limiters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// PartialExchangeError is an exchange that reached only part of the store, as when one
// shard of a Redis Cluster is down: the entries at the Failed indices were not counted and
// their views are not filled; every other entry was counted and has its view.
type PartialExchangeError struct {
	Failed []int
	Of     int // entries in the exchange
	Err    error
}

func (e *PartialExchangeError) Error() string {
	return fmt.Sprintf("%d of %d clients not exchanged: %v", len(e.Failed), e.Of, e.Err)
}

func (e *PartialExchangeError) Unwrap() error { return e.Err }

// clusterExchangeScript is one shard's part of a delayed-sync exchange in one command. A
// Redis Cluster refuses one command over keys of different slots unless the script says it
// may touch them (allow-cross-slot-keys, Redis ≥ 7.0), and then only keys the node serves:
// so the keys travel in ARGV, and a first pass that writes nothing finds the keys this node
// does not serve now (a slot moved, or is being moved and the key is elsewhere). Those are
// skipped, so the script never stops half-way, and their reply is 0: the caller sends them
// again through the cluster client, which follows MOVED and ASK.
//
// ARGV: now µs, key count, then per key the key and exchangeScript's fields for it.
// Returns per key 0 (not served here) or exchangeScript's reply for it.
var clusterExchangeScript = redis.NewScript("#!lua flags=allow-cross-slot-keys\n" + luaMark + luaWindow + luaBucket + luaExchangeOne + `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local at, here = {}, {}
local a = 3
for k = 1, n do
  at[k] = a
  local r = redis.pcall('EXISTS', ARGV[a])
  here[k] = type(r) ~= 'table'
  local w = a + 5 -- the key, its mark, then its algorithm's arguments
  if ARGV[w] == 'w' then a = w + 5 + 2 * tonumber(ARGV[w+4]) else a = w + 5 end
end
local res = {}
for k = 1, n do
  if not here[k] then
    res[k] = 0
  else
    res[k] = exchange(ARGV[at[k]], now, at[k] + 1)
  end
end
return res
`)

// exchangeCluster is Exchange on a Redis Cluster: the entries are grouped by the master
// that serves their slot (a client's keys share one slot: the client is the hash tag), and
// each group goes as one command to its master, the masters in parallel, so a sync costs
// one command per shard. Entries a master no longer serves go again one command each through
// the cluster client, which follows MOVED and ASK, and the slot map is reloaded for the next
// sync. A shard that fails fails only its own entries: the error is a PartialExchangeError
// naming them, and every other entry is counted and filled.
func exchangeCluster(ctx context.Context, cc *redis.ClusterClient, now time.Time, entries []SyncEntry) error {
	keys := make([]string, len(entries))
	groups := map[*redis.Client][]int{}
	var failed []int
	var errs []error
	for i := range entries {
		keys[i] = Key(entries[i].Client, entries[i].Rule)
		node, err := cc.MasterForKey(ctx, keys[i])
		if err != nil {
			failed = append(failed, i)
			errs = append(errs, fmt.Errorf("no master for %q: %w", entries[i].Client, err))
			continue
		}
		groups[node] = append(groups[node], i)
	}

	type shardReply struct {
		node *redis.Client
		idx  []int
		res  []any
		err  error
	}
	replies := make([]shardReply, 0, len(groups))
	for node, idx := range groups {
		replies = append(replies, shardReply{node: node, idx: idx})
	}
	var wg sync.WaitGroup
	for g := range replies {
		wg.Go(func() {
			r := &replies[g]
			args := make([]any, 2, 2+7*len(r.idx))
			args[0], args[1] = now.UnixMicro(), len(r.idx)
			for _, i := range r.idx {
				args = append(args, keys[i])
				args = appendExchangeArgs(args, &entries[i], now)
			}
			r.res, r.err = clusterExchangeScript.Run(ctx, r.node, nil, args...).Slice()
			if r.err == nil && len(r.res) != len(r.idx) {
				r.err = fmt.Errorf("%d replies for %d clients", len(r.res), len(r.idx))
			}
		})
	}
	wg.Wait()

	var moved []int
	for _, r := range replies {
		if r.err != nil {
			failed = append(failed, r.idx...)
			errs = append(errs, fmt.Errorf("shard %s (%d clients): %w", r.node.Options().Addr, len(r.idx), r.err))
			continue
		}
		for j, i := range r.idx {
			out, ok := r.res[j].([]any)
			if !ok {
				moved = append(moved, i)
				continue
			}
			if err := fillEntry(&entries[i], now, out); err != nil {
				failed = append(failed, i)
				errs = append(errs, err)
			}
		}
	}
	if len(moved) > 0 || len(failed) > 0 {
		cc.ReloadState(ctx) // the slot map changed, or a master is gone: ask again
	}
	if len(moved) > 0 {
		f, err := exchangeRedirected(ctx, cc, now, entries, keys, moved)
		failed = append(failed, f...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(failed) > 0 {
		return &PartialExchangeError{Failed: failed, Of: len(entries), Err: errors.Join(errs...)}
	}
	return nil
}

// exchangeRedirected sends the entries at idx one command each, in one pipeline through the
// cluster client: each goes to the node its slot names now, following MOVED and ASK. It
// returns the indices that failed.
func exchangeRedirected(ctx context.Context, cc *redis.ClusterClient, now time.Time, entries []SyncEntry, keys []string, idx []int) ([]int, error) {
	pipe := cc.Pipeline()
	cmds := make([]*redis.Cmd, len(idx))
	for j, i := range idx {
		args := appendExchangeArgs([]any{now.UnixMicro()}, &entries[i], now)
		cmds[j] = exchangeScript.Eval(ctx, pipe, []string{keys[i]}, args...)
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	var failed []int
	var msgs []string
	for j, i := range idx {
		res, err := cmds[j].Slice()
		if err == nil && len(res) != 1 {
			err = fmt.Errorf("%d replies for 1 client", len(res))
		}
		if err == nil {
			out, _ := res[0].([]any)
			err = fillEntry(&entries[i], now, out)
		}
		if err != nil {
			failed = append(failed, i)
			if len(msgs) < 3 {
				msgs = append(msgs, fmt.Sprintf("%q: %v", entries[i].Client, err))
			}
		}
	}
	if len(failed) > 0 {
		return failed, fmt.Errorf("%d of %d redirected clients failed: %s", len(failed), len(idx), strings.Join(msgs, "; "))
	}
	return nil, nil
}
