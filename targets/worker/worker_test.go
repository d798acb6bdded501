package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var epoch = time.Unix(1_000_000, 0)

func at(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }

func TestQueueSaturatesAndSheds(t *testing.T) {
	q := NewQueue(10, 300*time.Millisecond) // one request per 100 ms, 300 ms of queue
	tests := []struct {
		arrive int
		done   int // ms; -1 shed
	}{
		{0, 100}, {0, 200}, {0, 300}, {0, 400}, // starts at 0, 100, 200, 300
		{0, -1},      // would start at 400 > 300 ms away
		{350, 500},   // starts at 400, 50 ms away
		{2000, 2100}, // idle server starts at once
	}
	for i, tt := range tests {
		done, ok := q.Admit(at(tt.arrive))
		if tt.done < 0 {
			if ok {
				t.Errorf("request %d admitted, want shed", i)
			}
			continue
		}
		if !ok || !done.Equal(at(tt.done)) {
			t.Errorf("request %d: done %v ok %v; want %d ms", i, done.Sub(epoch), ok, tt.done)
		}
	}
	if b := q.Backlog(at(2050)); b != 50*time.Millisecond {
		t.Errorf("backlog %v, want 50ms", b)
	}
}

func TestWindowSlides(t *testing.T) {
	w := NewWindow(time.Second, 10)
	for ms := 0; ms < 1000; ms += 10 { // 100 events over the first second
		w.Add(at(ms))
	}
	tests := []struct {
		now  int
		want float64
	}{
		{999, 100}, {1050, 90}, {1950, 0}, {5000, 0},
	}
	for _, tt := range tests {
		if got := w.Sum(at(tt.now)); got != tt.want {
			t.Errorf("Sum at %d ms = %v, want %v", tt.now, got, tt.want)
		}
	}
	if c := w.Covered(at(1050)); c != 950*time.Millisecond {
		t.Errorf("covered %v, want 950ms", c)
	}
}

// A worker on a model clock: twice its saturation offered for a second is utilisation 2,
// half of it served and the rest queued or shed.
func TestUtilisationAboveSaturation(t *testing.T) {
	now := epoch
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := DefaultConfig()
	cfg.Saturation, cfg.MaxQueue, cfg.Warmup = 100, 100*time.Millisecond, 2*time.Second
	w, err := New(cfg, WithClock(clock, func(context.Context, time.Time) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for i := range 200 { // 200 req/s for one second against 100 req/s
		mu.Lock()
		now = epoch.Add(time.Duration(i) * 5 * time.Millisecond)
		mu.Unlock()
		rec := httptest.NewRecorder()
		w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes[rec.Code]++
	}
	// 100 ms of queue holds 10 requests; served ≈ 100 + 10 over the second.
	if codes[200] < 105 || codes[200] > 112 || codes[200]+codes[503] != 200 {
		t.Errorf("codes %v; want about 110 served and the rest shed", codes)
	}
	if u := w.Utilisation(clock()); u < 1.9 || u > 2.1 {
		t.Errorf("utilisation %v, want about 2", u)
	}
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("healthz during warm-up: %d, want 503", rec.Code)
	}
	mu.Lock()
	now = epoch.Add(3 * time.Second)
	mu.Unlock()
	rec = httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("healthz after warm-up: %d, want 200", rec.Code)
	}
}

// The real clock over HTTP: the metric is scrapeable and shows the load.
func TestMetricsOverHTTP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Saturation, cfg.RateScale = 1000, 0.1 // 100 req/s
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	defer srv.Close()
	for range 20 {
		resp, err := http.Get(srv.URL + "/work")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var util float64
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, UtilisationMetric+" "); ok {
			util, _ = strconv.ParseFloat(v, 64)
		}
	}
	// 20 requests, each taking 10 ms, in about 200 ms of a 1 s window: ≥ 0.2 of 100 req/s.
	if util < 0.15 || !strings.Contains(string(body), `worker_requests_total{outcome="served"} 20`) ||
		!strings.Contains(string(body), "worker_saturation_rps 100") {
		t.Errorf("utilisation %v; metrics:\n%s", util, body)
	}
}

func TestParseFlags(t *testing.T) {
	env := map[string]string{"WORKER_SATURATION": "500", "WORKER_WARMUP": "2s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := ParseFlags("worker", []string{"--rate-scale", "0.1", "--listen", "127.0.0.1:0"}, lookup, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Saturation != 500 || c.RateScale != 0.1 || c.Rate() != 50 || c.Warmup != 2*time.Second || c.Listen != "127.0.0.1:0" {
		t.Errorf("config %+v", c)
	}
	if _, err := ParseFlags("worker", []string{"--rate-scale", "0"}, lookup, io.Discard); err == nil {
		t.Error("rate scale 0 accepted")
	}
	if d := DefaultConfig(); d.Rate() != 1176.47 {
		t.Errorf("default saturation %v, want M19's 1176.47", d.Rate())
	}
}
