package limiters

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// BoundedKey is the Redis key of client's counts under rule for BoundedSync: beside the
// document's layout (Key), since its hash holds sub-slices with their newest arrival.
// Fields: "c<sub-slice>" count, "t<sub-slice>" newest arrival (µs), "_tot" the total of the
// sub-slices held, "_lo" the oldest sub-slice still counted, "n:<node>" push marks
// ("<inc>:<total>:<call>", PushMark).
func BoundedKey(client string, rule *Rule) string { return Key(client, rule) + ":b" }

// epochKey holds the store's epoch: set by the first node that finds it missing, so it
// changes when the store comes back empty.
const epochKey = "rl:epoch"

// luaSettle is one client's part of a Settle: settle(key, a) reads its arguments from
// ARGV[a] on (mark field, inc, base, total, call, repush, sub, window, margin, limit, cap, decisions,
// at, push count, then sub-slice, count, newest per push, then the decisions' arrival
// times) and returns {-1} when the store lost the node's earlier pushes (nothing applied),
// else {admitted, lenient, strict, full until, reset at, then 1 or 0 per decision}
// (SettleEntry), and the index of the next key's arguments.
//
// Its work does not grow with the client's traffic: the hash keeps the total of what it
// holds and a pointer to the oldest sub-slice still counted; each call moves the pointer
// over what has left the window (deleting it), and each sub-slice is passed once in the
// key's life. Only a full client's call walks on from the pointer, to the sub-slice whose
// leaving puts it under its bounds again: a few, for a client at or over its limit.
const luaSettle = `
local function fmt(j) return string.format('%d', j) end
local function settle(key, a)
  local field, inc = ARGV[a], ARGV[a+1]
  local base, total, call = tonumber(ARGV[a+2]), tonumber(ARGV[a+3]), tonumber(ARGV[a+4])
  local repush = ARGV[a+5] == '1'
  local sub, win, margin = tonumber(ARGV[a+6]), tonumber(ARGV[a+7]), tonumber(ARGV[a+8])
  local limit, cap = tonumber(ARGV[a+9]), tonumber(ARGV[a+10])
  local nd, at = tonumber(ARGV[a+11]), tonumber(ARGV[a+12])
  local np = tonumber(ARGV[a+13])
  local p = a + 14
  local q = p + 3 * np
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
  local reach = 2 * (math.floor(win / sub) + 2)
  local hm = redis.call('HMGET', key, '_lo', '_tot')
  local lo, tot = tonumber(hm[1]), tonumber(hm[2]) or 0
  if lo == nil or tot <= 0 then lo, tot = 0, 0 end
  -- What left both counts by edge goes; the pointer stops at the oldest sub-slice still counted.
  -- held: the sub-slices the hash holds, ascending, read (HKEYS) only when a walk meets
  -- more than a few empty sub-slices in a row, so that a walk costs what the hash holds,
  -- not the time it spans (a window is thousands of sub-slices).
  local held = nil
  local function heldFrom(j)
    if held == nil then
      held = {}
      for _, f in ipairs(redis.call('HKEYS', key)) do
        if string.sub(f, 1, 1) == 'c' then held[#held+1] = tonumber(string.sub(f, 2)) end
      end
      table.sort(held)
    end
    local l, h = 1, #held + 1
    while l < h do
      local m = math.floor((l + h) / 2)
      if held[m] < j then l = m + 1 else h = m end
    end
    return held[l]
  end
  local function hold(j)
    if held == nil then return end
    local l, h = 1, #held + 1
    while l < h do
      local m = math.floor((l + h) / 2)
      if held[m] < j then l = m + 1 else h = m end
    end
    if held[l] ~= j then table.insert(held, l, j) end
  end
  local maxEmpty = 16
  local function advance(edge)
    local j0 = math.floor(edge / sub)
    local steps, empty = 0, 0
    while tot > 0 and steps <= reach do
      local f = redis.call('HMGET', key, 'c' .. fmt(lo), 't' .. fmt(lo))
      local c = tonumber(f[1])
      if c then
        if lo > j0 or tonumber(f[2]) > edge then break end
        tot = tot - c
        redis.call('HDEL', key, 'c' .. fmt(lo), 't' .. fmt(lo))
        empty = 0
        lo = lo + 1
      else
        empty = empty + 1
        lo = lo + 1
        if empty > maxEmpty then
          local nx = heldFrom(lo)
          if nx == nil then tot = 0 else lo = nx end
          empty = 0
        end
      end
      steps = steps + 1
    end
    if tot < 0 then tot = 0 end
  end
  local function counts(edge)
    local j0 = math.floor(edge / sub)
    if tot > 0 and lo == j0 then -- the oldest counted sub-slice straddles the edge: in the strict count only
      return tot - (tonumber(redis.call('HGET', key, 'c' .. fmt(j0))) or 0), tot
    end
    return tot, tot
  end
  local function add(j, c, n)
    local js = fmt(j)
    redis.call('HINCRBY', key, 'c' .. js, c)
    hold(j)
    local old = tonumber(redis.call('HGET', key, 't' .. js)) or 0
    if n > old then redis.call('HSET', key, 't' .. js, fmt(n)) end
    if tot == 0 or j < lo then lo = j end
    tot = tot + c
  end
  local t0 = at
  if nd > 0 then t0 = tonumber(ARGV[q]) end
  local edge = t0 - win + margin
  advance(edge)
  for i = 0, np - 1 do
    local j, c, n = tonumber(ARGV[p+3*i]), tonumber(ARGV[p+3*i+1]), tonumber(ARGV[p+3*i+2])
    local s = math.min(skip, c)
    c, skip = c - s, skip - s
    if c > 0 and j >= math.floor(edge / sub) and n > edge then -- else out of both counts already
      add(j, c, n)
    end
  end
  -- The decisions, in order, a run at a time: while the requests fall in one sub-slice and
  -- the window's edge in one too, without the straddling sub-slice's newest leaving it,
  -- the counts change only by what the run admits, so a burst costs what one request does.
  local admitted, flags = 0, {}
  local i = 0
  while i < nd do
    local ti = tonumber(ARGV[q+i])
    local ei = ti - win + margin
    advance(ei)
    local len, str = counts(ei)
    local d, j0 = math.floor(ti / sub), math.floor(ei / sub)
    local n0 = nil
    if tot > 0 and lo == j0 then n0 = tonumber(redis.call('HGET', key, 't' .. fmt(j0))) end
    local k = i + 1
    while k < nd do
      local tk = tonumber(ARGV[q+k])
      local ek = tk - win + margin
      if math.floor(tk / sub) ~= d or math.floor(ek / sub) ~= j0 or (n0 ~= nil and n0 <= ek) then break end
      k = k + 1
    end
    local a = math.max(0, math.min(k - i, limit - len, cap - str))
    if stale then a = 0 end
    if a > 0 then add(d, a, tonumber(ARGV[q+i+a-1])) end
    for m = i, k - 1 do
      if m < i + a then flags[m+1] = 1 else flags[m+1] = 0 end
    end
    admitted = admitted + a
    i = k
  end
  if mark ~= nil then redis.call('HSET', key, field, inc .. ':' .. fmt(mark + admitted) .. ':' .. fmt(call)) end
  edge = at - win + margin
  advance(edge)
  local len, str = counts(edge)
  redis.call('HSET', key, '_lo', fmt(lo), '_tot', fmt(tot))
  redis.call('PEXPIRE', key, math.floor((win + sub) / 1000) + 1)
  local resetAt = 0
  if tot > 0 then resetAt = (tonumber(redis.call('HGET', key, 't' .. fmt(lo))) or at) + win - margin end
  local full = 0
  if len >= limit or str >= cap then
    local left, tl, tc, j = str, 0, 0, lo
    local steps, empty = 0, 0
    while left > 0 and steps <= reach do
      local f = redis.call('HMGET', key, 'c' .. fmt(j), 't' .. fmt(j))
      local c = tonumber(f[1])
      if c then
        empty = 0
        left = left - c
        if tl == 0 and len >= limit and left < limit then tl = j * sub + win - margin end
        if tc == 0 and str >= cap and left < cap then tc = tonumber(f[2]) + win - margin end
        if (tl ~= 0 or len < limit) and (tc ~= 0 or str < cap) then break end
        j = j + 1
      else
        empty = empty + 1
        j = j + 1
        if empty > maxEmpty then
          local nx = heldFrom(j)
          if nx == nil then break end
          j, empty = nx, 0
        end
      end
      steps = steps + 1
    end
    full = math.max(tl, tc)
  end
  local out = {admitted, len, str, full, resetAt}
  for i = 1, nd do out[5+i] = flags[i] end
  return out, nexta
end
`

// settleScript is a whole Settle in one command: every key's part in turn.
var settleScript = redis.NewScript(luaSettle + `
local a = 1
local res = {}
for k = 1, #KEYS do
  res[k], a = settle(KEYS[k], a)
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
	keys := make([]string, len(entries))
	args := make([]any, 0, 16*len(entries))
	for i := range entries {
		keys[i] = BoundedKey(entries[i].Client, entries[i].Rule)
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
	keys := make([]string, len(entries))
	args := make([][]any, len(entries))
	for i := range entries {
		keys[i] = BoundedKey(entries[i].Client, entries[i].Rule)
		args[i] = appendSettleArgs(make([]any, 0, 16), &entries[i], now)
	}
	run := func(idx []int, eval bool) []*redis.Cmd {
		pipe := cc.Pipeline()
		cmds := make([]*redis.Cmd, len(idx))
		for k, i := range idx {
			if eval {
				cmds[k] = settleScript.Eval(ctx, pipe, keys[i:i+1], args[i]...)
			} else {
				cmds[k] = settleScript.EvalSha(ctx, pipe, keys[i:i+1], args[i]...)
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
func appendSettleArgs(args []any, e *SettleEntry, now time.Time) []any {
	field := ""
	if e.Mark.Node != "" {
		field = "n:" + e.Mark.Node
	}
	at := e.At
	if at == 0 {
		at = now.UnixMicro()
	}
	b := e.Bounds
	repush := 0
	if e.Mark.Repush {
		repush = 1
	}
	args = append(args, field, e.Mark.Inc, e.Mark.Base, e.Mark.Total, e.Mark.Call, repush, b.Sub, b.Window, b.Margin, b.Limit, b.Cap,
		len(e.Decide), at, len(e.Push))
	for _, c := range e.Push {
		args = append(args, c.Index, c.Count, c.Newest)
	}
	for _, t := range e.Decide {
		args = append(args, t)
	}
	return args
}

// fillSettle reads one entry's reply: {-1}, or {admitted, lenient, strict, full until,
// reset at, then 1 or 0 per decision}.
func fillSettle(e *SettleEntry, reply any) error {
	r, _ := reply.([]any)
	e.Allowed, e.Reset = e.Allowed[:0], false
	e.Lenient, e.Strict, e.FullUntil, e.ResetAt = 0, 0, 0, 0
	if len(r) == 0 {
		return fmt.Errorf("redis settle: empty reply for %q", e.Client)
	}
	if first, _ := r[0].(int64); first == -1 {
		e.Reset = true
		return nil
	}
	if len(r) != 5+len(e.Decide) {
		return fmt.Errorf("redis settle: %d numbers for %q, want %d", len(r), e.Client, 5+len(e.Decide))
	}
	v := make([]int64, len(r))
	for i := range v {
		n, ok := r[i].(int64)
		if !ok {
			return fmt.Errorf("redis settle: reply %d for %q is %T, not a number", i, e.Client, r[i])
		}
		v[i] = n
	}
	e.Lenient, e.Strict, e.FullUntil, e.ResetAt = v[1], v[2], v[3], v[4]
	for _, f := range v[5:] {
		e.Allowed = append(e.Allowed, f == 1)
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

// BoundedHash reads a BoundedKey hash as HGETALL returns it: its sub-slices, oldest first,
// without the nodes' push marks.
func BoundedHash(h map[string]string) ([]SubCount, error) {
	by := map[int64]*SubCount{}
	for k, v := range h {
		if strings.HasPrefix(k, "n:") || strings.HasPrefix(k, "_") || len(k) < 2 {
			continue // push marks, the total and the pointer
		}
		idx, err := strconv.ParseInt(k[1:], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bounded hash field %q is not a sub-slice: %w", k, err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bounded hash field %q holds %q, not a number: %w", k, v, err)
		}
		x := by[idx]
		if x == nil {
			x = &SubCount{Index: idx}
			by[idx] = x
		}
		switch k[0] {
		case 'c':
			x.Count = n
		case 't':
			x.Newest = n
		default:
			return nil, fmt.Errorf("bounded hash field %q is neither a count nor a time", k)
		}
	}
	out := make([]SubCount, 0, len(by))
	for _, x := range by {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b SubCount) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}
