package traffic

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WarmClient is the client the warm-up requests name: no schedule's, so that what they cost
// the limiter is charged to nobody the judge counts.
const WarmClient = "rlharness-warmup"

// Warm-up figures: a run with Options.Warm starts its aligned origin at least warmLead away,
// sends warmRounds rounds before it, and stops warmQuiet before it at the latest, so that the
// warm-up's own requests are over when the schedule's first ones leave.
const (
	warmLead   = 600 * time.Millisecond
	warmRounds = 3
	warmQuiet  = 100 * time.Millisecond
)

// warm sends, before the origin, warmRounds rounds of conns concurrent requests to every
// replica, each naming WarmClient: the connections the run will need are open and idle in
// rt's pool, and each replica has served requests (and past its unsynced budget, asked its
// store) before the first scheduled one. A cold fleet on 2 cores answered its first
// requests up to 160 ms late and the generator fell behind its schedule on them. Failures
// are not errors: a warm-up is a courtesy to the run, which judges what it sends itself. It
// returns how many requests were answered.
func warm(ctx context.Context, rt http.RoundTripper, urls []string, path, header string, conns int, until time.Time) int {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	var answered atomic.Int64
	for range warmRounds {
		if ctx.Err() != nil {
			break
		}
		var wg sync.WaitGroup
		for _, u := range urls {
			for range conns {
				wg.Go(func() {
					req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(u, "/")+path, nil)
					if err != nil {
						return
					}
					req.Header.Set(header, WarmClient)
					resp, err := rt.RoundTrip(req)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body) // read to the end: the connection goes back to the pool
					resp.Body.Close()
					answered.Add(1)
				})
			}
		}
		wg.Wait()
	}
	return int(answered.Load())
}

// warms says whether a run warms its connections before its origin: Warm is set and the
// replicas are fixed (a Route's are not known before the run).
func (o Options) warms() bool { return o.Warm > 0 && o.Route == nil }
