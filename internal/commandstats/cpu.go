package commandstats

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// CPU is a server's CPU time so far, from INFO cpu: the main thread's system and user
// seconds (Redis 6.2 on; before, the process's), and the instance it was read from, so
// that a reading across a restart is known for what it is.
type CPU struct {
	Seconds float64
	// MainThread says the figure is the main thread's alone (used_cpu_*_main_thread).
	MainThread bool
	// RunID is INFO server's run_id: a server started again has another.
	RunID string
}

// ParseCPU reads INFO cpu (and server, for run_id) text.
func ParseCPU(info string) (CPU, error) {
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	num := func(k string) (float64, bool, error) {
		v, ok := fields[k]
		if !ok {
			return 0, false, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, true, fmt.Errorf("INFO cpu %s %q: %w", k, v, err)
		}
		return f, true, nil
	}
	c := CPU{RunID: fields["run_id"]}
	for _, pair := range [][2]string{{"used_cpu_sys_main_thread", "used_cpu_user_main_thread"}, {"used_cpu_sys", "used_cpu_user"}} {
		sys, okSys, err := num(pair[0])
		if err != nil {
			return CPU{}, err
		}
		user, okUser, err := num(pair[1])
		if err != nil {
			return CPU{}, err
		}
		if okSys && okUser {
			c.Seconds, c.MainThread = sys+user, pair[0] == "used_cpu_sys_main_thread"
			return c, nil
		}
	}
	return CPU{}, fmt.Errorf("INFO cpu has neither used_cpu_sys_main_thread nor used_cpu_sys")
}

// ReadCPU is ParseCPU on a live server, waiting at most 5 s for its answer.
func ReadCPU(ctx context.Context, rdb *redis.Client) (CPU, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "server", "cpu").Result()
	if err != nil {
		return CPU{}, fmt.Errorf("INFO cpu: %w", err)
	}
	return ParseCPU(info)
}

// CPUUse is the CPU a server spent between two readings wall apart: seconds, and percent
// of one core. It is an error when the server started again between them (its counters
// began again from zero) or the wall time is not positive.
func CPUUse(before, after CPU, wall time.Duration) (seconds, percent float64, err error) {
	switch {
	case wall <= 0:
		return 0, 0, fmt.Errorf("no time between the store's CPU readings")
	case before.RunID != after.RunID || after.Seconds < before.Seconds:
		return 0, 0, fmt.Errorf("the store started again between its CPU readings (run_id %q, then %q)", before.RunID, after.RunID)
	}
	seconds = after.Seconds - before.Seconds
	return seconds, 100 * seconds / wall.Seconds(), nil
}
