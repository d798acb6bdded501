package traffic

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

func TestPacer(t *testing.T) {
	ms := time.Millisecond
	s := &schedule.Schedule{Requests: []schedule.Request{{At: 0}, {At: 10 * ms}, {At: 10 * ms}, {At: 30 * ms}, {At: 1500 * ms}}}
	p := NewPacer(s)
	tests := []struct {
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false},
		{5 * ms, 1, 5 * ms, false},
		{12 * ms, 2, 0, false}, // due: sent at once
		{12 * ms, 3, 18 * ms, false},
		{40 * ms, 3, 0, false}, // behind: no waiting to catch up
		{40 * ms, 4, 1460 * ms, false},
		{2 * time.Second, 5, 0, true},
		{0, 99, 0, true},
	}
	for _, tc := range tests {
		wait, stop := p.Pace(tc.elapsed, tc.hits)
		if wait != tc.wait || stop != tc.stop {
			t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tc.elapsed, tc.hits, wait, stop, tc.wait, tc.stop)
		}
	}
	rates := []struct {
		elapsed time.Duration
		want    float64
	}{{0, 4}, {10 * ms, 3}, {11 * ms, 1}, {31 * ms, 0}, {501 * ms, 1}, {1501 * ms, 0}}
	for _, tc := range rates {
		if got := p.Rate(tc.elapsed); got != tc.want {
			t.Errorf("Rate(%v) = %v, want %v", tc.elapsed, got, tc.want)
		}
	}
	if p.Origin().IsZero() {
		t.Error("origin not recorded by the first Pace")
	}
}

func TestTargeter(t *testing.T) {
	s := &schedule.Schedule{
		Clients: []schedule.Client{{ID: "a"}, {ID: "b"}},
		Requests: []schedule.Request{
			{At: 0, Client: 1, Replica: 0}, {At: 1, Client: 0, Replica: 1}, {At: 2, Client: 1, Replica: 1},
		},
	}
	tr := NewTargeter(s, []string{"http://r0:1/", "http://r1:2"}, "/check", "x-client-id")
	want := []vegeta.Target{
		{Method: "GET", URL: "http://r0:1/check?seq=0", Header: http.Header{"X-Client-Id": {"b"}}},
		{Method: "GET", URL: "http://r1:2/check?seq=1", Header: http.Header{"X-Client-Id": {"a"}}},
		{Method: "GET", URL: "http://r1:2/check?seq=2", Header: http.Header{"X-Client-Id": {"b"}}},
	}
	for i, w := range want {
		var got vegeta.Target
		if err := tr(&got); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(&w) {
			t.Errorf("target %d = %+v, want %+v", i, got, w)
		}
	}
	var got vegeta.Target
	if err := tr(&got); !errors.Is(err, vegeta.ErrNoTargets) {
		t.Errorf("after the last: err = %v, want ErrNoTargets", err)
	}
}

func TestTargeterConcurrent(t *testing.T) {
	const n = 2000
	s := &schedule.Schedule{Clients: []schedule.Client{{ID: "c"}}, Requests: make([]schedule.Request, n)}
	tr := NewTargeter(s, []string{"http://x"}, "/check", "X-Client-ID")
	var mu sync.Mutex
	var seen []int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				var tg vegeta.Target
				if tr(&tg) != nil {
					return
				}
				i, ok := ParseSeq(tg.URL)
				if !ok {
					t.Errorf("no seq in %q", tg.URL)
					return
				}
				mu.Lock()
				seen = append(seen, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(seen)
	for i, v := range seen {
		if v != i {
			t.Fatalf("index %d handed out as %d: every index must be handed out once", i, v)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d targets, want %d", len(seen), n)
	}
}

func TestParseSeq(t *testing.T) {
	tests := []struct {
		url  string
		want int
		ok   bool
	}{
		{"http://h/check?seq=0", 0, true},
		{"http://h/check?seq=9999999", 9999999, true},
		{"http://h/check?seq=12&x=1", 12, true},
		{"http://h/check?seq=", 0, false},
		{"http://h/check?seq=-1", 0, false},
		{"http://h/check?seq=1x", 0, false},
		{"http://h/check", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, ok := ParseSeq(tc.url)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseSeq(%q) = %d, %v; want %d, %v", tc.url, got, ok, tc.want, tc.ok)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		msg  string
		want ErrKind
	}{
		{`Get "http://127.0.0.1:1/check?seq=0": dial tcp 127.0.0.1:1: connect: connection refused`, ErrConnection},
		{`Get "http://h/check?seq=0": context deadline exceeded`, ErrTimeout},
		{`Get "http://h/check?seq=0": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`, ErrTimeout},
		{`Get "http://h/check?seq=0": read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer`, ErrConnection},
		{`Get "http://h/check?seq=0": EOF`, ErrConnection},
		{`Get "http://h/check?seq=0": context canceled`, ErrCanceled},
		{`unsupported protocol scheme "ftp"`, ErrOther},
	}
	for _, tc := range tests {
		if got := classify(tc.msg); got != tc.want {
			t.Errorf("classify(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// replica is a test replica: it answers 429 to clients whose ID starts with
// "deny-", 200 to others, after an optional delay, and records what it saw.
type replica struct {
	srv   *httptest.Server
	mu    sync.Mutex
	seen  map[int]string // seq → client header
	delay func(seq int) time.Duration
}

func newReplica(t *testing.T, delay func(int) time.Duration) *replica {
	r := &replica{seen: map[int]string{}, delay: delay}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seq, err := strconv.Atoi(req.URL.Query().Get("seq"))
		if err != nil || req.URL.Path != "/check" || req.Method != http.MethodGet {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := req.Header.Get("X-Client-ID")
		r.mu.Lock()
		r.seen[seq] = id
		r.mu.Unlock()
		if r.delay != nil {
			select {
			case <-time.After(r.delay(seq)):
			case <-req.Context().Done():
				return
			}
		}
		if strings.HasPrefix(id, "deny-") {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// testSchedule is n requests evenly over d, clients round-robin, replicas
// alternating.
func testSchedule(n int, d time.Duration, clients ...string) *schedule.Schedule {
	s := &schedule.Schedule{Duration: d}
	for _, id := range clients {
		s.Clients = append(s.Clients, schedule.Client{ID: id, Limit: 10, Window: time.Second})
	}
	for i := range n {
		s.Requests = append(s.Requests, schedule.Request{
			At: time.Duration(i) * d / time.Duration(n), Client: int32(i % len(clients)), Replica: int16(i % 2),
		})
	}
	return s
}

func TestRunAgainstReplicas(t *testing.T) {
	const n = 400
	s := testSchedule(n, 400*time.Millisecond, "ok-1", "deny-2", "ok-3", "ok-4")
	reps := []*replica{newReplica(t, nil), newReplica(t, nil)}
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []Outcome
	sum, err := Run(context.Background(), s, []string{reps[0].srv.URL, reps[1].srv.URL}, Options{Workers: 8}, func(o Outcome) error {
		got = append(got, o)
		return w.Write(o)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	if sum.Scheduled != n || sum.Sent != n || sum.Unattributed != 0 || sum.Truncated {
		t.Fatalf("summary %+v: want %d scheduled and sent, none unattributed", sum, n)
	}
	if sum.AskedRate != 1000 {
		t.Errorf("asked rate %v, want 1000/s", sum.AskedRate)
	}
	// A short run under -race beside another package's tests can lose a few hundred ms (0.72
	// seen in CI); the ratio still tells a rate counted over the wrong span or requests.
	if r := sum.AchievedRate / sum.AskedRate; r < 0.5 || r > 1 {
		t.Errorf("achieved %v of asked %v (ratio %.3f), want within [0.5, 1]", sum.AchievedRate, sum.AskedRate, r)
	}
	if sum.Start.IsZero() {
		t.Error("no start time")
	}
	idx := make([]int, 0, n)
	for _, o := range got {
		idx = append(idx, o.Index)
		req := s.Requests[o.Index]
		id := s.Clients[req.Client].ID
		wantCode := uint16(http.StatusOK)
		if strings.HasPrefix(id, "deny-") {
			wantCode = http.StatusTooManyRequests
		}
		if o.Code != wantCode || o.Err != ErrNone {
			t.Errorf("request %d (%s): code %d err %v, want %d", o.Index, id, o.Code, o.Err, wantCode)
		}
		rep := reps[req.Replica]
		rep.mu.Lock()
		seenID, ok := rep.seen[o.Index]
		rep.mu.Unlock()
		if !ok || seenID != id {
			t.Errorf("request %d: replica %d saw client %q (seen %v), want %q", o.Index, req.Replica, seenID, ok, id)
		}
		if o.Lateness != o.Sent-req.At {
			t.Errorf("request %d: lateness %v ≠ sent %v − at %v", o.Index, o.Lateness, o.Sent, req.At)
		}
		// The worker that took the tick may call the targeter a moment after
		// another worker; a request is never sent materially early.
		if o.Lateness < -time.Millisecond || o.Lateness > 300*time.Millisecond {
			t.Errorf("request %d: lateness %v", o.Index, o.Lateness)
		}
		if o.Latency <= 0 || o.Latency > 2*time.Second {
			t.Errorf("request %d: latency %v", o.Index, o.Latency)
		}
	}
	slices.Sort(idx)
	for i, v := range idx {
		if v != i {
			t.Fatalf("outcome indexes are not 0..%d exactly once (position %d holds %d)", n-1, i, v)
		}
	}
	if sum.LastSent < s.Requests[n-1].At {
		t.Errorf("last sent at %v, before the last scheduled offset %v", sum.LastSent, s.Requests[n-1].At)
	}

	var back []Outcome
	skipped, err := ReadFile(filepath.Join(dir, OutcomesFile), func(o Outcome) error { back = append(back, o); return nil })
	if err != nil || skipped != 0 {
		t.Fatalf("ReadFile: skipped %d, err %v", skipped, err)
	}
	if !slices.Equal(back, got) {
		t.Errorf("outcome file holds %d outcomes that differ from the %d delivered", len(back), len(got))
	}
}

func TestRunTransportErrors(t *testing.T) {
	slow := newReplica(t, func(seq int) time.Duration {
		if seq%2 == 1 {
			return 5 * time.Second
		}
		return 0
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name string
		urls []string
		want func(i int) (uint16, ErrKind)
	}{
		{"odd requests time out", []string{slow.srv.URL, slow.srv.URL}, func(i int) (uint16, ErrKind) {
			if i%2 == 1 {
				return 0, ErrTimeout
			}
			return 200, ErrNone
		}},
		{"replica 1 refuses connections", []string{slow.srv.URL, closed}, func(i int) (uint16, ErrKind) {
			if i%2 == 1 {
				return 0, ErrConnection
			}
			return 200, ErrNone
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSchedule(10, 50*time.Millisecond, "ok")
			// testSchedule sends odd requests to replica 1.
			start := time.Now()
			count := map[ErrKind]int{}
			sum, err := Run(context.Background(), s, tc.urls, Options{Timeout: 150 * time.Millisecond}, func(o Outcome) error {
				code, kind := tc.want(o.Index)
				if o.Code != code || o.Err != kind {
					t.Errorf("request %d: code %d err %v, want %d %v", o.Index, o.Code, o.Err, code, kind)
				}
				count[o.Err]++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Sent != 10 || count[ErrNone] != 5 {
				t.Errorf("%d outcomes, %d without error; want 10 and 5", sum.Sent, count[ErrNone])
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("run took %v; the 150 ms timeout should bound it", el)
			}
		})
	}
}

func TestRunStops(t *testing.T) {
	rep := newReplica(t, nil)
	stopSink := errors.New("disk full")
	tests := []struct {
		name      string
		cancelAt  time.Duration // cancel the context after this long; 0 never
		sinkFails int           // the sink fails on this outcome; 0 never
		wantErr   error
		maxSent   int
	}{
		{"context canceled", 200 * time.Millisecond, 0, context.Canceled, 50},
		{"sink error", 0, 10, stopSink, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSchedule(1000, 10*time.Second, "ok") // 100/s
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAt > 0 {
				time.AfterFunc(tc.cancelAt, cancel)
			}
			calls := 0
			start := time.Now()
			sum, err := Run(ctx, s, []string{rep.srv.URL, rep.srv.URL}, Options{}, func(Outcome) error {
				calls++
				if calls == tc.sinkFails {
					return stopSink
				}
				return nil
			})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("Run returned after %v, want promptly", el)
			}
			if calls > tc.maxSent || sum.Sent != calls || !sum.Truncated {
				t.Errorf("sink called %d times, summary %+v; want ≤ %d and truncated", calls, sum, tc.maxSent)
			}
		})
	}
}

func TestRunAligned(t *testing.T) {
	rep := newReplica(t, nil)
	const align = 50 * time.Millisecond
	for range 2 {
		sum, err := Run(context.Background(), testSchedule(4, 20*time.Millisecond, "ok"), []string{rep.srv.URL, rep.srv.URL},
			Options{Align: align}, func(Outcome) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if off := time.Duration(sum.Start.UnixNano() % int64(align)); off > 10*time.Millisecond {
			t.Errorf("run started %v after a multiple of %v since the epoch, want within 10ms", off, align)
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	s := testSchedule(4, time.Second, "ok")
	tests := []struct {
		name string
		s    *schedule.Schedule
		urls []string
		want string
	}{
		{"one URL for two replicas", s, []string{"http://127.0.0.1:1"}, "sends to 2 replicas but 1 URLs"},
		{"no scheme", s, []string{"127.0.0.1:1", "127.0.0.1:2"}, "must start with http://"},
		{"invalid schedule", &schedule.Schedule{}, []string{"http://x"}, "duration must be > 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.s, tc.urls, Options{}, func(Outcome) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A limiter that says when it decided (Options.DecidedHeader) gives each outcome its decision
// time on the generator's clock; an answer without the header, or with one that is not a
// Unix time in nanoseconds, gives none.
func TestRunReadsTheDecisionTime(t *testing.T) {
	const n = 200
	s := testSchedule(n, 200*time.Millisecond, "said-1", "garbled-2", "silent-3")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch id := req.Header.Get("X-Client-ID"); {
		case strings.HasPrefix(id, "said-"):
			w.Header().Set("X-RateLimit-Decided-At", strconv.FormatInt(time.Now().UnixNano(), 10))
		case strings.HasPrefix(id, "garbled-"):
			w.Header().Set("X-RateLimit-Decided-At", time.Now().Format(time.RFC3339Nano))
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	said := 0
	_, err := Run(context.Background(), s, []string{srv.URL, srv.URL}, Options{Workers: 8, DecidedHeader: "X-RateLimit-Decided-At"}, func(o Outcome) error {
		id := s.Clients[s.Requests[o.Index].Client].ID
		if !strings.HasPrefix(id, "said-") {
			if o.Decided {
				t.Errorf("request %d (%s): decided at %v from an answer without a Unix time", o.Index, id, o.DecidedAt)
			}
			return nil
		}
		said++
		// The server decides after the request left and before its answer came back.
		if !o.Decided || o.DecidedAt < o.Sent || o.DecidedAt > o.Sent+o.Latency {
			t.Errorf("request %d: decided %v at %v, want within its send %v and answer %v", o.Index, o.Decided, o.DecidedAt, o.Sent, o.Sent+o.Latency)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if said != (n+2)/3 {
		t.Errorf("%d answers said when they were decided, want %d", said, (n+2)/3)
	}
}

func TestOutcomeFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-1")
	outs := []Outcome{
		{Index: 0, Code: 200, Sent: 5, Latency: 1200, Lateness: -3},
		{Index: 7, Code: 0, Err: ErrTimeout, Sent: 1e9, Latency: 5e9, Lateness: 12},
		{Index: 3, Code: 429, Sent: 2e9, Latency: 800, Lateness: 0, DecidedAt: 2e9 + 300, Decided: true},
		{Index: 4, Code: 200, Sent: 3, Latency: 900, Lateness: 0, DecidedAt: -20, Decided: true}, // a clock behind the generator's
	}
	// Two writers append to the same file, as a resumed run would; the
	// header is written once.
	for _, part := range [][]Outcome{outs[:2], outs[2:]} {
		w, err := Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range part {
			if err := w.Write(o); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, OutcomesFile)
	var back []Outcome
	if _, err := ReadFile(path, func(o Outcome) error { back = append(back, o); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, outs) {
		t.Errorf("read %+v, want %+v", back, outs)
	}
	// A new run in the same directory replaces the file: the earlier run's outcomes are not
	// read as its own (make loadtest writes to runs/latest every time).
	w, err := Replace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(outs[2]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back = back[:0]
	if _, err := ReadFile(path, func(o Outcome) error { back = append(back, o); return nil }); err != nil || !slices.Equal(back, outs[2:3]) {
		t.Errorf("after Replace: read %+v (%v), want only %+v", back, err, outs[2:3])
	}

	reads := []struct {
		name    string
		text    string
		n       int
		skipped int
		err     string
	}{
		{"crash mid-line", outcomeHeader + "\n0,200,,1,2,3\n1,20", 1, 1, ""},
		{"no header", "0,200,,1,2,3\n", 1, 0, ""},
		{"empty", "", 0, 0, ""},
		{"bad kind", outcomeHeader + "\n0,0,oops,1,2,3\n", 0, 0, "2: field 3: unknown error kind"},
		{"short line", outcomeHeader + "\n0,200,,1\n", 0, 0, "2: 4 fields, want 7"},
		{"written before decided_ns", oldHeader + "\n0,200,,1,2,3\n1,429,,4,5,6\n", 2, 0, ""},
		{"decision times", outcomeHeader + "\n0,200,,1,2,3,\n1,429,,4,5,6,5\n", 2, 0, ""},
		{"bad decision time", outcomeHeader + "\n0,200,,1,2,3,x\n", 0, 0, "2: field 7"},
		{"a field too many", outcomeHeader + "\n0,200,,1,2,3,4,5\n", 0, 0, "2: field 7"},
		{"bad number", "0,200,,1,x,3\n", 0, 0, "1: field 5"},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			skipped, err := Read(strings.NewReader(tc.text), func(Outcome) error { n++; return nil })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || n != tc.n || skipped != tc.skipped {
				t.Fatalf("read %d, skipped %d, err %v; want %d, %d", n, skipped, err, tc.n, tc.skipped)
			}
		})
	}
}

// A run with bodies bounds each request as a whole: a replica that stops reading a large
// body (a paused one) blocks the write before any response-header timeout starts, and must
// still be a timeout after Timeout, not a request left to the run's end.
func TestRunWithBodiesTimesOut(t *testing.T) {
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer stall.Close()
	s := testSchedule(4, 40*time.Millisecond, "ok")
	start := time.Now()
	var kinds []ErrKind
	_, err := Run(context.Background(), s, []string{stall.URL, stall.URL}, Options{Timeout: 150 * time.Millisecond,
		Body: func(int) []byte { return make([]byte, 32<<20) }}, func(o Outcome) error {
		kinds = append(kinds, o.Err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 4 || slices.ContainsFunc(kinds, func(k ErrKind) bool { return k != ErrTimeout }) {
		t.Errorf("outcomes %v, want 4 timeouts", kinds)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("run took %v; the 150 ms timeout should bound it", el)
	}
}

func TestRunStartsAtTheGivenInstant(t *testing.T) {
	rep := newReplica(t, nil)
	urls := []string{rep.srv.URL, rep.srv.URL}
	start := time.Now().Add(150 * time.Millisecond)
	var hooked time.Time
	var early []Outcome
	sum, err := Run(context.Background(), testSchedule(20, 100*time.Millisecond, "ok"), urls,
		Options{Start: start, Align: time.Hour, OnStart: func(origin time.Time) error {
			hooked = origin
			if d := time.Until(origin); d > 0 {
				t.Errorf("OnStart called %v before the origin", d)
			}
			return nil
		}}, func(o Outcome) error {
			if o.Sent < 0 {
				early = append(early, o)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Start.Equal(start) || !hooked.Equal(start) {
		t.Errorf("origin %v, OnStart got %v; want the given start %v (Start wins over Align)", sum.Start, hooked, start)
	}
	if len(early) > 0 {
		t.Errorf("%d requests sent before the origin, first %+v", len(early), early[0])
	}

	stop := errors.New("no traffic today")
	calls := 0
	_, err = Run(context.Background(), testSchedule(4, 20*time.Millisecond, "ok"), urls,
		Options{OnStart: func(time.Time) error { return stop }}, func(Outcome) error { calls++; return nil })
	if !errors.Is(err, stop) || calls != 0 {
		t.Errorf("OnStart's error: Run returned %v after %d outcomes, want the error and none sent", err, calls)
	}
	_, err = Run(context.Background(), testSchedule(4, 20*time.Millisecond, "ok"), urls,
		Options{Start: time.Now().Add(-time.Minute)}, func(Outcome) error { calls++; return nil })
	if err == nil || !strings.Contains(err.Error(), "passed") || calls != 0 {
		t.Errorf("a start a minute ago: err %v after %d outcomes, want a refusal", err, calls)
	}
}

func TestNextAligned(t *testing.T) {
	base := time.Unix(1_700_000_004, 0) // a multiple of 12 s since the epoch
	for _, tc := range []struct {
		at    time.Duration
		align time.Duration
		want  time.Duration
	}{
		{0, time.Second, time.Second}, // on an edge: the next one
		{300 * time.Millisecond, time.Second, time.Second},
		{12_345 * time.Millisecond, 12 * time.Second, 24 * time.Second},
	} {
		if got := NextAligned(base.Add(tc.at), tc.align); !got.Equal(base.Add(tc.want)) {
			t.Errorf("NextAligned(+%v, %v) = %v, want +%v", tc.at, tc.align, got.Sub(base), tc.want)
		}
	}
}

// The generator's connections stay within the process's open-file limit, fdReserve kept for
// the rest: past it a dial fails with "too many open files", which a run would count as the
// system's error.
func TestConnectionCapWithinTheOpenFileLimit(t *testing.T) {
	limit := openFileLimit()
	if limit == 0 {
		t.Skip("the open-file limit is not read here")
	}
	for _, n := range []int{1, 2, 8, 64} {
		c := connectionCap(n)
		if c < 1 || limit > fdReserve+n && c*n+fdReserve > limit {
			t.Errorf("%d replicas: %d connections each, %d in all with %d kept back, open-file limit %d", n, c, c*n, fdReserve, limit)
		}
	}
	if connectionCap(0) != 0 {
		t.Error("no replicas: want no cap")
	}
}
