package target

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/edgeproof/rlharness/harness/topology"
)

// Load reads and checks a target description.
func Load(path string) (*Target, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the target file: %w", err)
	}
	return Parse(path, b)
}

// Parse checks a target description read from file (the name errors carry; relative file
// sources are read from its directory). Every mistake found is reported, each as
// file:line: field: what is wrong.
func Parse(file string, b []byte) (*Target, error) {
	p := &parser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: the file is empty: it needs name, start, request, responses and clients", file)
	}
	t := &Target{File: file, Dir: filepath.Dir(file)}
	root := p.fields(doc.Content[0], "", true, "name", "start", "request", "responses", "clients", "store", "algorithm", "metrics", "faults", "clock", "topology")
	if root == nil {
		return nil, p.err()
	}
	t.Name = p.str(root, "name", "", true)
	if t.Name != "" && strings.ContainsAny(t.Name, "/ \t") {
		p.errf(root["name"], "name", "use letters, digits, '-', '_' and '.' (got %q): it names the scenarios", t.Name)
	}
	t.Start = p.start(root["start"], t.Dir)
	t.Request = p.request(root["request"])
	t.Responses = p.responses(root["responses"])
	t.Classes = p.classes(root["clients"])
	t.Store = p.store(root["store"], t.Start.Kind)
	if given := t.Start.given(); strings.Contains(given, VarRedis) && !t.Store.Managed {
		p.errf(root["start"], "start", "%s is the Redis the harness runs for the target: declare store: {redis: %s}, or leave %s out (the harness starts no Redis for a target without a managed store)",
			VarRedis, StoreManaged, VarRedis)
	}
	t.Clock = p.clock(root["clock"], t.Start)
	if given := t.Start.given(); strings.Contains(given, VarBackend) != t.Clock.Backend {
		if t.Clock.Backend {
			p.errf(root["clock"], "clock.backend", "%s, but nothing passes %s to the limiter: proxy what it admits there (in its command, env or a file)", ClockRecord, VarBackend)
		} else {
			p.errf(root["start"], "start", "%s is the recording backend the harness runs: declare clock: {backend: %s}, or leave %s out", VarBackend, ClockRecord, VarBackend)
		}
	}
	t.Metrics = p.metrics(root["metrics"])
	t.Faults = p.faults(root["faults"], t.Store)
	t.Algorithm = p.str(root, "algorithm", "", false)
	t.Topology = p.topology(root["topology"], t)
	if n := root["algorithm"]; n != nil && !slices.Contains([]string{"fixed_window", "sliding_window", "token_bucket", "gcra"}, t.Algorithm) {
		p.errf(n, "algorithm", "use fixed_window, sliding_window, token_bucket or gcra (got %q)", t.Algorithm)
	}
	if missing := p.missing(doc.Content[0], root, "name", "start", "request", "responses", "clients"); missing {
		return nil, p.err()
	}
	return t, p.err()
}

type parser struct {
	file string
	errs []error
}

func (p *parser) errf(n *yaml.Node, field, format string, args ...any) {
	line := 1
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s: %s", p.file, line, field, fmt.Sprintf(format, args...)))
}

func (p *parser) err() error { return errors.Join(p.errs...) }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fields reads a mapping with the given keys; unknown and repeated keys are errors. It
// returns nil (and records why) if n is not a mapping.
func (p *parser) fields(n *yaml.Node, path string, root bool, known ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		what := path
		if root {
			what = "the file"
		}
		p.errf(n, orTop(what), "must be a mapping of %s", strings.Join(known, ", "))
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			p.errf(k, join(path, k.Value), "unknown field: use %s", strings.Join(known, ", "))
		case out[k.Value] != nil:
			p.errf(k, join(path, k.Value), "given twice")
		default:
			out[k.Value] = v
		}
	}
	return out
}

func orTop(s string) string {
	if s == "" {
		return "the file"
	}
	return s
}

// missing records each required key m lacks.
func (p *parser) missing(n *yaml.Node, m map[string]*yaml.Node, keys ...string) bool {
	lacks := false
	for _, k := range keys {
		if m[k] == nil {
			p.errf(n, k, "missing")
			lacks = true
		}
	}
	return lacks
}

func (p *parser) scalar(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, field, "must be a single value")
		return "", false
	}
	return n.Value, true
}

// str is m[key] as a string; required says a missing or empty value is an error.
func (p *parser) str(m map[string]*yaml.Node, key, path string, required bool) string {
	n := m[key]
	if n == nil {
		return ""
	}
	v, ok := p.scalar(n, join(path, key))
	if ok && required && v == "" {
		p.errf(n, join(path, key), "must not be empty")
	}
	return v
}

func (p *parser) integer(n *yaml.Node, field string, min int) int {
	v, ok := p.scalar(n, field)
	if !ok {
		return 0
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		p.errf(n, field, "must be a whole number (got %q)", v)
		return 0
	}
	if i < min {
		p.errf(n, field, "must be >= %d (got %d)", min, i)
	}
	return i
}

func (p *parser) strList(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, field, "must be a list, as [a, b]")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		if v, ok := p.scalar(e, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, v)
		}
	}
	return out
}

func (p *parser) strMap(n *yaml.Node, field string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "must be a mapping of names to values")
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			p.errf(k, join(field, k.Value), "given twice")
		}
		if s, ok := p.scalar(v, join(field, k.Value)); ok {
			out[k.Value] = s
		}
	}
	return out
}

func (p *parser) start(n *yaml.Node, dir string) Start {
	var s Start
	if n == nil {
		return s
	}
	m := p.fields(n, "start", false, StartDocker, StartProcess, StartURL, "replicas", "health")
	if m == nil {
		return s
	}
	var kinds []string
	for _, k := range []string{StartDocker, StartProcess, StartURL} {
		if m[k] != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		p.errf(n, "start", "give exactly one of docker, process or url (got %d: %s)", len(kinds), strings.Join(kinds, ", "))
		return s
	}
	s.Kind = kinds[0]
	s.Replicas, s.Health = 1, "/"
	if r := m["replicas"]; r != nil {
		s.Replicas = p.integer(r, "start.replicas", 1)
		if s.Kind == StartURL && s.Replicas != 1 {
			p.errf(r, "start.replicas", "a url target is one address; list no replicas (got %d)", s.Replicas)
		}
	}
	if h := m["health"]; h != nil {
		s.Health = p.str(m, "health", "start", true)
		if !strings.HasPrefix(s.Health, "/") {
			p.errf(h, "start.health", "must be a path starting with / (got %q)", s.Health)
		}
	}
	switch s.Kind {
	case StartURL:
		v, _ := p.scalar(m[StartURL], "start.url")
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			p.errf(m[StartURL], "start.url", "must be an http:// or https:// URL (got %q)", v)
		case !loopback(u):
			p.errf(m[StartURL], "start.url", "must be on loopback, 127.0.0.1 or localhost (got %q): the harness sends traffic to this machine only", u.Host)
		default:
			s.URL = strings.TrimSuffix(v, "/")
		}
	case StartDocker:
		d := p.fields(m[StartDocker], "start.docker", false, "image", "command", "env", "port", "files")
		if d == nil {
			return s
		}
		s.Image = p.str(d, "image", "start.docker", true)
		if d["image"] == nil {
			p.errf(m[StartDocker], "start.docker.image", "missing: name a local image (the harness pulls nothing)")
		}
		s.Port = 8080
		if n := d["port"]; n != nil {
			s.Port = p.integer(n, "start.docker.port", 1)
			if s.Port > 65535 {
				p.errf(n, "start.docker.port", "must be <= 65535 (got %d)", s.Port)
			}
		}
		p.commandEnvFiles(m[StartDocker], d, "start.docker", dir, &s, false)
	case StartProcess:
		d := p.fields(m[StartProcess], "start.process", false, "command", "env", "files")
		if d == nil {
			return s
		}
		p.commandEnvFiles(m[StartProcess], d, "start.process", dir, &s, true)
		given := s.given()
		if len(s.Command) > 0 && !strings.Contains(given, VarPort) && !strings.Contains(given, VarListen) {
			p.errf(d["command"], "start.process.command", "must pass %s or %s (in the command, env or a file) so each replica listens on its own port", VarPort, VarListen)
		}
	}
	return s
}

func fileContents(files []File) string {
	var b strings.Builder
	for _, f := range files {
		b.Write(f.Content)
	}
	return b.String()
}

// placeholder is a {{name}} the harness might fill: lower-case letters, digits, '_' and '.'.
var placeholder = regexp.MustCompile(`\{\{[a-z0-9_.]+\}\}`)

// replicaVars are the placeholders of a command, env value and file; eachVars those of a
// file's repeated lines.
var (
	replicaVars = []string{VarPort, VarHost, VarListen, VarRedis, VarBackend, VarNode, VarNodes, VarPeerPort, VarPeers, VarPeerName}
	eachVars    = []string{VarEachNode, VarEachPeer, VarEachPeerPort, VarEachListen}
)

// placeholders records each {{name}} in s the harness does not fill there: a misspelt one
// would reach the limiter as it is. A file (inFile) may repeat a line per replica with
// {{each.*}}; a command or env value may not (it has no lines).
func (p *parser) placeholders(n *yaml.Node, field, s string, inFile bool) {
	for _, v := range placeholder.FindAllString(s, -1) {
		switch {
		case slices.Contains(replicaVars, v), inFile && slices.Contains(eachVars, v):
		case slices.Contains(eachVars, v):
			p.errf(n, field, "%s repeats a line of a file once per replica; a command or env value has no lines: use %s (every peer, comma-separated)", v, VarPeers)
		case v == VarClient:
			p.errf(n, field, "%s is a client's ID, filled in request.client.body only; a replica is started for every client", v)
		default:
			p.errf(n, field, "unknown placeholder %s: use %s, or in a file's lines %s", v, strings.Join(replicaVars, " "), strings.Join(eachVars, " "))
		}
	}
}

func envValues(env map[string]string) string {
	var b strings.Builder
	for _, v := range env {
		b.WriteString(v)
	}
	return b.String()
}

func (p *parser) commandEnvFiles(parent *yaml.Node, d map[string]*yaml.Node, path, dir string, s *Start, needCommand bool) {
	if n := d["command"]; n != nil {
		s.Command = p.strList(n, path+".command")
		for i, a := range s.Command {
			p.placeholders(n, fmt.Sprintf("%s.command[%d]", path, i), a, false)
		}
	}
	if needCommand && len(s.Command) == 0 {
		p.errf(parent, path+".command", "missing: give the executable and its arguments, as [./mylimiter, --port, \"{{port}}\"]")
	}
	if n := d["env"]; n != nil {
		s.Env = p.strMap(n, path+".env")
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			p.placeholders(n, path+".env."+k, s.Env[k], false)
		}
	}
	if n := d["files"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			p.errf(n, path+".files", "must be a list of {path, content} or {path, source}")
			return
		}
		for i, e := range n.Content {
			field := fmt.Sprintf("%s.files[%d]", path, i)
			f := p.fields(e, field, false, "path", "content", "source")
			if f == nil {
				continue
			}
			file := File{Path: p.str(f, "path", field, true)}
			if f["path"] == nil {
				p.errf(e, field+".path", "missing")
			}
			switch {
			case f["content"] != nil && f["source"] != nil, f["content"] == nil && f["source"] == nil:
				p.errf(e, field, "give exactly one of content or source")
			case f["content"] != nil:
				file.Content = []byte(p.str(f, "content", field, false))
			default:
				src := p.str(f, "source", field, true)
				if !filepath.IsAbs(src) {
					src = filepath.Join(dir, src)
				}
				b, err := os.ReadFile(src)
				if err != nil {
					p.errf(f["source"], field+".source", "cannot read it: %v", err)
				}
				file.Content = b
			}
			p.placeholders(e, field, string(file.Content), true)
			s.Files = append(s.Files, file)
		}
	}
}

func (p *parser) request(n *yaml.Node) Request {
	r := Request{Method: http.MethodGet, Path: "/"}
	if n == nil {
		return r
	}
	m := p.fields(n, "request", false, "method", "path", "headers", "client", "timeout")
	if m == nil {
		return r
	}
	if v := p.str(m, "path", "request", true); v != "" {
		r.Path = v
		if !strings.HasPrefix(v, "/") || strings.Contains(v, "?") {
			p.errf(m["path"], "request.path", "must be a path starting with / and without a query (got %q); name the client with client.query", v)
		}
	}
	if h := m["headers"]; h != nil {
		r.Headers = p.strMap(h, "request.headers")
	}
	if n := m["timeout"]; n != nil {
		v, _ := p.scalar(n, "request.timeout")
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			p.errf(n, "request.timeout", "must be a duration > 0, as 15s (got %q)", v)
		}
		r.Timeout = d
	}
	c := m["client"]
	if c == nil {
		p.errf(n, "request.client", "missing: give one of header, query or body")
		return r
	}
	cm := p.fields(c, "request.client", false, "header", "query", "body")
	if cm == nil {
		return r
	}
	if len(cm) != 1 {
		p.errf(c, "request.client", "give exactly one of header, query or body (got %d)", len(cm))
		return r
	}
	r.ClientHeader = p.str(cm, "header", "request.client", true)
	r.ClientQuery = p.str(cm, "query", "request.client", true)
	r.Body = p.str(cm, "body", "request.client", true)
	if b := cm["body"]; b != nil && !strings.Contains(r.Body, VarClient) {
		p.errf(b, "request.client.body", "must contain %s where the client's ID goes", VarClient)
	}
	method := http.MethodGet
	if r.Body != "" {
		method = http.MethodPost
	}
	if v := p.str(m, "method", "request", true); v != "" {
		method = strings.ToUpper(v)
		if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodHead}, method) {
			p.errf(m["method"], "request.method", "use GET, POST, PUT or HEAD (got %q)", v)
		}
		if r.Body != "" && (method == http.MethodGet || method == http.MethodHead) {
			p.errf(m["method"], "request.method", "a request with a body must be POST or PUT (got %s)", method)
		}
	}
	r.Method = method
	return r
}

func (p *parser) codes(m map[string]*yaml.Node, key string, seen map[int]string) []int {
	n := m[key]
	if n == nil {
		return nil
	}
	field := "responses." + key
	if n.Kind != yaml.SequenceNode {
		p.errf(n, field, "must be a list of status codes, as [200]")
		return nil
	}
	var out []int
	for i, e := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		c := p.integer(e, f, 100)
		if c > 599 {
			p.errf(e, f, "must be an HTTP status, 100 to 599 (got %d)", c)
		}
		if other, ok := seen[c]; ok {
			p.errf(e, f, "%d is already listed in responses.%s", c, other)
		}
		seen[c] = key
		out = append(out, c)
	}
	return out
}

func (p *parser) responses(n *yaml.Node) Responses {
	var r Responses
	if n == nil {
		return r
	}
	m := p.fields(n, "responses", false, "accepted", "rejected", "error", "json")
	if m == nil {
		return r
	}
	seen := map[int]string{}
	r.Accepted = p.codes(m, "accepted", seen)
	r.Rejected = p.codes(m, "rejected", seen)
	r.Error = p.codes(m, "error", seen)
	if j := m["json"]; j != nil {
		r.JSON = p.jsonRule(j)
	}
	if len(r.Accepted) == 0 {
		p.errf(n, "responses.accepted", "missing: list the statuses of an accepted request, as [200]")
	}
	// With a JSON rule the body says rejected; a status may say it too, but need not.
	if len(r.Rejected) == 0 && m["json"] == nil {
		p.errf(n, "responses.rejected", "missing: list the statuses of a rejected request, as [429]")
	}
	return r
}

func (p *parser) classes(n *yaml.Node) []Class {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "clients", "must be a list of classes, as [{class: default, limit: 600, window: 60s}]")
		return nil
	}
	var out []Class
	names := map[string]bool{}
	prefixes := map[string]bool{}
	for i, e := range n.Content {
		field := fmt.Sprintf("clients[%d]", i)
		m := p.fields(e, field, false, "class", "prefix", "limit", "window")
		if m == nil {
			continue
		}
		c := Class{Name: p.str(m, "class", field, true), Prefix: p.str(m, "prefix", field, false)}
		if c.Name == "" {
			c.Name = "default"
		}
		if names[c.Name] {
			p.errf(e, field+".class", "%q is declared twice", c.Name)
		}
		names[c.Name] = true
		if i > 0 && c.Prefix == "" {
			p.errf(e, field+".prefix", "missing: every class but the first (the default) needs a prefix that its client IDs start with")
		}
		if prefixes[c.Prefix] && c.Prefix != "" {
			p.errf(m["prefix"], field+".prefix", "%q is another class's prefix", c.Prefix)
		}
		prefixes[c.Prefix] = true
		if l := m["limit"]; l != nil {
			c.Limit = p.integer(l, field+".limit", 1)
		} else {
			p.errf(e, field+".limit", "missing: the requests per window this class is declared to get")
		}
		if w := m["window"]; w != nil {
			v, _ := p.scalar(w, field+".window")
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				p.errf(w, field+".window", "must be a duration, as 60s or 1m (got %q)", v)
			case d < time.Second:
				p.errf(w, field+".window", "must be at least 1s (got %s)", d)
			case len(out) > 0 && out[0].Window != 0 && d != out[0].Window:
				p.errf(w, field+".window", "every class must share the first class's window (%s, got %s): the run aligns to one window edge", out[0].Window, d)
			}
			c.Window = d
		} else {
			p.errf(e, field+".window", "missing: the window the limit is per, as 60s")
		}
		out = append(out, c)
	}
	return out
}

func (p *parser) store(n *yaml.Node, kind string) Store {
	var s Store
	if n == nil {
		return s
	}
	m := p.fields(n, "store", false, "redis", "scripts")
	if m != nil && m["scripts"] != nil {
		for _, c := range p.strList(m["scripts"], "store.scripts") {
			s.Scripts = append(s.Scripts, strings.ToLower(c))
		}
	}
	if m == nil || m["redis"] == nil {
		if m != nil {
			p.errf(n, "store.redis", "missing: %q or a loopback host:port", StoreManaged)
		}
		return s
	}
	v := p.str(m, "redis", "store", true)
	if v == StoreManaged {
		s.Managed = true
		if kind == StartURL {
			p.errf(m["redis"], "store.redis", "a url target is not started by the harness, so it cannot be given a managed Redis: give the address of the one it uses")
		}
		return s
	}
	host, port, err := splitHostPort(v)
	if err != nil || !(host == "localhost" || strings.HasPrefix(host, "127.")) || port < 1 || port > 65535 {
		p.errf(m["redis"], "store.redis", "must be %q or a loopback host:port, as 127.0.0.1:6379 (got %q)", StoreManaged, v)
		return s
	}
	s.Redis = v
	return s
}

// clock reads the target's exact clock: clock: {decided_at: HEADER} or {backend: record}.
func (p *parser) clock(n *yaml.Node, start Start) Clock {
	var c Clock
	if n == nil {
		return c
	}
	m := p.fields(n, "clock", false, "decided_at", "backend")
	if m == nil {
		return c
	}
	if len(m) != 1 {
		p.errf(n, "clock", "give exactly one of decided_at (the header your limiter's answers say when it decided in) or backend: %s (got %d)", ClockRecord, len(m))
		return c
	}
	if h := m["decided_at"]; h != nil {
		c.DecidedAt = p.str(m, "decided_at", "clock", true)
		if c.DecidedAt != "" && !validHeaderName(c.DecidedAt) {
			p.errf(h, "clock.decided_at", "must be an HTTP header name, as X-RateLimit-Decided-At (got %q)", c.DecidedAt)
		}
	}
	if b := m["backend"]; b != nil {
		v := p.str(m, "backend", "clock", true)
		switch {
		case v != ClockRecord:
			p.errf(b, "clock.backend", "use %s: the harness runs a recording backend at %s (got %q)", ClockRecord, VarBackend, v)
		case start.Kind == StartURL:
			p.errf(b, "clock.backend", "a url target is not started by the harness, so it cannot be given %s: start it with docker or process", VarBackend)
		default:
			c.Backend = true
		}
	}
	return c
}

// validHeaderName is an HTTP field name: a token, letters, digits and !#$%&'*+-.^_`|~.
func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}

// topology reads the zones the target's replicas are placed in: the --zones form as one
// string, or a list of zones (topology.Decode). The zones hold the file's replicas and link
// them to the store the harness runs.
func (p *parser) topology(n *yaml.Node, t *Target) topology.Topology {
	if n == nil {
		return topology.Topology{}
	}
	top, err := topology.Decode(n)
	switch {
	case err != nil:
		p.errf(n, "topology", "%v", err)
	case !t.Store.Managed:
		p.errf(n, "topology", "zones are links to the store the harness runs: give store: {redis: managed}, or leave topology out")
	case top.Replicas() != t.Start.Replicas:
		p.errf(n, "topology", "the zones hold %d replicas, but start.replicas is %d: make them agree", top.Replicas(), t.Start.Replicas)
	}
	return top
}

func (p *parser) faults(n *yaml.Node, store Store) Faults {
	f := Faults{KilledNode: BlameHarness}
	if n == nil {
		return f
	}
	m := p.fields(n, "faults", false, "killed_node", "store_delay")
	if m == nil {
		return f
	}
	if k := m["killed_node"]; k != nil {
		f.KilledNode = p.str(m, "killed_node", "faults", true)
		if f.KilledNode != BlameHarness && f.KilledNode != BlameLimiter {
			p.errf(k, "faults.killed_node", "use %s (a refused connection to a killed node is the harness's routing error) or %s (it is the limiter's) (got %q)",
				BlameHarness, BlameLimiter, f.KilledNode)
		}
	}
	if k := m["store_delay"]; k != nil {
		v, _ := p.scalar(k, "faults.store_delay")
		d, err := time.ParseDuration(v)
		switch {
		case err != nil || d <= 0:
			p.errf(k, "faults.store_delay", "must be a duration > 0, as 200ms (got %q)", v)
		case !store.Managed:
			p.errf(k, "faults.store_delay", "store-slow slows a store the harness runs: give store: {redis: managed}, or leave store_delay out")
		}
		f.StoreDelay = d
	}
	return f
}

// metricNames are the metrics block's fields that name a metric.
var metricNames = []string{"exchanges", "exchange_duration", "exchange_clients", "view_age", "blind", "sync_lag"}

func (p *parser) metrics(n *yaml.Node) *Metrics {
	if n == nil {
		return nil
	}
	m := p.fields(n, "metrics", false, append([]string{"path", "sync_interval"}, metricNames...)...)
	if m == nil {
		return nil
	}
	out := &Metrics{Path: p.str(m, "path", "metrics", false)}
	if out.Path == "" {
		out.Path = "/metrics"
	} else if !strings.HasPrefix(out.Path, "/") || strings.ContainsAny(out.Path, "?# ") {
		p.errf(m["path"], "metrics.path", "must be a path starting with / and without a query (got %q)", out.Path)
	}
	names := make([]string, len(metricNames))
	named := false
	for i, k := range metricNames {
		names[i] = p.str(m, k, "metrics", true)
		if v := names[i]; v != "" {
			named = true
			if !validMetricName(v) {
				p.errf(m[k], "metrics."+k, "must be a Prometheus metric name, as rl_sync_total (got %q)", v)
			}
		}
	}
	out.Exchanges, out.ExchangeDuration, out.ExchangeClients, out.ViewAge, out.Blind, out.SyncLag =
		names[0], names[1], names[2], names[3], names[4], names[5]
	if !named {
		p.errf(n, "metrics", "names no metric: give at least one of %s", strings.Join(metricNames, ", "))
	}
	if k := m["sync_interval"]; k != nil {
		v, _ := p.scalar(k, "metrics.sync_interval")
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			p.errf(k, "metrics.sync_interval", "must be a duration > 0, as 200ms (got %q)", v)
		}
		out.SyncInterval = d
	}
	return out
}

// validMetricName is Prometheus's classic metric name: [a-zA-Z_:][a-zA-Z0-9_:]*.
func validMetricName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func splitHostPort(v string) (string, int, error) {
	h, ps, ok := strings.Cut(v, ":")
	if !ok {
		return "", 0, errors.New("no port")
	}
	port, err := strconv.Atoi(ps)
	return h, port, err
}
