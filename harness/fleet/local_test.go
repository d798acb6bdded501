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

// The local provider runs everything on 127.0.0.1: its conditions say loopback whatever
// --network asked (the report said "bridge" for it).
func TestNetworkingOfTheLocalProviderIsLoopback(t *testing.T) {
	for _, tt := range []struct{ provider, network, want string }{
		{ProviderLocal, NetworkBridge, NetworkLoopback},
		{ProviderLocal, NetworkHost, NetworkLoopback},
		{ProviderDocker, NetworkBridge, NetworkBridge},
		{ProviderDocker, NetworkHost, NetworkHost},
	} {
		if got := Networking(tt.provider, tt.network); got != tt.want {
			t.Errorf("Networking(%q, %q) = %q, want %q", tt.provider, tt.network, got, tt.want)
		}
	}
}
