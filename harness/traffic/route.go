package traffic

import (
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// NewRoutedTargeter is NewTargeter with the replica chosen as each request is sent: route
// returns a base URL (http://127.0.0.1:port) from the replicas live at that moment, so a
// schedule can be spread across a replica set that grows and shrinks during the run.
func NewRoutedTargeter(s *schedule.Schedule, route func() string, path, header string) vegeta.Targeter {
	return targeter(s, func(schedule.Request) string { return strings.TrimSuffix(route(), "/") + path + "?" + seqParam }, header)
}
