package fleet

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestLocalMissingRedisServer(t *testing.T) {
	_, err := LocalProvider{RedisServer: "/nonexistent/redis-server"}.Start(context.Background(), Spec{Target: TargetNoop})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Errorf("missing redis-server: err = %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
