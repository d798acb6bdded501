package rediscluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RangeOutage is how long one slot range was without a master that answered during a watch.
type RangeOutage struct {
	Slots      string // "0-5460"
	MasterFrom string // the range's master when the watch began
	MasterTo   string // its master when the watch ended
	// Down is the total time without an answering master: from the first poll that saw it
	// down to the first that saw it back (to the last poll while it is still down), so it is
	// good to one poll interval.
	Down      time.Duration
	FirstDown time.Duration // since the watch began; -1 when never down
	Back      time.Duration // when it had an answering master again; -1 when never down or still down
}

// Event is a change of one node's role or health as the cluster saw it.
type Event struct {
	At   time.Duration // since the watch began
	Node string
	From string // "master", "replica", "master fail?", "unreachable", ...
	To   string
}

// Report is what a watch saw.
type Report struct {
	Polls  int
	Ranges []RangeOutage
	Events []Event
}

// Watcher polls a cluster's slot map (CLUSTER NODES from the first node that answers) and
// PINGs every master, so that a fault's effect is measured from outside: how long each slot
// range had no master that answered, and what every node did meanwhile.
type Watcher struct {
	addrs   []string
	every   time.Duration
	timeout time.Duration
	now     func() time.Time
	start   time.Time
	clients map[string]*redis.Client

	mu      sync.Mutex
	report  Report
	initial []Range
	since   []time.Duration // per initial range: when its current outage began, -1 when up
	last    time.Duration
	roles   map[string]string
	cancel  context.CancelFunc
	done    chan struct{}
}

// Watch starts polling the cluster at addrs every interval; Stop ends it and returns the
// report. A node that does not answer within timeout counts as unreachable.
func Watch(ctx context.Context, addrs []string, every, timeout time.Duration, now func() time.Time) *Watcher {
	w := &Watcher{addrs: addrs, every: every, timeout: timeout, now: now, start: now(),
		clients: map[string]*redis.Client{}, roles: map[string]string{}, done: make(chan struct{})}
	for _, a := range addrs {
		w.clients[a] = redis.NewClient(&redis.Options{Addr: a, DialTimeout: timeout, ReadTimeout: timeout,
			WriteTimeout: timeout, PoolTimeout: timeout, MaxRetries: -1, DisableIdentity: true, PoolSize: 2})
	}
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			w.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Started is when the watch began: the origin of its offsets.
func (w *Watcher) Started() time.Time { return w.start }

// Stop ends the watch and returns what it saw.
func (w *Watcher) Stop() Report {
	w.cancel()
	<-w.done
	for _, c := range w.clients {
		c.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, s := range w.since {
		if s >= 0 { // still down when the watch ended
			w.report.Ranges[i].Down += w.last - s
		}
	}
	return w.report
}

func (w *Watcher) poll(ctx context.Context) {
	var view View
	var got bool
	for _, a := range w.addrs {
		cctx, cancel := context.WithTimeout(ctx, w.timeout)
		txt, err := w.clients[a].ClusterNodes(cctx).Result()
		cancel()
		if err != nil {
			continue
		}
		nodes, err := ParseNodes(txt)
		if err != nil {
			continue
		}
		view, got = View{Nodes: nodes}, true
		break
	}
	if !got || ctx.Err() != nil {
		return
	}
	// Every node is PINGed, in parallel: a paused master keeps its flags for a while but
	// answers nothing.
	alive := make(map[string]bool, len(w.addrs))
	var amu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range w.addrs {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, w.timeout)
			err := w.clients[a].Ping(cctx).Err()
			cancel()
			amu.Lock()
			alive[a] = err == nil
			amu.Unlock()
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	at := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.report.Polls++
	ranges := view.Ranges()
	if w.initial == nil {
		w.initial = ranges
		for _, r := range ranges {
			w.report.Ranges = append(w.report.Ranges, RangeOutage{
				Slots: fmt.Sprintf("%d-%d", r.First, r.Last), MasterFrom: r.Master, MasterTo: r.Master, FirstDown: -1, Back: -1})
			w.since = append(w.since, -1)
		}
	}
	since := at.Sub(w.start)
	w.last = since
	for i, r0 := range w.initial {
		ro := &w.report.Ranges[i]
		owner := ownerOf(ranges, r0.First)
		down := owner == nil || owner.Failing || !alive[owner.Master]
		if owner != nil {
			ro.MasterTo = owner.Master
		} else {
			ro.MasterTo = ""
		}
		switch {
		case down && w.since[i] < 0:
			w.since[i] = since
			if ro.FirstDown < 0 {
				ro.FirstDown = since
			}
			ro.Back = -1
		case !down && w.since[i] >= 0:
			ro.Down += since - w.since[i]
			w.since[i] = -1
			ro.Back = since
		}
	}
	for _, a := range w.addrs {
		role := "unreachable"
		if n, ok := view.Node(a); ok {
			role = n.Role()
			if !alive[a] {
				role += ", not answering"
			}
		}
		if prev, ok := w.roles[a]; ok && prev != role {
			w.report.Events = append(w.report.Events, Event{At: since, Node: a, From: prev, To: role})
		}
		w.roles[a] = role
	}
}

func ownerOf(ranges []Range, slot int) *Range {
	for i := range ranges {
		if ranges[i].First <= slot && slot <= ranges[i].Last {
			return &ranges[i]
		}
	}
	return nil
}
