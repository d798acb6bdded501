package traffic

import (
	"net/http"
	"strings"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// NewRoutedTargeter is NewTargeter with the replica chosen as each request is sent: route
// returns a base URL (http://127.0.0.1:port) from the replicas live at that moment, so a
// schedule can be spread across a replica set that grows and shrinks during the run.
func NewRoutedTargeter(s *schedule.Schedule, route func() string, path, header string) vegeta.Targeter {
	key := http.CanonicalHeaderKey(header)
	ids := clientIDs(s)
	var next atomic.Int64
	return func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		if i >= int64(len(s.Requests)) {
			return vegeta.ErrNoTargets
		}
		r := s.Requests[i]
		t.Method = http.MethodGet
		t.URL = seqURL(strings.TrimSuffix(route(), "/")+path+"?"+seqParam, i)
		t.Header = http.Header{key: ids[r.Client : r.Client+1 : r.Client+1]}
		return nil
	}
}
