package replica

import (
	"fmt"
	"github.com/edgeproof/rlharness/limiters"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// underLimitRules give the fail-open tests' client ten times what it sends.
const underLimitRules = "default: {limit: 1000, window: 10s, algorithm: sliding_window, slices: 10}\n"

// tally counts answers by status.
type tally struct {
	mu       sync.Mutex
	byStatus map[int]int
}

func (c *tally) add(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byStatus == nil {
		c.byStatus = map[int]int{}
	}
	c.byStatus[status]++
}

// onlyOK reports any answer but 200: a 429 for an under-limit client or any 5xx is a failure.
func (c *tally) onlyOK(t *testing.T, phase string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for status, n := range c.byStatus {
		if status != 200 {
			t.Errorf("%s: %d answers with status %d (all: %v)", phase, n, status, c.byStatus)
		}
	}
}

// paced sends n requests for client, one every gap, and tallies the answers.
func paced(t *testing.T, url, client string, n int, gap time.Duration) *tally {
	t.Helper()
	var c tally
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		c.add(ask(t, url, client).status)
	}
	return &c
}

// failOpenCase is a mode (and in delayed mode, its design) the fail-open tests run.
type failOpenCase struct {
	mode   limiters.Mode
	design limiters.Design
}

func (c failOpenCase) name() string {
	if c.mode != limiters.ModeDelayed {
		return string(c.mode)
	}
	return string(c.mode) + "-" + string(c.design)
}

var failOpenModes = []failOpenCase{{limiters.ModeCentral, ""}, {limiters.ModeDelayed, DesignBounded}, {limiters.ModeDelayed, DesignDocument}}

// storeCheckRules give the killed-store test's client a limit of 100 per 10 s, of which it
// sends 90: on two replicas the bounded design's unsynced budget is then 2 per node, so
// nearly every decision goes through the store and the store's count can be checked.
const storeCheckRules = "default: {limit: 100, window: 10s, algorithm: sliding_window, slices: 10}\n"

// The store killed mid-test: an under-limit client sees no 429 and no 5xx, the replica
// says it is degraded; the store restarted empty: the replica reconnects, syncs again,
// the gauge goes back to 0 and the log tells the outage's start, end and degraded count.
func TestFailOpenStoreKilledThenRestarted(t *testing.T) {
	for _, tc := range failOpenModes {
		t.Run(tc.name(), func(t *testing.T) {
			mode := tc.mode
			srv := redistest.Start(t)
			rules := mustRules(t, storeCheckRules)
			var log logBuffer
			r, ts := startReplica(t, Config{Mode: mode, Redis: srv.Addr, NodeCount: 2, Design: tc.design}, rules, WithLogger(log.logger()))
			rule := &rules.Default
			stored := func() int64 { return storedCountIn(t, srv.Client(), "steady", rule, tc.design) }

			paced(t, ts.URL, "steady", 20, 10*time.Millisecond).onlyOK(t, "store up")
			if !eventually(2*time.Second, func() bool { return stored() == 20 }) {
				t.Fatalf("store holds %d of 20 before the outage", stored())
			}

			srv.Kill()
			paced(t, ts.URL, "steady", 60, 20*time.Millisecond).onlyOK(t, "store killed")
			if !r.Degraded() {
				t.Error("not degraded with the store killed")
			}
			if v, _ := metric(t, ts.URL, "rlreplica_degraded"); v != 1 {
				t.Errorf("degraded gauge %v during the outage, want 1", v)
			}
			degraded, _ := metric(t, ts.URL, "rlreplica_degraded_decisions_total")
			if degraded == 0 {
				t.Error("no decision counted as degraded during the outage")
			}

			srv.Restart()
			if !eventually(5*time.Second, func() bool { return !r.Degraded() }) {
				t.Fatal("still degraded 5 s after the store came back")
			}
			paced(t, ts.URL, "steady", 10, 10*time.Millisecond).onlyOK(t, "store restarted")
			// The store restarted empty: what it holds now came from this replica after the
			// restart, so syncing (or central decisions) work again.
			if !eventually(2*time.Second, func() bool { return stored() >= 10 }) {
				t.Errorf("store holds %d after the restart, want at least the 10 new decisions", stored())
			}
			if v, _ := metric(t, ts.URL, "rlreplica_degraded"); v != 0 {
				t.Errorf("degraded gauge %v after recovery, want 0", v)
			}
			logs := log.String()
			if !strings.Contains(logs, "outage starts") || !strings.Contains(logs, "outage ends") ||
				!strings.Contains(logs, "degraded_decisions=") || !strings.Contains(logs, "outage_start=") {
				t.Errorf("log lacks the outage's start, end or degraded decisions:\n%s", logs)
			}
			t.Logf("%s: %v degraded decisions during the outage", tc.name(), degraded)
		})
	}
}

// The store frozen with SIGSTOP: decisions do not wait for it beyond the store timeout (the
// bounded design's: the store wait), and only a few wait at all (the breaker opens), so p99
// stays under 2× the timeout (under the store wait, which only the decisions in flight when
// it froze and the breaker's probes wait out).
func TestFailOpenStorePausedLatency(t *testing.T) {
	for _, tc := range failOpenModes {
		t.Run(tc.name(), func(t *testing.T) {
			timeout, bound := limiters.DefaultStoreTimeout, 2*limiters.DefaultStoreTimeout
			if tc.design == DesignBounded {
				timeout, bound = limiters.DefaultStoreWait, limiters.DefaultStoreWait+limiters.DefaultStoreWait/5
			}
			mode := tc.mode
			srv := redistest.Start(t)
			rules := mustRules(t, underLimitRules)
			r, ts := startReplica(t, Config{Mode: mode, Redis: srv.Addr, NodeCount: 2, StoreTimeout: limiters.DefaultStoreTimeout, Design: tc.design}, rules,
				WithLogger((&logBuffer{}).logger()))
			// Warm the connection pools, as a replica under load has them.
			paced(t, ts.URL, "p", 10, 5*time.Millisecond).onlyOK(t, "store up")

			srv.Pause()
			const workers, each = 4, 60
			lat := make([]time.Duration, 0, workers*each)
			var (
				mu sync.Mutex
				wg sync.WaitGroup
				c  tally
			)
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						start := time.Now()
						a := ask(t, ts.URL, fmt.Sprintf("p%d", w))
						d := time.Since(start)
						c.add(a.status)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
						time.Sleep(time.Duration(5+i%5) * time.Millisecond)
					}
				})
			}
			wg.Wait()
			if !r.Degraded() && mode == limiters.ModeCentral {
				t.Error("central replica not degraded with the store paused")
			}
			srv.Resume()

			c.onlyOK(t, "store paused")
			slices.Sort(lat)
			p99 := lat[len(lat)*99/100]
			slow := 0
			for _, d := range lat {
				if d >= timeout/2 {
					slow++
				}
			}
			t.Logf("%s: %d decisions with the store paused: p50 %v, p99 %v, max %v; %d waited ≥ %v",
				mode, len(lat), lat[len(lat)/2], p99, lat[len(lat)-1], slow, timeout/2)
			if p99 >= bound {
				t.Errorf("p99 %v with the store paused, want < %v", p99, bound)
			}
			if tc.design == DesignBounded && slow > len(lat)/20 {
				t.Errorf("%d of %d decisions waited ≥ %v with the store paused, want at most 5%% (the breaker opens)", slow, len(lat), timeout/2)
			}
			if !eventually(5*time.Second, func() bool {
				ask(t, ts.URL, "p-after") // central notices recovery on a decision, delayed on a sync
				return !r.Degraded()
			}) {
				t.Error("still degraded 5 s after the store resumed")
			}
		})
	}
}

// Two replicas in delayed sync over one Redis hold a client sent at twice its limit,
// alternating between them, within 1.1× its limit in any window-long interval.
func TestDelayedSyncTwoReplicasWithinTenPercent(t *testing.T) {
	srv := redistest.Start(t)
	// The documents' rule scaled ten times faster: 600 per 6 s in 12 slices; sync every 20 ms.
	rules := mustRules(t, "default: {limit: 600, window: 6s, algorithm: sliding_window, slices: 12}\n")
	const (
		window = 6 * time.Second
		limit  = 600
		rate   = 2 * limit / 6 // requests per second: twice the limit
		gap    = time.Second / rate
	)
	var urls []string
	for i := range 2 {
		_, ts := startReplica(t, Config{Mode: limiters.ModeDelayed, Redis: srv.Addr, NodeIndex: i, NodeCount: 2,
			SyncInterval: 20 * time.Millisecond}, rules, WithLogger((&logBuffer{}).logger()))
		urls = append(urls, ts.URL)
	}
	n := int(2 * window / gap)
	var allowed []time.Time
	var c tally
	// Start on a slice boundary: counts leave the window a slice at a time, so a start
	// inside a slice lets even one node pass up to half a slice's count (+8%) more in some
	// window-long interval. Aligned, what is measured is the replicas' coherence.
	slice := window / 12
	start := time.Now().Truncate(slice).Add(slice)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		at := time.Now()
		a := ask(t, urls[i%2], "hot")
		c.add(a.status)
		if a.status == 200 {
			allowed = append(allowed, at)
		}
	}
	for status, k := range c.byStatus {
		if status != 200 && status != 429 {
			t.Errorf("%d answers with status %d", k, status)
		}
	}
	// The busiest window-long interval starts at some allowed request.
	busiest, j := 0, 0
	for i := range allowed {
		for j < len(allowed) && allowed[j].Sub(allowed[i]) < window {
			j++
		}
		busiest = max(busiest, j-i)
	}
	ratio := float64(busiest) / limit
	t.Logf("sent %d over %v at 2× the limit: %d allowed; busiest %v interval %d = %.3f× the limit",
		n, time.Since(start).Round(time.Millisecond), len(allowed), window, busiest, ratio)
	if ratio > 1.1 {
		t.Errorf("busiest window-long interval allowed %d, %.3f× the limit of %d; want ≤ 1.1×", busiest, ratio, limit)
	}
	if ratio < 0.9 {
		t.Errorf("busiest window-long interval allowed %d, %.3f× the limit: the replicas reject what they should allow", busiest, ratio)
	}
}
