package limiters

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// BoundedKey is the Redis hash of client's store state under rule for BoundedSync, beside
// its log (BoundedLogKey) and the document's layout (Key): "_clk" the client's store clock
// (the newest decision time, Unix µs), "_seq" the log's member counter, "n:<node>" push marks
// ("<inc>:<total>:<call>", PushMark).
func BoundedKey(client string, rule *Rule) string { return Key(client, rule) + ":b" }

// BoundedLogKey is the Redis sorted set of client's admissions under rule for BoundedSync:
// one member per admission, scored by its decision time (Unix µs), those of the last window
// only. It shares BoundedKey's hash tag, so on a Redis Cluster one script reaches both.
func BoundedLogKey(client string, rule *Rule) string { return Key(client, rule) + ":log" }

// epochKey holds the store's epoch: set by the first node that finds it missing, so it
// changes when the store comes back empty.
const epochKey = "rl:epoch"

// luaSettle is one client's part of a Settle: settle(key, log, a) reads its arguments from
// ARGV[a] on (mark field, inc, base, total, call, repush, window, limit, decisions, push
// count, then count and time per push, then the decisions' arrival times) and returns {-1}
// when the store lost the node's earlier pushes (nothing applied), else {admitted, count,
// clock, full until, reset at, the clock before the decisions, then 1 or 0 per decision}
// (SettleEntry), and the index of the next key's arguments.
//
// Each decision is taken at the later of its arrival and the client's store clock, which it
// then becomes, and admits while the log holds fewer than the limit after the window-long
// interval before it. Its work does not grow with the client's history: the log is trimmed to
// the window at each call (each admission leaves once), the admissions that leave during a
// batch are read once, and a batch's admissions are added in one command.
const luaSettle = `
local function fmt(j) return string.format('%d', j) end
local function settle(key, logkey, a)
  local field, inc = ARGV[a], ARGV[a+1]
  local base, total, call = tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), tonumber(ARGV[a+4])
  local repush = ARGV[a+5] == '1'
  local win, limit = tonumber(ARGV[a+6]), tonumber(ARGV[a+7])
  local nd, np = tonumber(ARGV[a+8]), tonumber(ARGV[a+9])
  local p = a + 10
  local q = p + 2 * np
  local nexta = q + nd
  local skip, mark, stale, adopt = 0, nil, false, false
  if field ~= '' and (total > base or nd > 0) then
    local have = nil
    local v = redis.call('HGET', key, field)
    if v then
      local i, c, n = string.match(v, '^(%d+):(%d+):(%d+)$')
      if i == inc then
        have = tonumber(c)
        -- A later call of this node has landed before this one: the node gave up on this
        -- call at its timeout and decided its requests alone, so the store admits none.
        stale = tonumber(n) > call
        call = math.max(call, tonumber(n))
      elseif repush then
        -- A re-push, and this node's mark under another incarnation was written since the
        -- store forgot (or it never forgot): the store holds that many of the node's
        -- counts already; the re-push adds the rest, and its incarnation is the mark's.
        have, adopt = tonumber(c), true
      end
    end
    if have == nil then
      if base > 0 then return {-1}, nexta end
      have = 0
    end
    skip = math.min(math.max(have - base, 0), total - base)
    mark = math.max(have, total)
    if adopt then mark = total end
  end
  local hm = redis.call('HMGET', key, '_clk', '_seq')
  local clock, seq = tonumber(hm[1]) or 0, tonumber(hm[2]) or 0
  redis.call('ZREMRANGEBYSCORE', logkey, '-inf', fmt(clock - win))
  local zargs = {}
  local function add(t, c)
    for _ = 1, c do
      seq = seq + 1
      zargs[#zargs+1] = fmt(t)
      zargs[#zargs+1] = fmt(seq)
    end
  end
  local function flush()
    for i = 1, #zargs, 1000 do
      redis.call('ZADD', logkey, unpack(zargs, i, math.min(i + 999, #zargs)))
    end
    zargs = {}
  end
  for i = 0, np - 1 do
    local c, n = tonumber(ARGV[p+2*i]), tonumber(ARGV[p+2*i+1])
    local s = math.min(skip, c)
    c, skip = c - s, skip - s
    if c > 0 and n > clock - win then add(n, c) end -- else out of every count from now on
  end
  flush()
  local count = redis.call('ZCARD', logkey)
  local clock0, admitted, flags = clock, 0, {}
  if nd > 0 then
    local last = clock
    for i = 0, nd - 1 do last = math.max(last, tonumber(ARGV[q+i])) end
    -- What leaves the count during the batch: read once, passed once.
    local leaving = {}
    if last > clock then
      leaving = redis.call('ZRANGEBYSCORE', logkey, '-inf', fmt(last - win), 'WITHSCORES')
    end
    local li, ai, adm = 2, 1, {}
    for i = 0, nd - 1 do
      clock = math.max(clock, tonumber(ARGV[q+i]))
      local edge = clock - win
      while li <= #leaving and tonumber(leaving[li]) <= edge do count, li = count - 1, li + 2 end
      while ai <= #adm and adm[ai] <= edge do count, ai = count - 1, ai + 1 end
      if not stale and count < limit then
        adm[#adm+1] = clock
        count, admitted, flags[i+1] = count + 1, admitted + 1, 1
      else
        flags[i+1] = 0
      end
    end
    for _, t in ipairs(adm) do add(t, 1) end
    flush()
    redis.call('ZREMRANGEBYSCORE', logkey, '-inf', fmt(clock - win))
  end
  if mark ~= nil then redis.call('HSET', key, field, inc .. ':' .. fmt(mark + admitted) .. ':' .. fmt(call)) end
  redis.call('HSET', key, '_clk', fmt(clock), '_seq', fmt(seq))
  local ttl = math.floor(win / 1000) + 1000
  redis.call('PEXPIRE', key, ttl)
  redis.call('PEXPIRE', logkey, ttl)
  count = redis.call('ZCARD', logkey)
  local resetAt, full = 0, 0
  if count > 0 then
    resetAt = tonumber(redis.call('ZRANGE', logkey, 0, 0, 'WITHSCORES')[2]) + win
  end
  if count >= limit then
    full = tonumber(redis.call('ZRANGE', logkey, count - limit, count - limit, 'WITHSCORES')[2]) + win
  end
  local out = {admitted, count, clock, full, resetAt, clock0}
  for i = 1, nd do out[6+i] = flags[i] end
  return out, nexta
end
`

// settleScript is a whole Settle in one command: every key's part in turn.
var settleScript = redis.NewScript(luaSettle + `
local a = 1
local res = {}
for k = 1, #KEYS / 2 do
  res[k], a = settle(KEYS[2*k-1], KEYS[2*k], a)
end
return res
`)

// epochScript returns the store's epoch, setting it to ARGV[1] when it is missing.
var epochScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1])
  v = ARGV[1]
end
return v
`)

// Settle implements BoundedStore: every entry in one script, one round trip. On a Redis
// Cluster, where one command cannot span slots, each entry is its own script, all of them in
// one pipeline (go-redis sends each node its part and follows MOVED and ASK); the entries
// that failed are named in a PartialExchangeError, the others are settled.
func (s *RedisStore) Settle(ctx context.Context, now time.Time, entries []SettleEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return s.settleCluster(ctx, cc, now, entries)
	}
	keys := make([]string, 0, 2*len(entries))
	args := make([]any, 0, 16*len(entries))
	for i := range entries {
		keys = append(keys, BoundedKey(entries[i].Client, entries[i].Rule), BoundedLogKey(entries[i].Client, entries[i].Rule))
		args = appendSettleArgs(args, &entries[i], now)
	}
	res, err := settleScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return fmt.Errorf("redis settle of %d clients: %w", len(entries), err)
	}
	if len(res) != len(entries) {
		return fmt.Errorf("redis settle: %d replies for %d clients", len(res), len(entries))
	}
	for i := range entries {
		if err := fillSettle(&entries[i], res[i]); err != nil {
			return err
		}
	}
	return nil
}

// settleCluster is Settle on a Redis Cluster: one script per entry, in one pipeline; a
// script a node has not cached yet (NOSCRIPT) is sent again whole.
func (s *RedisStore) settleCluster(ctx context.Context, cc *redis.ClusterClient, now time.Time, entries []SettleEntry) error {
	keys := make([][]string, len(entries))
	args := make([][]any, len(entries))
	for i := range entries {
		keys[i] = []string{BoundedKey(entries[i].Client, entries[i].Rule), BoundedLogKey(entries[i].Client, entries[i].Rule)}
		args[i] = appendSettleArgs(make([]any, 0, 16), &entries[i], now)
	}
	run := func(idx []int, eval bool) []*redis.Cmd {
		pipe := cc.Pipeline()
		cmds := make([]*redis.Cmd, len(idx))
		for k, i := range idx {
			if eval {
				cmds[k] = settleScript.Eval(ctx, pipe, keys[i], args[i]...)
			} else {
				cmds[k] = settleScript.EvalSha(ctx, pipe, keys[i], args[i]...)
			}
		}
		_, _ = pipe.Exec(ctx) // each command's own error is read below
		return cmds
	}
	all := make([]int, len(entries))
	for i := range all {
		all[i] = i
	}
	cmds := run(all, false)
	var again []int
	for k, c := range cmds {
		if err := c.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			again = append(again, all[k])
		}
	}
	if len(again) > 0 {
		for k, c := range run(again, true) {
			cmds[again[k]] = c
		}
	}
	var failed []int
	var errs []error
	for i, c := range cmds {
		res, err := c.Slice()
		if err == nil && len(res) != 1 {
			err = fmt.Errorf("%d replies for 1 client", len(res))
		}
		if err == nil {
			err = fillSettle(&entries[i], res[0])
		}
		if err != nil {
			failed = append(failed, i)
			if len(errs) < 3 {
				errs = append(errs, fmt.Errorf("%q: %w", entries[i].Client, err))
			}
		}
	}
	if len(failed) > 0 {
		cc.ReloadState(ctx) // a master is gone, or the slot map changed: ask again next time
		return &PartialExchangeError{Failed: failed, Of: len(entries), Err: errors.Join(errs...)}
	}
	return nil
}

// appendSettleArgs appends one entry's arguments to the settle script.
func appendSettleArgs(args []any, e *SettleEntry, _ time.Time) []any {
	field := ""
	if e.Mark.Node != "" {
		field = "n:" + e.Mark.Node
	}
	b := e.Bounds
	repush := 0
	if e.Mark.Repush {
		repush = 1
	}
	args = append(args, field, e.Mark.Inc, e.Mark.Base, e.Mark.Total, e.Mark.Call, repush, b.Window, b.Limit,
		len(e.Decide), len(e.Push))
	for _, c := range e.Push {
		args = append(args, c.Count, c.Newest)
	}
	for _, t := range e.Decide {
		args = append(args, t)
	}
	return args
}

// fillSettle reads one entry's reply: {-1}, or {admitted, count, clock, full until, reset
// at, the clock before the decisions, then 1 or 0 per decision}.
func fillSettle(e *SettleEntry, reply any) error {
	r, _ := reply.([]any)
	e.Allowed, e.DecidedAt, e.Reset = e.Allowed[:0], e.DecidedAt[:0], false
	e.Count, e.Clock, e.FullUntil, e.ResetAt = 0, 0, 0, 0
	if len(r) == 0 {
		return fmt.Errorf("redis settle: empty reply for %q", e.Client)
	}
	if first, _ := r[0].(int64); first == -1 {
		e.Reset = true
		return nil
	}
	if len(r) != 6+len(e.Decide) {
		return fmt.Errorf("redis settle: %d numbers for %q, want %d", len(r), e.Client, 6+len(e.Decide))
	}
	v := make([]int64, len(r))
	for i := range v {
		n, ok := r[i].(int64)
		if !ok {
			return fmt.Errorf("redis settle: reply %d for %q is %T, not a number", i, e.Client, r[i])
		}
		v[i] = n
	}
	e.Count, e.Clock, e.FullUntil, e.ResetAt = v[1], v[2], v[3], v[4]
	clock := v[5] // each decision at the later of its arrival and the one before
	for i, f := range v[6:] {
		clock = max(clock, e.Decide[i])
		e.Allowed = append(e.Allowed, f == 1)
		e.DecidedAt = append(e.DecidedAt, clock)
	}
	return nil
}

// Epoch implements BoundedStore.
func (s *RedisStore) Epoch(ctx context.Context) (string, error) {
	v, err := epochScript.Run(ctx, s.rdb, []string{epochKey}, rand.Text()).Text()
	if err != nil {
		return "", fmt.Errorf("redis epoch: %w", err)
	}
	return v, nil
}

// BoundedLog reads client's admissions under rule as the bounded design's store holds them
// (BoundedLogKey): a count per decision time, oldest first.
func BoundedLog(ctx context.Context, rdb redis.Cmdable, client string, rule *Rule) ([]SubCount, error) {
	zs, err := rdb.ZRangeWithScores(ctx, BoundedLogKey(client, rule), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", BoundedLogKey(client, rule), err)
	}
	var out []SubCount
	for _, z := range zs {
		t := int64(z.Score)
		if k := len(out); k > 0 && out[k-1].Index == t {
			out[k-1].Count++
			continue
		}
		out = append(out, SubCount{Index: t, Count: 1, Newest: t})
	}
	return out, nil
}
