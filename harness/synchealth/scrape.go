package synchealth

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Bounds of the time between scrapes: often enough to draw the sync over a short
// scenario, seldom enough that the scrapes are no load beside the traffic.
const (
	MinEvery = 100 * time.Millisecond
	MaxEvery = 2 * time.Second
	// maxTicks bounds a scenario's scrapes (an hour at MinEvery is 36,000).
	maxTicks = 20_000
)

// EveryFor is the time between scrapes for a sync interval: five intervals, within
// [MinEvery, MaxEvery]; MaxEvery/2 when the interval is unknown.
func EveryFor(interval time.Duration) time.Duration {
	if interval <= 0 {
		return MaxEvery / 2
	}
	return min(max(5*interval, MinEvery), MaxEvery)
}

// Scraper polls every node's metrics during a scenario.
type Scraper struct {
	// URLs are the nodes' base URLs (http://127.0.0.1:port), by node index.
	URLs  []string
	Names Names
	// Every is the time between scrapes (EveryFor); Interval the sync interval, if known.
	Every, Interval time.Duration
	// Client makes the scrapes; default one with no proxy and a timeout of Every (at least 1 s).
	Client *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Running is a scraper at work.
type Running struct {
	s      Scraper
	origin time.Time
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	series Series
}

// Start scrapes every node now and every Every after, until Stop or ctx's end; offsets are
// from origin, the scenario's start.
func (s Scraper) Start(ctx context.Context, origin time.Time) *Running {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Every <= 0 {
		s.Every = EveryFor(s.Interval)
	}
	if s.Names.Path == "" {
		s.Names.Path = "/metrics"
	}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: max(s.Every, time.Second), Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Running{s: s, origin: origin, cancel: cancel, done: make(chan struct{}),
		series: Series{Names: s.Names, Nodes: len(s.URLs), Every: s.Every, Interval: s.Interval}}
	go func() {
		defer close(r.done)
		t := time.NewTicker(s.Every)
		defer t.Stop()
		for range maxTicks - 1 { // the last is Stop's
			r.tick(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// Stop ends the scrapes, takes a last one on ctx (the scenario's end) and returns them all.
func (r *Running) Stop(ctx context.Context) Series {
	r.cancel()
	<-r.done
	r.tick(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.series
}

// tick scrapes every node at once.
func (r *Running) tick(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	at := r.s.Now().Sub(r.origin)
	nodes := make([]*Sample, len(r.s.URLs))
	errs := make([]error, len(r.s.URLs))
	var wg sync.WaitGroup
	for i, u := range r.s.URLs {
		wg.Go(func() {
			smp, err := r.s.scrape(ctx, u, at)
			if err == nil {
				nodes[i] = &smp
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if ctx.Err() != nil { // Stop cut the round short: not the replicas' failure
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range errs {
		if err != nil {
			r.series.Errors++
		}
	}
	r.series.Ticks = append(r.series.Ticks, Tick{At: at, Nodes: nodes})
}

func (s Scraper) scrape(ctx context.Context, base string, at time.Duration) (Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+s.Names.Path, nil)
	if err != nil {
		return Sample{}, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Sample{}, fmt.Errorf("GET %s%s: %s", base, s.Names.Path, resp.Status)
	}
	return Parse(resp.Body, s.Names, at)
}
