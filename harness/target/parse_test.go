package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const good = `name: envoy-ratelimit
algorithm: fixed_window
start:
  replicas: 2
  health: /healthcheck
  docker:
    image: rlharness/envoy-ratelimit:dev
    port: 8080
    env:
      REDIS_URL: "{{redis}}"
      PORT: "{{port}}"
    files:
      - path: /data/ratelimit/config/config.yaml
        content: |
          domain: rl
request:
  path: /json
  timeout: 15s
  headers: {Content-Type: application/json}
  client:
    body: '{"domain":"rl","descriptors":[{"entries":[{"key":"client","value":"{{client}}"}]}]}'
responses:
  accepted: [200]
  rejected: [429]
  error: [400, 500]
clients:
  - class: default
    limit: 600
    window: 60s
  - class: premium
    prefix: premium-
    limit: 1200
    window: 1m
store:
  redis: managed
  scripts: [GET, set]
metrics:
  path: /stats/prometheus
  exchanges: rl_sync_total
  view_age: rl_view_age_seconds
  sync_interval: 500ms
faults:
  killed_node: limiter
  store_delay: 200ms
topology:
  zones:
    - {name: near, replicas: 1, latency: 0.5ms}
    - {name: far, replicas: 1, latency: 40ms, jitter: 10ms}
`

func TestParseGood(t *testing.T) {
	tg, err := Parse("envoy.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "envoy-ratelimit" || tg.Start.Kind != StartDocker || tg.Start.Replicas != 2 || tg.Start.Port != 8080 ||
		tg.Start.Health != "/healthcheck" || tg.Start.Env["REDIS_URL"] != "{{redis}}" || len(tg.Start.Files) != 1 ||
		string(tg.Start.Files[0].Content) != "domain: rl\n" {
		t.Errorf("start: %+v", tg.Start)
	}
	if tg.Request.Method != "POST" || tg.Request.Path != "/json" || tg.Request.Timeout != 15*time.Second || tg.Request.Headers["Content-Type"] != "application/json" {
		t.Errorf("request: %+v", tg.Request)
	}
	if got := string(tg.Request.BodyFor(`a"b`)); !strings.Contains(got, `"value":"a\"b"`) {
		t.Errorf("body for a\"b: %s", got)
	}
	if len(tg.Classes) != 2 || tg.Classes[1].Limit != 1200 || tg.Window() != time.Minute || tg.ClassOf("premium-7").Name != "premium" || tg.ClassOf("x").Name != "default" {
		t.Errorf("classes: %+v", tg.Classes)
	}
	if !tg.Store.Managed || tg.Algorithm != "fixed_window" || strings.Join(tg.Store.Scripts, ",") != "get,set" {
		t.Errorf("store %+v algorithm %q", tg.Store, tg.Algorithm)
	}
	if m := tg.Metrics; m == nil || *m != (Metrics{Path: "/stats/prometheus", Exchanges: "rl_sync_total", ViewAge: "rl_view_age_seconds", SyncInterval: 500 * time.Millisecond}) {
		t.Errorf("metrics %+v", m)
	}
	if tg.Faults != (Faults{KilledNode: BlameLimiter, StoreDelay: 200 * time.Millisecond}) {
		t.Errorf("faults %+v", tg.Faults)
	}
	if got := tg.Topology.String(); got != "near:1:500µs,far:1:40ms±10ms" {
		t.Errorf("topology %q", got)
	}
	for code, want := range map[int]Verdict{200: Accepted, 429: Rejected, 400: Error, 503: Error, 201: Error} {
		if got := tg.Responses.Of(code); got != want {
			t.Errorf("status %d: %v, want %v", code, got, want)
		}
	}
}

func TestParseDefaultsAndKinds(t *testing.T) {
	tg, err := Parse("p.yaml", []byte(`name: mine
start:
  process: {command: [./limiter, --listen, "127.0.0.1:{{port}}"]}
request: {client: {query: user}}
responses: {accepted: [200, 204], rejected: [429, 503]}
clients: [{limit: 10, window: 1s}]
store: {redis: "127.0.0.1:6379"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Request.Method != "GET" || tg.Request.Path != "/" || tg.Request.ClientQuery != "user" || tg.Start.Replicas != 1 ||
		tg.Start.Health != "/" || tg.Classes[0].Name != "default" || tg.Store.Redis != "127.0.0.1:6379" || tg.Responses.Of(503) != Rejected ||
		tg.Metrics != nil || tg.Faults != (Faults{KilledNode: BlameHarness}) {
		t.Errorf("%+v", tg)
	}
	v := Vars{Port: 8081, Host: "0.0.0.0", Listen: ":8081", Redis: "redis:6379", Backend: "127.0.0.1:9000", Node: 2, Nodes: 8}
	if got := v.Expand("127.0.0.1:{{port}} {{host}} {{listen}} {{redis}} {{backend}} {{node}}/{{nodes}}"); got != "127.0.0.1:8081 0.0.0.0 :8081 redis:6379 127.0.0.1:9000 2/8" {
		t.Errorf("Expand: %q", got)
	}
	if tg.Clock != (Clock{}) {
		t.Errorf("clock %+v from a file that declares none", tg.Clock)
	}
}

// A target's exact clock: the header its answers say when they were decided in, or a
// recording backend it proxies to.
func TestParseClock(t *testing.T) {
	for _, tc := range []struct {
		name, start, clock string
		want               Clock
	}{
		{"decided at", `{process: {command: [./l, "{{listen}}"]}}`, "{decided_at: X-RateLimit-Decided-At}", Clock{DecidedAt: "X-RateLimit-Decided-At"}},
		{"backend", `{process: {command: [./l, "{{listen}}", "{{backend}}"]}}`, "{backend: record}", Clock{Backend: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Parse("c.yaml", []byte("name: c\nstart: "+tc.start+"\nrequest: {client: {header: X-Client-ID}}\n"+
				"responses: {accepted: [200], rejected: [429]}\nclients: [{limit: 10, window: 1s}]\nclock: "+tc.clock+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if tg.Clock != tc.want {
				t.Errorf("clock %+v, want %+v", tg.Clock, tc.want)
			}
		})
	}
}

func TestParseSourceFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "conf.yaml"), []byte("domain: rl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.yaml")
	body := `name: x
start: {docker: {image: i, files: [{path: /c.yaml, source: conf.yaml}]}}
request: {client: {header: X-Client-ID}}
responses: {accepted: [200], rejected: [429]}
clients: [{limit: 1, window: 1s}]
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(tg.Start.Files[0].Content) != "domain: rl\n" {
		t.Errorf("file content %q", tg.Start.Files[0].Content)
	}
}

// TestParseErrors: every mistake is reported with the file, the line and the field.
func TestParseErrors(t *testing.T) {
	base := map[string]string{
		"name":      "name: x",
		"start":     "start: {url: \"http://127.0.0.1:8080\"}",
		"request":   "request: {client: {header: X-Client-ID}}",
		"responses": "responses: {accepted: [200], rejected: [429]}",
		"clients":   "clients: [{limit: 600, window: 60s}]",
	}
	order := []string{"name", "start", "request", "responses", "clients"}
	with := func(over map[string]string, extra ...string) string {
		var lines []string
		for _, k := range order {
			v, ok := over[k]
			if !ok {
				v = base[k]
			}
			if v != "" {
				lines = append(lines, v)
			}
		}
		return strings.Join(append(lines, extra...), "\n") + "\n"
	}
	cases := []struct {
		name, doc, want string
	}{
		{"empty file", "", "t.yaml:1: the file is empty"},
		{"not a mapping", "- a\n", "t.yaml:1: the file: must be a mapping"},
		{"yaml syntax", "name: [x\n", "t.yaml: yaml:"},
		{"unknown top field", with(nil, "colour: red"), "t.yaml:6: colour: unknown field"},
		{"field twice", with(nil, "name: y"), "t.yaml:6: name: given twice"},
		{"missing name", with(map[string]string{"name": ""}), "t.yaml:1: name: missing"},
		{"missing start", with(map[string]string{"start": ""}), "t.yaml:1: start: missing"},
		{"missing request", with(map[string]string{"request": ""}), "t.yaml:1: request: missing"},
		{"missing responses", with(map[string]string{"responses": ""}), "t.yaml:1: responses: missing"},
		{"missing clients", with(map[string]string{"clients": ""}), "t.yaml:1: clients: missing"},
		{"bad name", with(map[string]string{"name": "name: a/b"}), "t.yaml:1: name: use letters"},
		{"empty name", with(map[string]string{"name": `name: ""`}), "t.yaml:1: name: must not be empty"},
		{"bad algorithm", with(nil, "algorithm: leaky"), "t.yaml:6: algorithm: use fixed_window"},
		{"start not mapping", with(map[string]string{"start": "start: docker"}), "t.yaml:2: start: must be a mapping"},
		{"two start kinds", with(map[string]string{"start": "start: {url: \"http://127.0.0.1:1\", docker: {image: i}}"}), "t.yaml:2: start: give exactly one of docker, process or url (got 2"},
		{"no start kind", with(map[string]string{"start": "start: {replicas: 2}"}), "t.yaml:2: start: give exactly one"},
		{"unknown start field", with(map[string]string{"start": "start: {url: \"http://127.0.0.1:1\", image: i}"}), "t.yaml:2: start.image: unknown field"},
		{"url not loopback", with(map[string]string{"start": "start: {url: \"http://10.0.0.1:8080\"}"}), "t.yaml:2: start.url: must be on loopback"},
		{"url not http", with(map[string]string{"start": "start: {url: \"ftp://127.0.0.1\"}"}), "t.yaml:2: start.url: must be an http://"},
		{"url replicas", with(map[string]string{"start": "start: {url: \"http://127.0.0.1:1\", replicas: 3}"}), "t.yaml:2: start.replicas: a url target is one address"},
		{"replicas zero", with(map[string]string{"start": "start: {docker: {image: i}, replicas: 0}"}), "t.yaml:2: start.replicas: must be >= 1 (got 0)"},
		{"replicas not a number", with(map[string]string{"start": "start: {docker: {image: i}, replicas: many}"}), "t.yaml:2: start.replicas: must be a whole number"},
		{"health not a path", with(map[string]string{"start": "start: {docker: {image: i}, health: ready}"}), "t.yaml:2: start.health: must be a path"},
		{"docker without image", with(map[string]string{"start": "start: {docker: {port: 80}}"}), "t.yaml:2: start.docker.image: missing"},
		{"docker bad port", with(map[string]string{"start": "start: {docker: {image: i, port: 70000}}"}), "t.yaml:2: start.docker.port: must be <= 65535"},
		{"docker unknown field", with(map[string]string{"start": "start: {docker: {image: i, volumes: [a]}}"}), "t.yaml:2: start.docker.volumes: unknown field"},
		{"command not a list", with(map[string]string{"start": "start: {docker: {image: i, command: run}}"}), "t.yaml:2: start.docker.command: must be a list"},
		{"env not a mapping", with(map[string]string{"start": "start: {docker: {image: i, env: [a]}}"}), "t.yaml:2: start.docker.env: must be a mapping"},
		{"env value not scalar", with(map[string]string{"start": "start: {docker: {image: i, env: {A: [1]}}}"}), "t.yaml:2: start.docker.env.A: must be a single value"},
		{"files not a list", with(map[string]string{"start": "start: {docker: {image: i, files: {a: b}}}"}), "t.yaml:2: start.docker.files: must be a list"},
		{"file without path", with(map[string]string{"start": "start: {docker: {image: i, files: [{content: x}]}}"}), "t.yaml:2: start.docker.files[0].path: missing"},
		{"file both sources", with(map[string]string{"start": "start: {docker: {image: i, files: [{path: /a, content: x, source: y}]}}"}), "t.yaml:2: start.docker.files[0]: give exactly one of content or source"},
		{"file source missing", with(map[string]string{"start": "start: {docker: {image: i, files: [{path: /a, source: nothere.yaml}]}}"}), "t.yaml:2: start.docker.files[0].source: cannot read it"},
		{"process without command", with(map[string]string{"start": "start: {process: {env: {A: b}}}"}), "t.yaml:2: start.process.command: missing"},
		{"process without port", with(map[string]string{"start": "start: {process: {command: [./x]}}"}), "t.yaml:2: start.process.command: must pass {{port}}"},
		{"request not mapping", with(map[string]string{"request": "request: /json"}), "t.yaml:3: request: must be a mapping"},
		{"request without client", with(map[string]string{"request": "request: {path: /x}"}), "t.yaml:3: request.client: missing"},
		{"two client fields", with(map[string]string{"request": "request: {client: {header: A, query: b}}"}), "t.yaml:3: request.client: give exactly one of header, query or body (got 2)"},
		{"unknown client field", with(map[string]string{"request": "request: {client: {cookie: a}}"}), "t.yaml:3: request.client.cookie: unknown field"},
		{"empty header", with(map[string]string{"request": `request: {client: {header: ""}}`}), "t.yaml:3: request.client.header: must not be empty"},
		{"body without client", with(map[string]string{"request": `request: {client: {body: '{"a":1}'}}`}), "t.yaml:3: request.client.body: must contain {{client}}"},
		{"body with GET", with(map[string]string{"request": `request: {method: GET, client: {body: '{"a":"{{client}}"}'}}`}), "t.yaml:3: request.method: a request with a body must be POST or PUT"},
		{"bad method", with(map[string]string{"request": "request: {method: FETCH, client: {header: A}}"}), "t.yaml:3: request.method: use GET, POST, PUT or HEAD"},
		{"path with query", with(map[string]string{"request": "request: {path: \"/x?y=1\", client: {header: A}}"}), "t.yaml:3: request.path: must be a path starting with / and without a query"},
		{"bad timeout", with(map[string]string{"request": "request: {timeout: 0s, client: {header: A}}"}), "t.yaml:3: request.timeout: must be a duration > 0"},
		{"headers not mapping", with(map[string]string{"request": "request: {headers: [a], client: {header: A}}"}), "t.yaml:3: request.headers: must be a mapping"},
		{"responses not mapping", with(map[string]string{"responses": "responses: [200]"}), "t.yaml:4: responses: must be a mapping"},
		{"no accepted", with(map[string]string{"responses": "responses: {rejected: [429]}"}), "t.yaml:4: responses.accepted: missing"},
		{"no rejected", with(map[string]string{"responses": "responses: {accepted: [200]}"}), "t.yaml:4: responses.rejected: missing"},
		{"codes not a list", with(map[string]string{"responses": "responses: {accepted: 200, rejected: [429]}"}), "t.yaml:4: responses.accepted: must be a list of status codes"},
		{"code out of range", with(map[string]string{"responses": "responses: {accepted: [200], rejected: [700]}"}), "t.yaml:4: responses.rejected[0]: must be an HTTP status"},
		{"code not a number", with(map[string]string{"responses": "responses: {accepted: [ok], rejected: [429]}"}), "t.yaml:4: responses.accepted[0]: must be a whole number"},
		{"code in two lists", with(map[string]string{"responses": "responses: {accepted: [200], rejected: [429, 200]}"}), "t.yaml:4: responses.rejected[1]: 200 is already listed in responses.accepted"},
		{"unknown responses field", with(map[string]string{"responses": "responses: {accepted: [200], rejected: [429], other: [1]}"}), "t.yaml:4: responses.other: unknown field"},
		{"clients not a list", with(map[string]string{"clients": "clients: {limit: 1}"}), "t.yaml:5: clients: must be a list"},
		{"clients empty", with(map[string]string{"clients": "clients: []"}), "t.yaml:5: clients: must be a list"},
		{"class without limit", with(map[string]string{"clients": "clients: [{window: 60s}]"}), "t.yaml:5: clients[0].limit: missing"},
		{"class limit negative", with(map[string]string{"clients": "clients: [{limit: -5, window: 60s}]"}), "t.yaml:5: clients[0].limit: must be >= 1 (got -5)"},
		{"class without window", with(map[string]string{"clients": "clients: [{limit: 5}]"}), "t.yaml:5: clients[0].window: missing"},
		{"class bad window", with(map[string]string{"clients": "clients: [{limit: 5, window: soon}]"}), "t.yaml:5: clients[0].window: must be a duration"},
		{"class short window", with(map[string]string{"clients": "clients: [{limit: 5, window: 10ms}]"}), "t.yaml:5: clients[0].window: must be at least 1s"},
		{"class windows differ", with(map[string]string{"clients": "clients: [{limit: 5, window: 60s}, {class: b, prefix: b-, limit: 5, window: 30s}]"}), "t.yaml:5: clients[1].window: every class must share"},
		{"class without prefix", with(map[string]string{"clients": "clients: [{limit: 5, window: 60s}, {class: b, limit: 5, window: 60s}]"}), "t.yaml:5: clients[1].prefix: missing"},
		{"class name twice", with(map[string]string{"clients": "clients: [{class: a, limit: 5, window: 60s}, {class: a, prefix: b-, limit: 5, window: 60s}]"}), "t.yaml:5: clients[1].class: \"a\" is declared twice"},
		{"prefix twice", with(map[string]string{"clients": "clients: [{limit: 5, window: 60s}, {class: b, prefix: p-, limit: 5, window: 60s}, {class: c, prefix: p-, limit: 5, window: 60s}]"}), "t.yaml:5: clients[2].prefix: \"p-\" is another class's prefix"},
		{"unknown class field", with(map[string]string{"clients": "clients: [{limit: 5, window: 60s, burst: 3}]"}), "t.yaml:5: clients[0].burst: unknown field"},
		{"store not mapping", with(nil, "store: redis"), "t.yaml:6: store: must be a mapping"},
		{"store without redis", with(nil, "store: {}"), "t.yaml:6: store.redis: missing"},
		{"scripts not a list", with(nil, "store: {redis: \"127.0.0.1:1\", scripts: get}"), "t.yaml:6: store.scripts: must be a list"},
		{"store not loopback", with(nil, "store: {redis: \"10.1.1.1:6379\"}"), "t.yaml:6: store.redis: must be \"managed\" or a loopback host:port"},
		{"store no port", with(nil, "store: {redis: localhost}"), "t.yaml:6: store.redis: must be \"managed\""},
		{"metrics not mapping", with(nil, "metrics: /metrics"), "t.yaml:6: metrics: must be a mapping"},
		{"metrics without a name", with(nil, "metrics: {path: /m}"), "t.yaml:6: metrics: names no metric"},
		{"metrics bad path", with(nil, "metrics: {path: m, blind: b_total}"), "t.yaml:6: metrics.path: must be a path"},
		{"metrics bad name", with(nil, "metrics: {exchanges: rl-sync}"), "t.yaml:6: metrics.exchanges: must be a Prometheus metric name"},
		{"metrics unknown field", with(nil, "metrics: {exchanges: a, errors: b}"), "t.yaml:6: metrics.errors: unknown field"},
		{"metrics bad interval", with(nil, "metrics: {exchanges: a, sync_interval: often}"), "t.yaml:6: metrics.sync_interval: must be a duration > 0"},
		{"faults not mapping", with(nil, "faults: kill"), "t.yaml:6: faults: must be a mapping"},
		{"faults unknown field", with(nil, "faults: {store_delay: 1s, kill: no}"), "t.yaml:6: faults.kill: unknown field"},
		{"killed node blame", with(nil, "faults: {killed_node: nobody}"), "t.yaml:6: faults.killed_node: use harness (a refused connection to a killed node is the harness's routing error) or limiter"},
		{"killed node empty", with(nil, `faults: {killed_node: ""}`), "t.yaml:6: faults.killed_node: must not be empty"},
		{"store delay not a duration", with(nil, "faults: {store_delay: slow}"), "t.yaml:6: faults.store_delay: must be a duration > 0"},
		{"store delay zero", with(nil, "faults: {store_delay: 0s}"), "t.yaml:6: faults.store_delay: must be a duration > 0"},
		{"store delay without a managed store", with(nil, "faults: {store_delay: 100ms}"), "t.yaml:6: faults.store_delay: store-slow slows a store the harness runs"},
		{"managed store for url", with(nil, "store: {redis: managed}"), "t.yaml:6: store.redis: a url target is not started by the harness"},
		{"clock not a mapping", with(nil, "clock: decided"), "t.yaml:6: clock: must be a mapping"},
		{"clock with both", with(nil, "clock: {decided_at: X-Decided, backend: record}"), "t.yaml:6: clock: give exactly one of decided_at"},
		{"clock header not a name", with(nil, "clock: {decided_at: \"X Decided\"}"), "t.yaml:6: clock.decided_at: must be an HTTP header name"},
		{"clock backend not record", with(nil, "clock: {backend: yes}"), "t.yaml:6: clock.backend: use record"},
		{"clock backend for url", with(nil, "clock: {backend: record}"), "t.yaml:6: clock.backend: a url target is not started by the harness"},
		{"backend not passed", with(map[string]string{"start": "start: {process: {command: [./l, \"{{listen}}\"]}}"}, "clock: {backend: record}"),
			"t.yaml:6: clock.backend: record, but nothing passes {{backend}} to the limiter"},
		{"backend not declared", with(map[string]string{"start": "start: {process: {command: [./l, \"{{listen}}\", \"{{backend}}\"]}}"}),
			"t.yaml:2: start: {{backend}} is the recording backend the harness runs: declare clock: {backend: record}"},
		{"topology without a managed store", with(nil, `topology: "a:1:1ms"`), "t.yaml:6: topology: zones are links to the store the harness runs"},
		{"topology bad zone", with(nil, `topology: "a:1:soon"`), `t.yaml:6: topology: --zones "a:1:soon": zone "a:1:soon": latency "soon"`},
		{"topology replicas disagree", with(map[string]string{"start": "start: {process: {command: [./l]}, replicas: 2}"}, "store: {redis: managed}", `topology: "a:1:1ms,b:2:40ms"`),
			"topology: the zones hold 3 replicas, but start.replicas is 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.doc))
			if err == nil {
				t.Fatalf("no error for\n%s", c.doc)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q\nfile:\n%s", err, c.want, c.doc)
			}
		})
	}
}

// TestParseErrorsAll: a file with several mistakes gets all of them, each on its own line.
func TestParseErrorsAll(t *testing.T) {
	doc := "name: x\nstart: {url: \"http://127.0.0.1:1\"}\nrequest: {client: {header: A}}\nresponses: {accepted: [200], rejected: [429]}\nclients:\n  - limit: 0\n    window: 1h\n  - class: b\n    limit: 5\n    window: 1m\n"
	_, err := Parse("t.yaml", []byte(doc))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"t.yaml:6: clients[0].limit: must be >= 1", "t.yaml:8: clients[1].prefix: missing", "t.yaml:10: clients[1].window: every class must share"}
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d: %q, want prefix %q", i, lines[i], w)
		}
	}
}
