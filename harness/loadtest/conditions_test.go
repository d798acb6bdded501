package loadtest

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// A target file's run states what ran: no design of the built-in replica ("the bounded
// design"), no sync interval it never declared ("sync 0.00 ms"), and the local provider's
// loopback with the reason it is not the --network asked. (A HAProxy run's header said "the
// bounded design" and "loopback network" with no word why --network host was not.)
func TestTargetRunConditionsSayWhatRan(t *testing.T) {
	haproxy := mustTarget(t, "name: haproxy-peers\nalgorithm: sliding_window\nstart: {replicas: 8, process: {command: [haproxy, '{{listen}}']}}\n"+
		"request: {client: {header: X-Client-ID}}\nresponses: {accepted: [200], rejected: [429]}\nclients: [{limit: 600, window: 12s}]\n")
	synced := mustTarget(t, "name: synced\nstart: {replicas: 2, process: {command: [x, '{{listen}}']}}\nrequest: {client: {header: X}}\n"+
		"responses: {accepted: [200], rejected: [429]}\nclients: [{limit: 600, window: 12s}]\nmetrics: {exchanges: rl_sync_total, sync_interval: 250ms}\n")
	tests := []struct {
		name              string
		provider, network string
		cfg               func(*Config)
		wantHeader        string
		wantDesign        string
		wantSync          string
		wantNote          string
	}{
		{"a target on the local provider, host asked", "local", "host", func(c *Config) { c.Targets = append(c.Targets, haproxy) },
			"(local provider, loopback network (the local provider runs every process on this host's 127.0.0.1, which is what --network host asks of Docker), 8 replicas, time scale 0.2, 2 cores)",
			"", "0s", "which is what --network host asks of Docker"},
		{"a target that declares its sync interval", "docker", "host", func(c *Config) { c.Targets = append(c.Targets, synced) },
			"(docker provider, host network, 2 replicas, time scale 0.2, 2 cores)", "", "250ms", ""},
		{"the built-in replica says its design", "docker", "host", func(*Config) {},
			"(docker provider, host network, 8 replicas, the bounded design, time scale 1, 2 cores)", "bounded", "200ms", ""},
		{"the built-in replica on the local provider, no --network asked", "local", "bridge", func(*Config) {},
			"(local provider, loopback network (the local provider runs every process on this host's 127.0.0.1; --network is the docker provider's), 8 replicas, the bounded design",
			"bounded", "200ms", "--network is the docker provider's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Provider, cfg.Network, cfg.Logger = tt.provider, tt.network, slog.New(slog.NewTextHandler(io.Discard, nil))
			tt.cfg(&cfg)
			sum, err := cfg.newSummary(0)
			if err != nil {
				t.Fatal(err)
			}
			sum.Cores = 2
			if sum.Config.Design != tt.wantDesign || sum.Config.SyncInterval.String() != tt.wantSync || !strings.Contains(sum.Config.NetworkNote, tt.wantNote) ||
				(tt.wantNote == "") != (sum.Config.NetworkNote == "") {
				t.Errorf("design %q, sync %v, network note %q; want %q, %s, %q", sum.Config.Design, sum.Config.SyncInterval, sum.Config.NetworkNote,
					tt.wantDesign, tt.wantSync, tt.wantNote)
			}
			var b strings.Builder
			WriteVerdict(&b, result.Summary{Config: sum.Config, Cores: sum.Cores, Pass: true})
			if !strings.Contains(b.String(), tt.wantHeader) {
				t.Errorf("verdict header:\n%s\nwant it to contain\n%s", b.String(), tt.wantHeader)
			}
		})
	}
}
