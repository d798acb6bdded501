package limiters

import (
	"context"
	"errors"
	"fmt"
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

// windowScript counts a window. ARGV: current slice, slices in window, limit (0 = only add),
// TTL ms, then pairs (slice, count) to add. It drops slices that left the window; with a
// limit it adds 1 to the current slice when the window holds fewer than limit. It returns
// {allowed, slice, count, slice, count, ...} for the slices in the window.
var windowScript = redis.NewScript(`
local d = tonumber(ARGV[1])
local first = d - tonumber(ARGV[2]) + 1
local limit = tonumber(ARGV[3])
for i = 5, #ARGV, 2 do
  if tonumber(ARGV[i]) >= first then redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i+1]) end
end
local kv = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #kv, 2 do
  if tonumber(kv[i]) < first then redis.call('HDEL', KEYS[1], kv[i]) else total = total + tonumber(kv[i+1]) end
end
local allowed = 0
if limit > 0 and total < limit then
  allowed = 1
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
end
if allowed == 1 or #ARGV > 4 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
local out = {allowed}
kv = redis.call('HGETALL', KEYS[1])
for i = 1, #kv, 2 do
  out[#out+1] = tonumber(kv[i]); out[#out+1] = tonumber(kv[i+1])
end
return out
`)

// bucketScript runs a token bucket. ARGV: now (µs), refill per second, burst, take (1 to
// decide a request, 0 to only subtract spent), spent, TTL ms. Tokens are kept and returned
// as strings, since Redis turns Lua numbers into integers. Returns {allowed, tokens, at µs}.
var bucketScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local st = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens = tonumber(st[1])
local at = tonumber(st[2])
if tokens == nil then tokens = burst; at = now end
if now > at then
  tokens = math.min(burst, tokens + ((now - at) / 1e6) * rate)
  at = now
end
tokens = tokens - tonumber(ARGV[5])
local allowed = 0
if ARGV[4] == '1' and tokens >= 1 then
  allowed = 1
  tokens = tokens - 1
end
local ts = string.format('%.17g', tokens)
redis.call('HSET', KEYS[1], 't', ts, 'a', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {allowed, ts, string.format('%d', at)}
`)

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
		res, err := bucketScript.Run(ctx, s.rdb, key, now.UnixMicro(), rule.refillPerSecond(), rule.Burst, "1", 0, bucketTTL(rule)).Slice()
		if err != nil {
			return Decision{}, fmt.Errorf("redis token bucket for %q: %w", client, err)
		}
		allowed, tokens, _, err := parseBucket(res)
		if err != nil {
			return Decision{}, err
		}
		return bucketDecision(rule, tokens, allowed), nil
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

// Exchange implements Store: every entry's script in one pipeline, one round trip.
func (s *RedisStore) Exchange(ctx context.Context, now time.Time, entries []SyncEntry) error {
	if len(entries) == 0 {
		return nil
	}
	cmds, err := s.pipeExchange(ctx, now, entries, false)
	if err != nil && isNoScript(err) {
		// The store restarted empty and lost its script cache: send the scripts in full.
		cmds, err = s.pipeExchange(ctx, now, entries, true)
	}
	if err != nil {
		return fmt.Errorf("redis exchange of %d clients: %w", len(entries), err)
	}
	for i := range entries {
		e := &entries[i]
		if e.Rule.Algorithm == TokenBucket {
			res, err := cmds[i].Slice()
			if err != nil {
				return fmt.Errorf("redis exchange for %q: %w", e.Client, err)
			}
			_, tokens, atMicro, err := parseBucket(res)
			if err != nil {
				return err
			}
			e.Tokens, e.At = tokens, atMicro*int64(time.Microsecond)
			continue
		}
		res, err := cmds[i].Int64Slice()
		if err != nil {
			return fmt.Errorf("redis exchange for %q: %w", e.Client, err)
		}
		e.View = e.View[:0]
		first := e.Rule.sliceIndex(now) - int64(e.Rule.slices()) + 1
		for j := 1; j+1 < len(res); j += 2 {
			if res[j] >= first && res[j+1] != 0 {
				e.View = append(e.View, SliceCount{Index: res[j], Count: res[j+1]})
			}
		}
	}
	return nil
}

func (s *RedisStore) pipeExchange(ctx context.Context, now time.Time, entries []SyncEntry, full bool) ([]*redis.Cmd, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(entries))
	for i := range entries {
		e := &entries[i]
		key := []string{Key(e.Client, e.Rule)}
		var script *redis.Script
		var args []any
		if e.Rule.Algorithm == TokenBucket {
			script = bucketScript
			args = []any{now.UnixMicro(), e.Rule.refillPerSecond(), e.Rule.Burst, "0", e.Spent, bucketTTL(e.Rule)}
		} else {
			script = windowScript
			args = make([]any, 0, 4+2*len(e.Push))
			args = append(args, e.Rule.sliceIndex(now), e.Rule.slices(), 0, windowTTL(e.Rule))
			for _, c := range e.Push {
				args = append(args, c.Index, c.Count)
			}
		}
		if full {
			cmds[i] = script.Eval(ctx, pipe, key, args...)
		} else {
			cmds[i] = script.EvalSha(ctx, pipe, key, args...)
		}
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
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
