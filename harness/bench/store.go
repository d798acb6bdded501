package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/limiters"
)

// scriptInternal are the commands the limiters' Lua scripts run inside Redis: ours
// (limiters.ScriptCommands) and redis_rate's GCRA (TIME, GET, SET). INFO commandstats counts
// them beside the EVALSHA that ran them; they are the store's work, not round trips.
var scriptInternal = commandstats.NewSet(append([]string{"time", "get", "set"}, limiters.ScriptCommands...)...)

// readTouches reads a live store's INFO commandstats: touches are the top-level commands the
// replicas sent (script calls, pings, plain commands), ops every command counted, those the
// scripts ran inside Redis too. The harness's own commands are left out of both.
func readTouches(ctx context.Context, rdb *redis.Client) (touches, ops int64, err error) {
	return commandstats.Read(ctx, rdb, scriptInternal)
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

// storeCPU reads a store's CPU at a steady run's start and end (INFO cpu).
type storeCPU struct {
	before commandstats.CPU
	at     time.Time
	err    error
}

func (c *storeCPU) start(ctx context.Context, rdb *redis.Client) {
	c.before, c.err = commandstats.ReadCPU(ctx, rdb)
	c.at = time.Now()
}

// result is the store's CPU since start, or why it was not measured.
func (c *storeCPU) result(ctx context.Context, rdb *redis.Client, answered int) (*result.StoreCPU, string) {
	if c.at.IsZero() {
		return nil, "the steady run did not start"
	}
	if c.err != nil {
		return nil, c.err.Error()
	}
	after, err := commandstats.ReadCPU(ctx, rdb)
	if err != nil {
		return nil, err.Error()
	}
	sec, pct, err := commandstats.CPUUse(c.before, after, time.Since(c.at))
	if err != nil {
		return nil, err.Error()
	}
	out := &result.StoreCPU{Seconds: sec, Percent: pct}
	if answered > 0 {
		out.MsPerKiloRequest = sec * 1e6 / float64(answered)
	}
	return out, ""
}
