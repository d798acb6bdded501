package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/edgeproof/rlharness/limiters"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// slice0 starts a 5 s slice: slices are aligned to the Unix epoch.
var slice0 = time.Unix(1_800_000_000, 0)

// After the limit a client gets 429; every answer carries the draft's fields, rounded up.
func TestLimitThen429WithHeaders(t *testing.T) {
	srv := redistest.Start(t)
	rules := mustRules(t, "default: {limit: 3, window: 10s, algorithm: sliding_window, slices: 2}\n")
	type want struct {
		status                int
		ratelimit, retryAfter string
	}
	// Sliced counts (split, central, the document's delayed sync): at 1.5 s into slice 0
	// the window's counts leave at 10 s: t = ceil(8.5) = 9. At 10.5 s slice 0 has left the
	// window; the new count leaves at 20 s, 9.5 s on.
	sliced := struct {
		first      []want
		after      []time.Duration
		then       []want
		rejections float64
	}{
		first: []want{
			{200, `"default";r=2;t=9`, ""},
			{200, `"default";r=1;t=9`, ""},
			{200, `"default";r=0;t=9`, ""},
			{429, `"default";r=0;t=9`, "9"},
			{429, `"default";r=0;t=9`, "9"},
		},
		after:      []time.Duration{9 * time.Second},
		then:       []want{{200, `"default";r=2;t=10`, ""}},
		rejections: 2,
	}
	// The bounded design counts each request until it is a window old, exactly: the
	// requests at 1.5 s leave at 11.5 s, 10 s on (t = 10); at 10.5 s they are still in the
	// window (retry in 1 s), at 11.5 s they have left.
	bounded := sliced
	bounded.first = []want{
		{200, `"default";r=2;t=10`, ""},
		{200, `"default";r=1;t=10`, ""},
		{200, `"default";r=0;t=10`, ""},
		{429, `"default";r=0;t=10`, "10"},
		{429, `"default";r=0;t=10`, "10"},
	}
	bounded.after = []time.Duration{9 * time.Second, time.Second}
	bounded.then = []want{{429, `"default";r=0;t=1`, "1"}, {200, `"default";r=2;t=10`, ""}}
	bounded.rejections = 3
	cases := []failOpenCase{{limiters.ModeSplit, ""}, {limiters.ModeCentral, ""}, {limiters.ModeDelayed, DesignBounded}, {limiters.ModeDelayed, DesignDocument}}
	for _, tc := range cases {
		t.Run(tc.name(), func(t *testing.T) {
			w := sliced
			if tc.design == DesignBounded {
				w = bounded
			}
			clock := &testClock{t: slice0.Add(1500 * time.Millisecond)}
			cfg := Config{Mode: tc.mode, Redis: srv.Addr, SyncInterval: time.Hour, Design: tc.design}
			_, ts := startReplica(t, cfg, rules, WithClock(clock.Now))
			client := "c-" + tc.name()
			check := func(what string, a answer, w want) {
				t.Helper()
				if a.status != w.status || a.header.Get("RateLimit") != w.ratelimit || a.header.Get("Retry-After") != w.retryAfter {
					t.Errorf("%s: %d RateLimit %q Retry-After %q; want %d %q %q",
						what, a.status, a.header.Get("RateLimit"), a.header.Get("Retry-After"), w.status, w.ratelimit, w.retryAfter)
				}
				// Admitted or refused, the answer says when the limiter decided, on its clock.
				if got, want := a.header.Get("X-RateLimit-Decided-At"), fmt.Sprint(clock.Now().UnixNano()); got != want {
					t.Errorf("%s: X-RateLimit-Decided-At %q, want the replica's clock then, %s", what, got, want)
				}
			}
			for i, w := range w.first {
				a := ask(t, ts.URL, client)
				check(fmt.Sprintf("request %d", i+1), a, w)
				if p := a.header.Get("RateLimit-Policy"); p != `"default";q=3;w=10` {
					t.Errorf("request %d: RateLimit-Policy %q", i+1, p)
				}
			}
			for i, d := range w.after {
				clock.Advance(d)
				check(fmt.Sprintf("%v later", d), ask(t, ts.URL, client), w.then[i])
			}
			if v, _ := metric(t, ts.URL, `rlreplica_decisions_total{outcome="rejected",rule="default"}`); v != w.rejections {
				t.Errorf("rejected decisions %v, want %v", v, w.rejections)
			}
		})
	}
}

// A named rule's name is the policy's; a token bucket says when it is full again.
func TestNamedRuleHeaders(t *testing.T) {
	rules := mustRules(t, `default: {limit: 600, window: 60s, algorithm: sliding_window, slices: 12}
rules:
  - {name: gold, match: {class: gold}, limit: 10, window: 10s, algorithm: token_bucket, burst: 2}
`)
	clock := &testClock{t: slice0}
	_, ts := startReplica(t, Config{Mode: limiters.ModeSplit}, rules, WithClock(clock.Now))
	for i, w := range []struct {
		status    int
		rl, retry string
	}{
		{200, `"gold";r=1;t=1`, ""},  // 1 token short of full: 1 s at 1 token/s
		{200, `"gold";r=0;t=2`, ""},  // 2 short: 2 s
		{429, `"gold";r=0;t=1`, "1"}, // the next token in 1 s
	} {
		a := ask(t, ts.URL, "anyone", ClassHeader, "gold")
		if a.status != w.status || a.header.Get("RateLimit") != w.rl || a.header.Get("Retry-After") != w.retry ||
			a.header.Get("RateLimit-Policy") != `"gold";q=10;w=10` {
			t.Errorf("request %d: %d %q %q %q", i+1, a.status, a.header.Get("RateLimit-Policy"), a.header.Get("RateLimit"), a.header.Get("Retry-After"))
		}
	}
	if a := ask(t, ts.URL, "anyone"); a.header.Get("RateLimit-Policy") != `"default";q=600;w=60` {
		t.Errorf("without the class: policy %q", a.header.Get("RateLimit-Policy"))
	}
}

// Without a usable client ID the answer is a 400 naming the header, and nothing is counted.
func TestBadClientIDIs400AndUncounted(t *testing.T) {
	rules := mustRules(t, "default: {limit: 5, window: 10s, algorithm: fixed_window}\n")
	_, ts := startReplica(t, Config{Mode: limiters.ModeSplit, ClientHeader: "X-Api-Key"}, rules)
	long := strings.Repeat("a", MaxClientIDBytes+1)
	tests := []struct {
		name    string
		headers []string
		want    string
	}{
		{"missing", nil, "missing client ID: send it in the X-Api-Key header"},
		{"empty", []string{"X-Api-Key", ""}, "empty client ID in the X-Api-Key header"},
		{"oversized", []string{"X-Api-Key", long}, "client ID in the X-Api-Key header is 257 bytes: at most 256 are allowed"},
		{"twice", []string{"X-Api-Key", "a", "X-Api-Key", "b"}, "the X-Api-Key header appears 2 times: send exactly one client ID"},
		{"default header ignored", []string{"X-Client-ID", "a"}, "missing client ID: send it in the X-Api-Key header"},
	}
	for _, tt := range tests {
		a := ask(t, ts.URL, "-", tt.headers...)
		var body struct{ Error string }
		err := json.Unmarshal([]byte(a.body), &body)
		if a.status != 400 || err != nil || body.Error != tt.want || strings.Count(a.body, "\n") != 1 ||
			a.header.Get("Content-Type") != "application/json" || a.header.Get("RateLimit") != "" {
			t.Errorf("%s: %d %q %v; want 400 with error %q", tt.name, a.status, a.body, a.header, tt.want)
		}
	}
	if v, _ := metric(t, ts.URL, "rlreplica_bad_requests_total"); v != float64(len(tests)) {
		t.Errorf("bad requests %v, want %d", v, len(tests))
	}
	if _, ok := metric(t, ts.URL, `rlreplica_decisions_total{outcome="allowed",rule="default"}`); ok {
		t.Error("a 400 was counted as a decision")
	}
	// The error names the header as configured, here the default.
	_, ts2 := startReplica(t, Config{Mode: limiters.ModeSplit}, rules)
	if a := ask(t, ts2.URL, "-"); a.status != 400 || a.body != `{"error":"missing client ID: send it in the X-Client-ID header"}`+"\n" {
		t.Errorf("default header: %d %q", a.status, a.body)
	}
	// The longest allowed ID is counted, from a full allowance.
	a := ask(t, ts.URL, "-", "X-Api-Key", long[:MaxClientIDBytes])
	if a.status != 200 || !strings.Contains(a.header.Get("RateLimit"), ";r=4;") {
		t.Errorf("256-byte ID: %d %q, want 200 with r=4", a.status, a.header.Get("RateLimit"))
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	srv := redistest.Start(t)
	r, ts := startReplica(t, Config{Mode: limiters.ModeDelayed, Redis: srv.Addr, NodeCount: 2}, nil)
	if a, err := httpClient.Get(ts.URL + "/healthz"); err != nil || a.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", a, err)
	}
	for range 3 {
		ask(t, ts.URL, "m")
	}
	// A sync that outlives its 50 ms store timeout on a busy machine is counted as a timeout,
	// not a fault of this test: what it asserts is an exchange that succeeded.
	if !eventually(5*time.Second, func() bool {
		v, _ := metric(t, ts.URL, `rlreplica_sync_exchanges_total{result="ok"}`)
		return v > 0
	}) {
		t.Fatal("no exchange with the store succeeded in 5 s")
	}
	for series, want := range map[string]float64{
		`rlreplica_decisions_total{outcome="allowed",rule="default"}`: 3,
		"rlreplica_degraded":                                           0,
		"rlreplica_degraded_decisions_total":                           0,
		"rlreplica_tracked_clients":                                    1,
		`rlreplica_info{mode="delayed",node_count="2",node_index="0"}`: 1,
	} {
		if v, ok := metric(t, ts.URL, series); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	if _, ok := metric(t, ts.URL, `rlreplica_store_errors_total{op="exchange",reason="timeout"}`); !ok {
		t.Error("no exchange timeout series")
	}
	if v, ok := metric(t, ts.URL, "rlreplica_sync_lag_seconds"); !ok || v > 1 {
		t.Errorf("sync lag %v s (present %v), want well under 1 s", v, ok)
	}
	if r.Degraded() {
		t.Error("degraded with the store up")
	}
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Reload (SIGHUP) puts a new file in force; an invalid one changes nothing and says so.
func TestReloadKeepsOldRulesOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, path, "default: {limit: 3, window: 10s, algorithm: fixed_window}\n")
	rules, err := LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	r, ts := startReplica(t, Config{Mode: limiters.ModeSplit, RulesPath: path}, rules, WithLogger(log.logger()))
	policy := func() string { return ask(t, ts.URL, "c").header.Get("RateLimit-Policy") }
	if p := policy(); p != `"default";q=3;w=10` {
		t.Fatalf("before reload: %q", p)
	}

	writeFile(t, path, "default: {limit: 5, window: 20s, algorithm: fixed_window}\n")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if p := policy(); p != `"default";q=5;w=20` {
		t.Fatalf("after reload: %q", p)
	}

	writeFile(t, path, "default:\n  limit: 0\n  window: 20s\n  algorithm: fixed_window\n")
	err = r.Reload()
	if err == nil || err.Error() != path+":2: limit must be > 0 (got 0)" {
		t.Fatalf("reload of a bad file: %v", err)
	}
	if p := policy(); p != `"default";q=5;w=20` {
		t.Errorf("after a bad reload: %q, want the previous rules", p)
	}
	if !strings.Contains(log.String(), "rule reload failed: keeping the old rules") || !strings.Contains(log.String(), path+":2:") {
		t.Errorf("log does not say the old rules stay and why:\n%s", log.String())
	}
	if v, _ := metric(t, ts.URL, `rlreplica_rule_reloads_total{result="error"}`); v != 1 {
		t.Errorf("failed reloads %v, want 1", v)
	}
}

// A bad rule file stops start-up before the replica listens, naming file and line.
func TestRunStopsOnBadRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, path, "default:\n  limit: 10\n  window: 1s\n  algorithm: fixed_window\n  slicez: 3\n")
	cfg := DefaultConfig()
	cfg.Mode, cfg.Listen, cfg.RulesPath = limiters.ModeSplit, "127.0.0.1:0", path
	err := Run(context.Background(), cfg)
	if err == nil || err.Error() != path+`:5: unknown key "slicez" in the default rule (want one of limit, window, algorithm, slices, burst)` {
		t.Fatalf("Run: %v", err)
	}
}

// SIGTERM (ctx) drains and, in delayed mode, flushes local counts with a final sync.
// The bounded design pushes the counts of a client within its budget only then.
func TestServeFlushesOnShutdown(t *testing.T) {
	for _, design := range []limiters.Design{DesignDocument, DesignBounded} {
		t.Run(string(design), func(t *testing.T) { serveFlushesOnShutdown(t, design) })
	}
}

func serveFlushesOnShutdown(t *testing.T, design limiters.Design) {
	srv := redistest.Start(t)
	cfg := DefaultConfig()
	cfg.Mode, cfg.Redis, cfg.SyncInterval, cfg.Design = limiters.ModeDelayed, srv.Addr, time.Hour, design // only the final sync
	// The bounded budget is then 30 of the default 600: the 5 stay on the replica.
	cfg.NodeCount = 1
	r, err := New(cfg, nil, WithLogger((&logBuffer{}).logger()))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	for range 5 {
		if a := ask(t, url, "flush-me"); a.status != 200 {
			t.Fatalf("status %d", a.status)
		}
	}
	rule := &r.Rules().Default
	if n := storedCountIn(t, srv.Client(), "flush-me", rule, design); n != 0 {
		t.Fatalf("store holds %d before the final sync", n)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if n := storedCountIn(t, srv.Client(), "flush-me", rule, design); n != 5 {
		t.Errorf("store holds %d after shutdown, want the 5 counted", n)
	}
}
