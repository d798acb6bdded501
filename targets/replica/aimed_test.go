package replica

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/edgeproof/rlharness/limiters"
)

// shot is one request of an aimed client: when it was sent and whether it passed.
type shot struct {
	at time.Time
	ok bool
}

// fire sends n requests of client to each url at once, through a bounded pool of workers,
// and returns every request's send time and answer.
func fire(t *testing.T, urls []string, client string, n int) []shot {
	t.Helper()
	const workers = 32
	jobs := make(chan string)
	var (
		mu  sync.Mutex
		out []shot
		wg  sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for u := range jobs {
				at := time.Now()
				a := ask(t, u, client)
				if a.status != 200 && a.status != 429 {
					t.Errorf("status %d", a.status)
				}
				mu.Lock()
				out = append(out, shot{at, a.status == 200})
				mu.Unlock()
			}
		})
	}
	for i := range n * len(urls) {
		jobs <- urls[i%len(urls)]
	}
	close(jobs)
	wg.Wait()
	return out
}

// judgeShots applies the harness's accounting (harness/accounting) on send times: the most
// accepted in any half-open window-long interval over the limit, and the rejections of a
// send whose client sent at most the limit in the window ending at it.
func judgeShots(shots []shot, window time.Duration, limit int) (overshoot float64, falseRejects int) {
	slices.SortFunc(shots, func(a, b shot) int { return a.at.Compare(b.at) })
	var acc []time.Time
	for _, s := range shots {
		if s.ok {
			acc = append(acc, s.at)
		}
	}
	busiest, j := 0, 0
	for i := range acc {
		for j < len(acc) && acc[j].Sub(acc[i]) < window {
			j++
		}
		busiest = max(busiest, j-i)
	}
	for i, s := range shots {
		if s.ok {
			continue
		}
		n := 0
		for k := i; k >= 0 && s.at.Sub(shots[k].at) < window; k-- {
			n++
		}
		for k := i + 1; k < len(shots) && shots[k].at.Equal(s.at); k++ {
			n++
		}
		if n <= limit {
			falseRejects++
		}
	}
	return float64(busiest) / float64(limit), falseRejects
}

// A quick load test of an aimed family against 4 replicas over one real redis-server, the
// documents' rule ten times faster (600 per 6 s in 12 slices, sync every 20 ms): a full limit
// at a slice's end, then again right after that slice drops. The document's design lets it
// through twice (2×), the bounded design holds it within 1.1× with no false reject. (A fresh
// client's full limit to every replica at once is left to the model-clock test: sent by 32
// workers it takes longer than a sync interval to arrive, and its sends are reordered by more
// than the margin on their way, so judged on send times it measures the machine.)
func TestAimedTrafficAgainstAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test of about 15 s")
	}
	const (
		window = 6 * time.Second
		slice  = window / 12
		limit  = 600
		nodes  = 4
	)
	rules := mustRules(t, "default: {limit: 600, window: 6s, algorithm: sliding_window, slices: 12}\n")
	for _, design := range []limiters.Design{DesignDocument, DesignBounded} {
		srv := redistest.Start(t)
		var urls []string
		for i := range nodes {
			_, ts := startReplica(t, Config{Mode: limiters.ModeDelayed, Redis: srv.Addr, NodeIndex: i, NodeCount: nodes,
				SyncInterval: 20 * time.Millisecond, Design: design}, rules, WithLogger((&logBuffer{}).logger()))
			urls = append(urls, ts.URL)
		}
		families := []struct {
			name string
			run  func(client string) []shot
		}{
			{"full limit at a slice's end and after it drops", func(client string) []shot {
				start := time.Now().Truncate(slice).Add(2 * slice)
				time.Sleep(time.Until(start.Add(slice - 150*time.Millisecond)))
				shots := fire(t, urls, client, limit/nodes)
				time.Sleep(time.Until(start.Add(12*slice + 20*time.Millisecond)))
				return append(shots, fire(t, urls, client, limit/nodes)...)
			}},
		}
		for _, f := range families {
			t.Run(string(design)+"/"+f.name, func(t *testing.T) {
				shots := f.run(fmt.Sprintf("%s-%s", design, f.name))
				over, falseRejects := judgeShots(shots, window, limit)
				passed := 0
				for _, s := range shots {
					if s.ok {
						passed++
					}
				}
				t.Logf("%s: sent %d, passed %d, overshoot %.3f×, %d false rejects", design, len(shots), passed, over, falseRejects)
				if design == DesignBounded && (over > 1.1 || falseRejects > 0) {
					t.Errorf("overshoot %.3f× (want ≤ 1.1×), %d false rejects (want 0)", over, falseRejects)
				}
				if design == DesignDocument && over <= 1.1 {
					t.Errorf("the document's design held %.3f×: the family is not aimed", over)
				}
			})
		}
	}
}
