package worker

import (
	"sync"
	"time"
)

// Queue is one replica's processing capacity: a single server that finishes one request every
// 1/rate, so the replica saturates at rate requests/s whatever the offered load. A request
// admitted at now starts when the server is next free and completes one service time later;
// when that start is more than maxWait away the request is shed instead. Time is an argument,
// as in golang.org/x/time/rate, so the queue is tested on a model clock.
type Queue struct {
	service time.Duration
	maxWait time.Duration

	mu   sync.Mutex
	free time.Time // when the server next starts a request
}

// NewQueue returns a server of rate requests/s that queues up to maxWait of work.
func NewQueue(rate float64, maxWait time.Duration) *Queue {
	return &Queue{service: time.Duration(float64(time.Second) / rate), maxWait: maxWait}
}

// Admit asks for a request arriving at now. It returns when the request completes (now plus
// its queueing and service time) and true, or false when it is shed.
func (q *Queue) Admit(now time.Time) (done time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	start := q.free
	if start.Before(now) {
		start = now
	}
	if start.Sub(now) > q.maxWait {
		return time.Time{}, false
	}
	q.free = start.Add(q.service)
	return q.free, true
}

// Backlog is the work queued ahead of a request arriving at now.
func (q *Queue) Backlog(now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return max(0, q.free.Sub(now))
}

// Window counts events over the last span, in slots of span/slots, for utilisation over a
// sliding window. Time is an argument.
type Window struct {
	slot  time.Duration
	mu    sync.Mutex
	count []float64
	index []int64 // which slot number each ring entry holds
}

// NewWindow counts over span in n slots.
func NewWindow(span time.Duration, n int) *Window {
	return &Window{slot: span / time.Duration(n), count: make([]float64, n), index: make([]int64, n)}
}

// Add counts one event at now.
func (w *Window) Add(now time.Time) {
	k := now.UnixNano() / int64(w.slot)
	i := int(k % int64(len(w.count)))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.index[i] != k {
		w.index[i], w.count[i] = k, 0
	}
	w.count[i]++
}

// Sum is the number of events in the n slots that end with now's slot.
func (w *Window) Sum(now time.Time) float64 {
	k := now.UnixNano() / int64(w.slot)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := 0.0
	for i, c := range w.count {
		if w.index[i] > k-int64(len(w.count)) && w.index[i] <= k {
			s += c
		}
	}
	return s
}

// Covered is how much time Sum(now) counts over: the full slots before now's and the part of
// now's slot that has passed.
func (w *Window) Covered(now time.Time) time.Duration {
	return w.slot*time.Duration(len(w.count)-1) + time.Duration(now.UnixNano()%int64(w.slot))
}
