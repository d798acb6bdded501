package replica

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/limiters"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// logBuffer collects a replica's log lines; safe for the replica's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// mustRules parses a rule file written in the test.
func mustRules(t testing.TB, src string) *Rules {
	t.Helper()
	r, err := ParseRules("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startReplica builds a replica and serves it on 127.0.0.1; both end with the test.
func startReplica(t testing.TB, cfg Config, rules *Rules, opts ...Option) (*Replica, *httptest.Server) {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ClientHeader == "" {
		cfg.ClientHeader = DefaultClientHeader
	}
	if cfg.NodeCount == 0 {
		cfg.NodeCount = 1
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = 20 * time.Millisecond
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = limiters.DefaultStoreTimeout
	}
	if cfg.Design == "" {
		cfg.Design = DesignBounded
	}
	r, err := New(cfg, rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(r)
	t.Cleanup(func() {
		ts.Close()
		_ = r.Close(context.Background())
	})
	return r, ts
}

// httpClient keeps connections alive, as a load generator does.
var httpClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 16},
}

type answer struct {
	status int
	header http.Header
	body   string
}

// ask sends one decision request for client (none when client is "-").
func ask(t testing.TB, url, client string, extra ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/check", nil)
	if err != nil {
		t.Fatal(err)
	}
	if client != "-" {
		req.Header.Set(DefaultClientHeader, client)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Add(extra[i], extra[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

// metric reads one sample from the replica's /metrics; ok is false when it is absent.
func metric(t testing.TB, url, series string) (v float64, ok bool) {
	t.Helper()
	resp, err := httpClient.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		name, val, found := strings.Cut(sc.Text(), " ")
		if found && name == series {
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return v, true
		}
	}
	return 0, false
}

// scrape reads every sample of the replica's /metrics at once.
func scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := httpClient.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		name, val, found := strings.Cut(sc.Text(), " ")
		if !found || strings.HasPrefix(name, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// storedCount is the total of a client's window slices in Redis.
func storedCount(t testing.TB, rdb redis.Cmdable, client string, rule *limiters.Rule) int64 {
	t.Helper()
	h, err := rdb.HGetAll(context.Background(), limiters.Key(client, rule)).Result()
	if err != nil {
		t.Fatal(err)
	}
	counts, err := limiters.WindowHash(h)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, c := range counts {
		sum += c.Count
	}
	return sum
}

// storedCountIn is the total of a client's counts in Redis as design lays them out.
func storedCountIn(t testing.TB, rdb redis.Cmdable, client string, rule *limiters.Rule, design limiters.Design) int64 {
	t.Helper()
	if design != DesignBounded {
		return storedCount(t, rdb, client, rule)
	}
	subs, err := limiters.BoundedLog(context.Background(), rdb, client, rule)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, c := range subs {
		sum += c.Count
	}
	return sum
}

// eventually polls cond every 10 ms until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}
