package loadtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
)

func mustTarget(t *testing.T, doc string) *target.Target {
	t.Helper()
	tg, err := target.Parse("t.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

const targetHead = "name: mine\nstart: {url: \"http://127.0.0.1:1\"}\nresponses: {accepted: [200], rejected: [403], error: [400]}\nclients: [{limit: 600, window: 12s}]\n"

// TestTargetRequestsNameTheClient sends a two-client schedule through a real HTTP server
// and checks that each target file's way of naming the client arrives as it says.
func TestTargetRequestsNameTheClient(t *testing.T) {
	type seen struct{ method, path, query, header, body, ctype, extra string }
	cases := []struct {
		name, request string
		want          func(id string) seen
	}{
		{"header", "request: {path: /check, client: {header: X-User}}", func(id string) seen {
			return seen{method: "GET", path: "/check", header: id}
		}},
		{"query", "request: {path: /d, headers: {X-Extra: yes}, client: {query: user}}", func(id string) seen {
			return seen{method: "GET", path: "/d", query: id, extra: "yes"}
		}},
		{"body", `request: {path: /json, client: {body: '{"d":"rl","v":"{{client}}"}'}}`, func(id string) seen {
			return seen{method: "POST", path: "/json", body: `{"d":"rl","v":"` + id + `"}`, ctype: "application/json"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := mustTarget(t, targetHead+c.request+"\n")
			var mu sync.Mutex
			got := map[string]seen{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				s := seen{method: r.Method, path: r.URL.Path, query: r.URL.Query().Get("user"), header: r.Header.Get("X-User"),
					body: string(b), extra: r.Header.Get("X-Extra")}
				if s.body != "" {
					s.ctype = r.Header.Get("Content-Type")
				}
				id := s.header + s.query
				if s.body != "" {
					id = s.body[strings.LastIndex(s.body, ":\"")+2 : len(s.body)-2]
				}
				mu.Lock()
				got[id] = s
				mu.Unlock()
				w.WriteHeader(http.StatusForbidden)
			}))
			defer srv.Close()
			sched := schedule.Schedule{
				Clients:  []schedule.Client{{ID: "probe-a", Limit: 1, Window: time.Second}, {ID: `b"q`, Limit: 1, Window: time.Second}},
				Requests: []schedule.Request{{At: 0, Client: 0}, {At: time.Millisecond, Client: 1}},
				Duration: 10 * time.Millisecond,
			}
			sys := sut{t: tg}
			var codes []uint16
			_, err := traffic.Run(context.Background(), &sched, []string{srv.URL}, sys.options(&sched), func(o traffic.Outcome) error {
				codes = append(codes, sys.status(o.Code))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"probe-a", `b"q`} {
				want := c.want(id)
				if c.name == "body" && id == `b"q` {
					want.body = `{"d":"rl","v":"b\"q"}`
					id = `b\"q`
				}
				if got[id] != want {
					t.Errorf("client %s: server saw %+v, want %+v (all: %+v)", id, got[id], want, got)
				}
			}
			if len(codes) != 2 || codes[0] != http.StatusTooManyRequests || codes[1] != http.StatusTooManyRequests {
				t.Errorf("statuses %v: the target's 403 must read as the harness's 429", codes)
			}
		})
	}
}

func TestTargetStatus(t *testing.T) {
	sys := sut{t: mustTarget(t, targetHead+"request: {client: {header: X}}\n")}
	for code, want := range map[uint16]uint16{200: 200, 403: 429, 429: 500, 400: 500, 204: 500, 503: 503, 0: 0} {
		if got := sys.status(code); got != want {
			t.Errorf("status %d reads as %d, want %d", code, got, want)
		}
	}
	if got := (sut{}).status(429); got != 429 {
		t.Errorf("built-in replica: 429 reads as %d", got)
	}
}

func TestRunsGateTheFirstSystemOnly(t *testing.T) {
	managed := mustTarget(t, strings.Replace(targetHead, `start: {url: "http://127.0.0.1:1"}`, "start: {docker: {image: i}, replicas: 3}", 1)+
		"request: {client: {header: X}}\nstore: {redis: managed}\nalgorithm: fixed_window\n")
	cfg := DefaultConfig()
	cfg.Matrix = false
	cfg.Targets = []*target.Target{nil, managed}
	var names []string
	for _, r := range cfg.runs() {
		names = append(names, r.sc.Name)
		if r.sc.Gated != (r.sys.t == nil) {
			t.Errorf("%s: gated %v", r.sc.Name, r.sc.Gated)
		}
	}
	want := "sliding_window/delayed sliding_window/delayed/store-stop sliding_window/delayed/store-pause sliding_window/delayed/store-slow " +
		"sliding_window/delayed/store-restart sliding_window/delayed/replica-kill " +
		"mine mine/store-stop mine/store-pause mine/store-slow mine/store-restart mine/replica-kill"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("runs %q, want %q", got, want)
	}
	// --faults picks some of them, for every system.
	cfg.Faults = []string{result.FaultSlow, result.FaultKill}
	names = nil
	for _, r := range cfg.runs() {
		names = append(names, r.sc.Name)
	}
	want = "sliding_window/delayed sliding_window/delayed/store-slow sliding_window/delayed/replica-kill mine mine/store-slow mine/replica-kill"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("runs with --faults store-slow,replica-kill: %q, want %q", got, want)
	}
	cfg.Faults = nil
	cfg.Targets = []*target.Target{managed, nil}
	if r := cfg.runs(); !r[0].sc.Gated || r[6].sc.Gated || r[0].sc.Algorithm != "fixed_window" {
		t.Errorf("with the target first: %+v", r)
	}
	tc := cfg.forTarget(managed, 0)
	if tc.Spec.TimeScale != 0.2 || tc.Spec.Replicas != 3 || tc.Gates.LatenessP99 != 20*time.Millisecond {
		t.Errorf("for the target: scale %v, replicas %d, lateness %v; want 0.2, 3, 20ms", tc.Spec.TimeScale, tc.Spec.Replicas, tc.Gates.LatenessP99)
	}
	url := mustTarget(t, targetHead+"request: {client: {header: X}}\n")
	if got := targetScenarios(url, true, true, true); len(got) != 1 {
		t.Errorf("a url target without a managed store has %d scenarios, want 1 (no store to stop, no node to kill)", len(got))
	}
}

func TestTargetScheduleHasEveryClassesProbes(t *testing.T) {
	tg := mustTarget(t, strings.Replace(targetHead, "clients: [{limit: 600, window: 12s}]",
		"clients: [{limit: 600, window: 12s}, {class: gold, prefix: gold-, limit: 1200, window: 12s}]", 1)+"request: {client: {header: X}}\n")
	cfg := DefaultConfig().forTarget(tg, 0)
	cfg.Spec.Rate, cfg.Spec.Clients = 50, 100
	s, err := sut{t: tg}.schedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	limits := map[string]int{}
	for _, c := range s.Clients {
		if c.Probe {
			limits[c.ID] = c.Limit
		}
		if c.Window != 12*time.Second {
			t.Fatalf("client %s window %v, want 12s", c.ID, c.Window)
		}
	}
	if limits["probe-boundary-burst"] != 600 || limits["gold-probe-boundary-burst"] != 1200 || len(limits) != 8 {
		t.Errorf("probes %v: want the four patterns for each class at its limit", limits)
	}
}

func TestPeerTable(t *testing.T) {
	probe := func(id string, o float64) result.ProbeResult {
		p := result.ProbeResult{}
		p.ID, p.Overshoot, p.Window = id, o, time.Minute
		return p
	}
	scs := []result.ScenarioResult{
		{Scenario: result.Scenario{Name: "sliding_window/delayed", Algorithm: "sliding_window", Mode: "delayed", Gated: true}, Pass: true,
			Requests: 100, StoreCommands: 10, Probes: []result.ProbeResult{probe("probe-boundary-burst", 1.0)}},
		{Scenario: result.Scenario{Name: "fixed_window/central", Algorithm: "fixed_window", Mode: "central"}},
		{Scenario: result.Scenario{Name: "envoy", Target: "envoy"}, Requests: 50, StoreCommands: 100,
			Probes: []result.ProbeResult{probe("probe-uniform2x", 1.2), probe("probe-boundary-burst", 1.98)}},
		{Scenario: result.Scenario{Name: "envoy/store-stop", Target: "envoy", Fault: result.FaultStop}, Accepted: 5, Error: "x"},
		{Scenario: result.Scenario{Name: "envoy/store-slow", Target: "envoy", Fault: result.FaultSlow}, Accepted: 6, Pass: true,
			FaultLatency: &result.Percentiles{Count: 40, P99: 52 * time.Millisecond}},
		{Scenario: result.Scenario{Name: "envoy/replica-kill", Target: "envoy", Fault: result.FaultKill}, Accepted: 7, Pass: true,
			Errors: result.Errors{Connection: 1, Routing: 3}},
	}
	for i := range scs {
		scs[i].Outcome = result.ScenarioOutcome(scs[i])
	}
	rows := result.PeerTable(scs)
	if len(rows) != 2 || rows[0].System != "replica sliding_window/delayed" || rows[0].StorePerRequest != 0.1 || rows[0].Verdict() != "PASS" {
		t.Fatalf("rows %+v", rows)
	}
	e := rows[1]
	if e.BoundaryOvershoot != 1.98 || e.MaxOvershoot != 0 || e.StorePerRequest != 2 || e.Stop == nil || e.Stop.Verdict() != "NOT MADE" || e.Pause != nil || e.Window != time.Minute ||
		e.Verdict() != "FAIL" { // envoy's scenario without a fault broke a promise: FAIL, whatever could not be made
		t.Errorf("envoy row %+v stop %+v", e, e.Stop)
	}
	if e.Slow == nil || e.Slow.Accepted != 6 || e.Slow.P99 != 52*time.Millisecond || e.Slow.Timed != 40 || e.Restart != nil ||
		e.Kill == nil || e.Kill.Errors != 1 || e.Kill.RoutingErrors != 3 || e.Kill.Verdict() != "PASS" {
		t.Errorf("envoy's slow %+v, restart %+v, kill %+v", e.Slow, e.Restart, e.Kill)
	}
}

// TestTargetJSONRule sends through a server that answers every decision 200 and says it in
// the body, as gubernator does: the sut's options read the body, and what the sink sees is
// the harness's own 200, 429 or error.
func TestTargetJSONRule(t *testing.T) {
	tg := mustTarget(t, `name: g
start: {url: "http://127.0.0.1:1"}
request: {path: /v1/GetRateLimits, client: {body: '{"requests":[{"unique_key":"{{client}}"}]}'}}
responses:
  accepted: [200]
  error: [500]
  json: {field: responses.0.status, accepted: [UNDER_LIMIT], rejected: [OVER_LIMIT], error_field: responses.0.error}
clients: [{limit: 600, window: 12s}]
`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch body := string(b); {
		case strings.Contains(body, "under"):
			io.WriteString(w, `{"responses":[{"status":"UNDER_LIMIT","error":""}]}`)
		case strings.Contains(body, "over"):
			io.WriteString(w, `{"responses":[{"status":"OVER_LIMIT","error":""}]}`)
		case strings.Contains(body, "peer"):
			io.WriteString(w, `{"responses":[{"status":"UNDER_LIMIT","error":"peer is not ready"}]}`)
		case strings.Contains(body, "teapot"):
			w.WriteHeader(http.StatusTeapot)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ids := []string{"under", "over", "peer", "teapot", "down"}
	want := []uint16{200, 429, 500, 500, 500}
	sched := schedule.Schedule{Duration: 20 * time.Millisecond}
	for i, id := range ids {
		sched.Clients = append(sched.Clients, schedule.Client{ID: id, Limit: 1, Window: time.Second})
		sched.Requests = append(sched.Requests, schedule.Request{At: time.Duration(i) * time.Millisecond, Client: int32(i)})
	}
	sys := sut{t: tg}
	got := make([]uint16, len(ids))
	_, err := traffic.Run(context.Background(), &sched, []string{srv.URL}, sys.options(&sched), func(o traffic.Outcome) error {
		got[o.Index] = sys.status(o.Code)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		if got[i] != want[i] {
			t.Errorf("client %s: %d, want %d", ids[i], got[i], want[i])
		}
	}
}

// A target's fleet runs Redis only when its file asks the harness to (store: {redis:
// managed}): HAProxy's and nginx's, which keep their counters to themselves, get none.
func TestTargetFleetRunsRedisOnlyForAManagedStore(t *testing.T) {
	start := "name: x\nstart: {replicas: 2, process: {command: [x, '{{listen}}']}}\nrequest: {client: {header: X}}\nresponses: {accepted: [200], rejected: [429]}\nclients: [{limit: 1, window: 1s}]\n"
	for _, tt := range []struct {
		name, store string
		noStore     bool
	}{
		{"no store", "", true},
		{"a store the harness runs", "store: {redis: managed}\n", false},
		{"a store of its own, read for counts only", "store: {redis: '127.0.0.1:6379'}\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tg := mustTarget(t, start+tt.store)
			spec := sut{t: tg}.spec(DefaultConfig().forTarget(tg, 0), result.Scenario{Name: tg.Name})
			if spec.NoStore != tt.noStore {
				t.Errorf("NoStore = %v, want %v", spec.NoStore, tt.noStore)
			}
		})
	}
}
