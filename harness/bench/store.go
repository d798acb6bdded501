package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/limiters"
)

// scriptInternal are the commands the limiters' Lua scripts run inside Redis: ours
// (limiters/redis.go, limiters/cluster.go) and redis_rate's GCRA (TIME, GET, SET). INFO commandstats counts them
// beside the EVALSHA that ran them; they are the store's work, not round trips.
var scriptInternal = func() map[string]bool {
	m := map[string]bool{"time": true, "get": true, "set": true} // redis_rate's
	for _, c := range limiters.ScriptCommands {
		m[c] = true
	}
	return m
}()

// harnessOwn are the commands the harness itself sends the store around a measurement.
func harnessOwn(cmd string) bool {
	return cmd == "info" || cmd == "hello" || cmd == "flushall" || cmd == "dbsize" ||
		strings.HasPrefix(cmd, "config") || strings.HasPrefix(cmd, "client") || strings.HasPrefix(cmd, "memory")
}

// storeTouches reads INFO commandstats text: touches are the top-level commands the
// replicas sent (script calls, pings, plain commands), ops every command counted, those the
// scripts ran inside Redis too. The harness's own commands are left out of both.
func storeTouches(info string) (touches, ops int64, err error) {
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		cmd := strings.TrimPrefix(name, "cmdstat_")
		if harnessOwn(cmd) {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			v, ok := strings.CutPrefix(f, "calls=")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("INFO commandstats %q: calls %q: %w", name, v, err)
			}
			ops += n
			if !scriptInternal[cmd] {
				touches += n
			}
		}
	}
	return touches, ops, nil
}

// readTouches is storeTouches on a live store.
func readTouches(ctx context.Context, rdb *redis.Client) (touches, ops int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("INFO commandstats: %w", err)
	}
	return storeTouches(info)
}

// infoField reads one numeric field of an INFO section's text, e.g. used_memory.
func infoField(info, field string) (int64, error) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO has no %s field", field)
}
