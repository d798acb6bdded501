// Package commandstats reads what a Redis server ran from INFO commandstats: the commands
// its clients sent (round trips, "touches") and every command it executed, those that
// scripts ran inside it too ("ops"). The harness's own commands around a measurement are
// left out of both.
package commandstats

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Set is a set of command names, lower case as INFO commandstats spells them.
type Set map[string]bool

// NewSet returns the set of cmds, in lower case.
func NewSet(cmds ...string) Set {
	s := make(Set, len(cmds))
	for _, c := range cmds {
		s[strings.ToLower(c)] = true
	}
	return s
}

// harnessOwn are the commands the harness itself sends a store around a measurement.
func harnessOwn(cmd string) bool {
	return cmd == "info" || cmd == "hello" || cmd == "flushall" || cmd == "dbsize" ||
		strings.HasPrefix(cmd, "config") || strings.HasPrefix(cmd, "client") || strings.HasPrefix(cmd, "memory")
}

// Parse reads INFO commandstats text: touches are the commands not in internal (script
// calls, pings, plain commands), ops every command counted; internal names the commands
// scripts run inside Redis, which INFO counts beside the EVALSHA that ran them.
func Parse(info string, internal Set) (touches, ops int64, err error) {
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
			if !internal[cmd] {
				touches += n
			}
		}
	}
	return touches, ops, nil
}

// Read is Parse on a live server, waiting at most 5 s for its answer.
func Read(ctx context.Context, rdb *redis.Client, internal Set) (touches, ops int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("INFO commandstats: %w", err)
	}
	return Parse(info, internal)
}
