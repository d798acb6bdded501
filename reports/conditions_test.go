package reports

import (
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// A target file's run states what ran: no sync interval it never declared ("sync 0.00 ms"),
// and why the networking is loopback when --network asked another.
func TestReportConditionsOfATargetRun(t *testing.T) {
	html := generateEdited(t, func(s *result.Summary) {
		s.Config.Algorithm, s.Config.Mode, s.Config.Design, s.Config.SyncInterval = "sliding_window", "target haproxy-peers", "", 0
		s.Config.NetworkNote = "the local provider runs every process on this host's 127.0.0.1, which is what --network host asks of Docker"
	})
	for _, want := range []string{
		"<th>design under test</th><td>sliding_window / target haproxy-peers</td>",
		"<th>networking</th><td>loopback (the local provider runs every process on this host&#39;s 127.0.0.1, which is what --network host asks of Docker)</td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("conditions lack %q", want)
		}
	}
	if strings.Contains(html, "sync 0.00 ms") || strings.Contains(html, "design (sync") {
		t.Error("a target's run shows a sync interval it never declared")
	}
	// The built-in replica's run still shows its own.
	html = generateEdited(t, func(*result.Summary) {})
	if !strings.Contains(html, "(sync ") {
		t.Error("the replica's run lost its sync interval")
	}
}
