package limiters

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// BoundedKey is the Redis key of client's counts under rule for BoundedSync: beside the
// document's layout (Key), since its hash holds sub-slices with their newest arrival.
// Fields: "c<sub-slice>" count, "t<sub-slice>" newest arrival (µs), "n:<node>" push marks.
func BoundedKey(client string, rule *Rule) string { return Key(client, rule) + ":b" }

// epochKey holds the store's epoch: set by the first node that finds it missing, so it
// changes when the store comes back empty.
const epochKey = "rl:epoch"

// luaSettle is one client's part of a Settle: settle(key, a) reads its arguments from
// ARGV[a] on (mark field, inc, base, total, sub, window, margin, limit, cap, decide, at,
// current sub-slice, push count, then sub-slice, count, newest per push) and returns {-1}
// when the store lost the node's earlier pushes (nothing applied), else {allowed, sub-slice,
// count, newest, ...}, and the index of the next key's arguments.
const luaSettle = `
local function settle(key, a)
  local field, inc = ARGV[a], ARGV[a+1]
  local base, total = tonumber(ARGV[a+2]), tonumber(ARGV[a+3])
  local sub, win, margin = tonumber(ARGV[a+4]), tonumber(ARGV[a+5]), tonumber(ARGV[a+6])
  local limit, cap = tonumber(ARGV[a+7]), tonumber(ARGV[a+8])
  local decide, t, d = ARGV[a+9] == '1', tonumber(ARGV[a+10]), tonumber(ARGV[a+11])
  local np = tonumber(ARGV[a+12])
  local p = a + 13
  local nexta = p + 3 * np
  local skip = 0
  if field ~= '' and total > base then
    local have = nil
    local v = redis.call('HGET', key, field)
    if v then
      local i, c = string.match(v, '^(%d+):(%d+)$')
      if i == inc then have = tonumber(c) end
    end
    if have == nil then
      if base > 0 then return {-1}, nexta end
      have = 0
    end
    skip = math.min(math.max(have - base, 0), total - base)
    redis.call('HSET', key, field, inc .. ':' .. string.format('%d', math.max(have, total)))
  end
  local cnt, nw = {}, {}
  local kv = redis.call('HGETALL', key)
  for i = 1, #kv, 2 do
    local pre = string.sub(kv[i], 1, 1)
    if pre == 'c' then cnt[tonumber(string.sub(kv[i], 2))] = tonumber(kv[i+1])
    elseif pre == 't' then nw[tonumber(string.sub(kv[i], 2))] = tonumber(kv[i+1]) end
  end
  local dirty = {}
  for i = 0, np - 1 do
    local j, c, n = tonumber(ARGV[p+3*i]), tonumber(ARGV[p+3*i+1]), tonumber(ARGV[p+3*i+2])
    local s = math.min(skip, c)
    c, skip = c - s, skip - s
    cnt[j] = (cnt[j] or 0) + c
    if n > (nw[j] or 0) then nw[j] = n end
    dirty[j] = true
  end
  local edge = t - win + margin
  local len, str = 0, 0
  local gone = {}
  for j, c in pairs(cnt) do
    local n = nw[j] or 0
    if n <= edge and (j + 1) * sub <= edge then gone[#gone+1] = j
    else
      if j * sub > edge then len = len + c end
      if n > edge then str = str + c end
    end
  end
  for _, j in ipairs(gone) do
    cnt[j], dirty[j] = nil, nil
    redis.call('HDEL', key, 'c' .. string.format('%d', j), 't' .. string.format('%d', j))
  end
  local allowed = 0
  if decide and len < limit and str < cap then
    allowed = 1
    cnt[d] = (cnt[d] or 0) + 1
    if t > (nw[d] or 0) then nw[d] = t end
    dirty[d] = true
  end
  local wrote = false
  for j, _ in pairs(dirty) do
    local js = string.format('%d', j)
    redis.call('HSET', key, 'c' .. js, string.format('%d', cnt[j]), 't' .. js, string.format('%d', nw[j] or 0))
    wrote = true
  end
  if wrote then redis.call('PEXPIRE', key, math.floor((win + sub) / 1000) + 1) end
  local out = {allowed}
  for j, c in pairs(cnt) do
    if c ~= 0 then out[#out+1] = j; out[#out+1] = c; out[#out+1] = nw[j] or 0 end
  end
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

// Settle implements BoundedStore: every entry in one script, one round trip (on a Redis
// Cluster, one script per entry, since one command cannot span slots there).
func (s *RedisStore) Settle(ctx context.Context, now time.Time, entries []SettleEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if _, ok := s.rdb.(*redis.ClusterClient); ok {
		for i := range entries {
			if err := s.settle(ctx, now, entries[i:i+1]); err != nil {
				return err
			}
		}
		return nil
	}
	return s.settle(ctx, now, entries)
}

func (s *RedisStore) settle(ctx context.Context, now time.Time, entries []SettleEntry) error {
	keys := make([]string, len(entries))
	args := make([]any, 0, 16*len(entries))
	for i := range entries {
		e := &entries[i]
		keys[i] = BoundedKey(e.Client, e.Rule)
		field := ""
		if e.Mark.Node != "" {
			field = "n:" + e.Mark.Node
		}
		t := now.UnixMicro()
		if e.Decide {
			t = e.At
		}
		decide := 0
		if e.Decide {
			decide = 1
		}
		b := e.Bounds
		args = append(args, field, e.Mark.Inc, e.Mark.Base, e.Mark.Total, b.Sub, b.Window, b.Margin, b.Limit, b.Cap,
			decide, t, floorDiv(t, b.Sub), len(e.Push))
		for _, c := range e.Push {
			args = append(args, c.Index, c.Count, c.Newest)
		}
	}
	res, err := settleScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return fmt.Errorf("redis settle of %d clients: %w", len(entries), err)
	}
	if len(res) != len(entries) {
		return fmt.Errorf("redis settle: %d replies for %d clients", len(res), len(entries))
	}
	for i := range entries {
		e := &entries[i]
		r, _ := res[i].([]any)
		e.Allowed, e.Reset, e.View = false, false, e.View[:0]
		if len(r) == 0 {
			return fmt.Errorf("redis settle: empty reply for %q", e.Client)
		}
		first, _ := r[0].(int64)
		if first == -1 {
			e.Reset = true
			continue
		}
		e.Allowed = first == 1
		for j := 1; j+2 < len(r); j += 3 {
			idx, _ := r[j].(int64)
			c, _ := r[j+1].(int64)
			nw, _ := r[j+2].(int64)
			e.View = append(e.View, SubCount{Index: idx, Count: c, Newest: nw})
		}
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
		if strings.HasPrefix(k, "n:") || len(k) < 2 {
			continue
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
