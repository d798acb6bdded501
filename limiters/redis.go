package limiters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore keeps the shared counters in Redis.
//
// Layout: one small hash per client and rule, key "rl:{<client>}:<rule>". The client is
// the hash tag, so a Redis Cluster keeps a client's keys on one slot; client and rule are
// escaped so no client ID can name another client's key. A window hash maps slice index →
// count; a bucket hash holds tokens and the time they were counted. Every key expires after
// the window it covers, so memory is bounded by the clients active in the last window.
// Decisions and exchanges run as Lua scripts, so each is atomic and one round trip.
type RedisStore struct {
	rdb redis.UniversalClient
}

// NewRedisStore returns a store over an open go-redis client.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

// Key returns the Redis key holding client's counters under rule.
func Key(client string, rule *Rule) string {
	return "rl:{" + escapeKey(client) + "}:" + escapeKey(rule.Name) + ":" + string(rule.Algorithm)
}

// escapeKey percent-escapes the characters that delimit keys and hash tags, so the mapping
// from client ID to key is one-to-one.
var keyEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D", ":", "%3A")

func escapeKey(s string) string { return keyEscaper.Replace(s) }

// luaMark reads and advances a node's push mark (PushMark) in a client's hash: field is the
// node's field ("n:<node>", empty for no mark), holding "<inc>:<total>". It returns how many of
// the push's first counts the hash holds already.
const luaMark = `
local function mark(key, field, inc, base, total)
  if field == '' or total <= base then return 0 end
  local have = 0
  local v = redis.call('HGET', key, field)
  if v then
    local i, c = string.match(v, '^(%d+):(%d+)$')
    if i == inc then have = tonumber(c) end
  end
  local skip = math.min(math.max(have - base, 0), total - base)
  redis.call('HSET', key, field, inc .. ':' .. string.format('%d', math.max(have, total)))
  return skip
end
`

// luaWindow counts one window hash: it adds the (slice, count) pairs of a push, oldest
// first, less the first skip counts (those the hash holds already), drops slices that left
// the window and, with a limit, adds 1 to the current slice when the window holds fewer than
// limit. It returns allowed (0/1) and the flat list slice, count, ... of the slices in the
// window. Fields that are not slice indices are the nodes' push marks.
const luaWindow = `
local function window(key, d, n, limit, ttl, pairs, skip)
  local first = d - n + 1
  for i = 1, #pairs, 2 do
    local c = tonumber(pairs[i+1])
    local s = math.min(skip, c)
    c, skip = c - s, skip - s
    if c > 0 and tonumber(pairs[i]) >= first then redis.call('HINCRBY', key, pairs[i], c) end
  end
  local kv = redis.call('HGETALL', key)
  local total = 0
  local out = {}
  for i = 1, #kv, 2 do
    local idx = tonumber(kv[i])
    if idx == nil then
    elseif idx < first then redis.call('HDEL', key, kv[i])
    else total = total + tonumber(kv[i+1]); out[#out+1] = idx; out[#out+1] = tonumber(kv[i+1]) end
  end
  local allowed = 0
  if limit > 0 and total < limit then
    allowed = 1
    local found = false
    for i = 1, #out, 2 do
      if out[i] == d then out[i+1] = out[i+1] + 1; found = true end
    end
    if not found then out[#out+1] = d; out[#out+1] = 1 end
    redis.call('HINCRBY', key, d, 1)
  end
  if allowed == 1 or #pairs > 0 then redis.call('PEXPIRE', key, ttl) end
  return allowed, out
end
`

// luaBucket runs one token bucket hash: refill to now (µs) at rate per second up to burst,
// subtract spent and, with take, one more token if at least one is there. Tokens are kept
// and returned as strings, since Redis turns Lua numbers into integers.
const luaBucket = `
local function bucket(key, now, rate, burst, take, spent, ttl)
  local st = redis.call('HMGET', key, 't', 'a')
  local tokens = tonumber(st[1])
  local at = tonumber(st[2])
  if tokens == nil then tokens = burst; at = now end
  if now > at then
    tokens = math.min(burst, tokens + ((now - at) / 1e6) * rate)
    at = now
  end
  tokens = tokens - spent
  local allowed = 0
  if take and tokens >= 1 then
    allowed = 1
    tokens = tokens - 1
  end
  local ts = string.format('%.17g', tokens)
  redis.call('HSET', key, 't', ts, 'a', string.format('%d', at))
  redis.call('PEXPIRE', key, ttl)
  return allowed, ts, string.format('%d', at)
end
`

// windowScript decides one request on a window. ARGV: current slice, slices, limit, TTL ms.
// Returns {allowed, slice, count, ...}.
var windowScript = redis.NewScript(luaWindow + `
local allowed, out = window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], {}, 0)
table.insert(out, 1, allowed)
return out
`)

// bucketScript decides one request on a token bucket. ARGV: now µs, rate, burst, TTL ms.
// Returns {allowed, tokens, at µs}.
var bucketScript = redis.NewScript(luaBucket + `
local allowed, ts, at = bucket(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), true, 0, ARGV[4])
return {allowed, ts, at}
`)

// exchangeScript is one node's whole delayed-sync exchange in one command, so a sync costs
// the store one command however many clients it carries. ARGV[1] is now in µs, then per key
// the mark (field, inc, base, total: PushMark, an empty field for none), then either 'w', slice,
// slices, TTL ms, pair count, pairs... or 'b', rate, burst, spent, TTL ms.
// Returns per key {slice, count, ...} or {tokens, at µs}.
var exchangeScript = redis.NewScript(luaMark + luaWindow + luaBucket + luaExchangeOne + `
local now = tonumber(ARGV[1])
local a = 2
local res = {}
for k = 1, #KEYS do
  res[k], a = exchange(KEYS[k], now, a)
end
return res
`)

// luaExchangeOne is one key's part of an exchange: exchange(key, now, a) reads the key's
// arguments from ARGV[a] on (exchangeScript's layout) and returns its reply and the index
// of the next key's arguments.
const luaExchangeOne = `
local function exchange(key, now, a)
  local skip = mark(key, ARGV[a], ARGV[a+1], tonumber(ARGV[a+2]), tonumber(ARGV[a+3]))
  a = a + 4
  if ARGV[a] == 'w' then
    local np = tonumber(ARGV[a+4])
    local pairs = {}
    for i = 1, 2 * np do pairs[i] = ARGV[a+4+i] end
    local _, out = window(key, tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), 0, ARGV[a+3], pairs, skip)
    return out, a + 5 + 2 * np
  end
  local _, ts, at = bucket(key, now, tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), false, tonumber(ARGV[a+3]) - skip, ARGV[a+4])
  return {ts, at}, a + 5
end
`

// WindowHash reads a window's hash as HGETALL returns it: its slice counts, oldest first,
// without the nodes' push marks ("n:<node>" fields).
func WindowHash(h map[string]string) ([]SliceCount, error) {
	out := make([]SliceCount, 0, len(h))
	for k, v := range h {
		if strings.HasPrefix(k, "n:") {
			continue
		}
		idx, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("window hash field %q is not a slice index: %w", k, err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("window hash slice %d holds %q, not a count: %w", idx, v, err)
		}
		out = append(out, SliceCount{Index: idx, Count: n})
	}
	slices.SortFunc(out, func(a, b SliceCount) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

// ScriptCommands are the commands RedisStore's Lua scripts run inside Redis (the window,
// bucket, mark and exchange scripts, the cluster exchange's first pass, and BoundedSync's
// settle and epoch scripts). INFO
// commandstats counts each beside the EVALSHA that ran it: they are the store's work, not
// round trips, and a harness that counts round trips leaves them out.
var ScriptCommands = []string{"hincrby", "hgetall", "hdel", "pexpire", "hmget", "hset", "hget", "exists", "get", "set",
	"zadd", "zcard", "zrange", "zrangebyscore", "zremrangebyscore"}

// windowTTL keeps a window's hash until its newest slice has left the window.
func windowTTL(r *Rule) int64 { return (r.Window + r.sliceLen()).Milliseconds() + 1 }

// bucketTTL keeps a bucket until it would be full again anyway.
func bucketTTL(r *Rule) int64 {
	return int64(float64(r.Burst)/r.refillPerSecond()*1000) + 1000
}

// Take implements Store: one atomic script per decision.
func (s *RedisStore) Take(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	key := []string{Key(client, rule)}
	if rule.Algorithm == TokenBucket {
		res, err := bucketScript.Run(ctx, s.rdb, key, now.UnixMicro(), rule.refillPerSecond(), rule.Burst, bucketTTL(rule)).Slice()
		if err != nil {
			return Decision{}, fmt.Errorf("redis token bucket for %q: %w", client, err)
		}
		allowed, tokens, _, err := parseBucket(res)
		if err != nil {
			return Decision{}, err
		}
		return bucketDecision(rule, tokens, allowed, now), nil
	}
	d := rule.sliceIndex(now)
	res, err := windowScript.Run(ctx, s.rdb, key, d, rule.slices(), rule.Limit, windowTTL(rule)).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("redis window for %q: %w", client, err)
	}
	var buf [maxStackSlices]int64
	counts := windowBuf(&buf, rule.slices())
	first := d - int64(len(counts)) + 1
	for i := 1; i+1 < len(res); i += 2 {
		if res[i] >= first && res[i] <= d {
			counts[res[i]-first] += res[i+1]
		}
	}
	return windowDecision(rule, counts, d, now, res[0] == 1), nil
}

// Exchange implements Store: every entry in one script, so a sync is one command and one
// round trip however many clients it carries. On a Redis Cluster the entries go in one
// command per shard instead (exchangeCluster), since one command cannot span slots there.
func (s *RedisStore) Exchange(ctx context.Context, now time.Time, entries []SyncEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return exchangeCluster(ctx, cc, now, entries)
	}
	keys := make([]string, len(entries))
	args := make([]any, 1, 1+6*len(entries))
	args[0] = now.UnixMicro()
	for i := range entries {
		e := &entries[i]
		keys[i] = Key(e.Client, e.Rule)
		args = appendExchangeArgs(args, e, now)
	}
	// Run falls back from EVALSHA to EVAL when a restarted store lost its script cache.
	res, err := exchangeScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return fmt.Errorf("redis exchange of %d clients: %w", len(entries), err)
	}
	if len(res) != len(entries) {
		return fmt.Errorf("redis exchange: %d replies for %d clients", len(res), len(entries))
	}
	for i := range entries {
		r, _ := res[i].([]any)
		if err := fillEntry(&entries[i], now, r); err != nil {
			return err
		}
	}
	return nil
}

// appendExchangeArgs appends one entry's part of the exchange script's ARGV.
func appendExchangeArgs(args []any, e *SyncEntry, now time.Time) []any {
	field := ""
	if e.Mark.Node != "" {
		field = "n:" + e.Mark.Node
	}
	args = append(args, field, e.Mark.Inc, e.Mark.Base, e.Mark.Total)
	if e.Rule.Algorithm == TokenBucket {
		return append(args, "b", e.Rule.refillPerSecond(), e.Rule.Burst, e.Spent, bucketTTL(e.Rule))
	}
	args = append(args, "w", e.Rule.sliceIndex(now), e.Rule.slices(), windowTTL(e.Rule), len(e.Push))
	for _, c := range e.Push {
		args = append(args, c.Index, c.Count)
	}
	return args
}

// fillEntry sets an entry's shared view from its part of the exchange script's reply.
func fillEntry(e *SyncEntry, now time.Time, r []any) error {
	if e.Rule.Algorithm == TokenBucket {
		_, tokens, atMicro, err := parseBucket(append([]any{int64(0)}, r...))
		if err != nil {
			return err
		}
		e.Tokens, e.At = tokens, atMicro*int64(time.Microsecond)
		return nil
	}
	e.View = e.View[:0]
	first := e.Rule.sliceIndex(now) - int64(e.Rule.slices()) + 1
	for j := 0; j+1 < len(r); j += 2 {
		idx, _ := r[j].(int64)
		c, _ := r[j+1].(int64)
		if idx >= first && c != 0 {
			e.View = append(e.View, SliceCount{Index: idx, Count: c})
		}
	}
	return nil
}

func parseBucket(res []any) (allowed bool, tokens float64, atMicro int64, err error) {
	if len(res) != 3 {
		return false, 0, 0, errors.New("redis token bucket: unexpected reply")
	}
	a, _ := res[0].(int64)
	ts, _ := res[1].(string)
	as, _ := res[2].(string)
	tokens, err = strconv.ParseFloat(ts, 64)
	if err != nil {
		return false, 0, 0, fmt.Errorf("redis token bucket: tokens %q: %w", ts, err)
	}
	atMicro, err = strconv.ParseInt(as, 10, 64)
	if err != nil {
		return false, 0, 0, fmt.Errorf("redis token bucket: time %q: %w", as, err)
	}
	return a == 1, tokens, atMicro, nil
}
