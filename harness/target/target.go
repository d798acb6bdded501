// Package target reads a target description: a YAML file that tells the harness how to
// start a rate limiter it did not write (a local Docker image, a local process, or a URL
// already answering on loopback), how a request names its client, which statuses mean
// accepted, rejected and error, the limit and window each client class is declared to
// have, and where its counter store is. With it every scenario, check and report of
// `harness loadtest` runs against that limiter instead of the built-in replica.
//
// A mistake in the file is an error that names file:line and the field, as
// `envoy.yaml:14: clients[0].limit: must be > 0 (got -5)`.
package target

import (
	"bytes"
	"encoding/json"
	"github.com/edgeproof/rlharness/harness/topology"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// How a target is started: exactly one of them.
const (
	StartDocker  = "docker"  // a local image, run by Testcontainers
	StartProcess = "process" // a local executable, run as a child process
	StartURL     = "url"     // already running; the harness only sends to it
)

// StoreManaged is the store's redis value that asks the harness to run Redis itself and
// pass its address in {{redis}}: then the store-outage scenarios can stop and pause it.
const StoreManaged = "managed"

// Placeholders that Env, Command and file contents may use; the harness fills them per
// replica as it starts it.
const (
	VarPort   = "{{port}}"   // the port the replica must listen on (inside the container on a bridge network)
	VarHost   = "{{host}}"   // the address to listen on: 0.0.0.0 in a container on a bridge network, 127.0.0.1 otherwise
	VarListen = "{{listen}}" // host:port to listen on: ":port" in a container on a bridge network, "127.0.0.1:port" otherwise
	VarRedis  = "{{redis}}"  // host:port of Redis as the replica reaches it
	// VarBackend is host:port of the recording backend the harness runs (clock: {backend:
	// record}): a limiter that proxies sends what it admits there.
	VarBackend = "{{backend}}"
	VarNode    = "{{node}}"   // the replica's index, 0-based: 0 … nodes-1
	VarNodes   = "{{nodes}}"  // how many replicas the harness starts (start.replicas)
	VarClient  = "{{client}}" // in a request body: the client's ID, JSON-escaped
	// VarPeerPort is a second port of the replica's own, free like {{port}}, for a limiter whose
	// replicas talk to each other (HAProxy's peers, a gossip protocol): it listens there for them.
	VarPeerPort = "{{peer_port}}"
	// VarPeers is every replica's peer address, host:peer_port, in node order and its own
	// included, joined by commas: a seed list or a static member list.
	VarPeers = "{{peers}}"
	// VarPeerName is the replica's name as its peers know it, for a limiter whose nodes find
	// each other on their own and each announce one address to all the others (gubernator's
	// GUBER_ADVERTISE_ADDRESS over memberlist): announce {{peer_name}}:{{peer_port}} and listen
	// on {{peer_port}}. The harness makes every replica resolve the name to where IT reaches
	// this one (its container's hosts file), so a zone's link can stand between two nodes
	// although both are told the same address (docs/zones.md).
	VarPeerName = "{{peer_name}}"
)

// Placeholders of a repeated line: in a file's contents, a line that holds one of them is
// written once per replica, in node order (its own included), each time with that
// replica's values, so a config file can list every member (HAProxy's `peer` lines, an
// upstream's `server` lines).
const (
	VarEachNode     = "{{each.node}}"      // the listed replica's index
	VarEachPeer     = "{{each.peer}}"      // its peer address, host:peer_port
	VarEachPeerPort = "{{each.peer_port}}" // its peer port
	VarEachListen   = "{{each.listen}}"    // its HTTP address, host:port, as the other replicas reach it
)

// eachPrefix starts every placeholder of a repeated line.
const eachPrefix = "{{each."

// Target is a parsed target description.
type Target struct {
	// Name names the target's scenarios and its rows in the report.
	Name string
	// File is the path it was read from; Dir its directory (relative paths start there).
	File, Dir string
	// Start says how the harness brings the target up.
	Start Start
	// Request says how a request is sent and how it names the client.
	Request Request
	// Responses maps statuses to decisions.
	Responses Responses
	// Classes are the client classes and their declared limits; Classes[0] is the default,
	// which the background population belongs to.
	Classes []Class
	// Store is where the target keeps its counters; empty if it keeps them to itself.
	Store Store
	// Metrics says where the target's replicas expose Prometheus metrics and which of them
	// describe its sync with the store; nil when the file names none, and the report's
	// sync health panel then says "not available".
	Metrics *Metrics
	// Faults says how the fault scenarios treat the target (docs/faults.md); its zero value
	// is the harness's defaults.
	Faults Faults
	// Clock is the exact clock the target gives, if any: its answers' decision time, or a
	// recording backend behind it (docs/targets.md#clock).
	Clock Clock
	// Topology places the target's replicas in zones, each with its own link to the managed
	// store (its topology section, docs/zones.md); zero where the file declares none.
	Topology topology.Topology
	// Algorithm is what the target says it does (fixed_window, sliding_window,
	// token_bucket, gcra), so that the run tests the documents' claim about that algorithm;
	// empty if it says nothing.
	Algorithm string
}

// Start is how a target comes up.
type Start struct {
	Kind string // StartDocker, StartProcess or StartURL
	// Image is the Docker image (docker).
	Image string
	// Command is the container's command (docker, optional) or the executable and its
	// arguments (process). Placeholders allowed.
	Command []string
	// Env is added to the environment of every replica. Placeholders allowed.
	Env map[string]string
	// Port is the HTTP port inside the container on a bridge network (docker); default 8080.
	Port int
	// Files are written into each container (docker) or the run's directory (process)
	// before it starts.
	Files []File
	// URL is where an already running target answers (url); loopback only.
	URL string
	// Replicas is how many copies to start (docker, process); default 1.
	Replicas int
	// Health is the path that answers 200 once a replica is ready; default "/".
	Health string
}

// Peered reports whether the replicas are told where their peers are ({{peers}},
// {{each.peer}} or {{each.peer_port}} in the command, the environment or a file) or announce
// themselves by the name the harness gives them ({{peer_name}}): the harness can then put a
// link between two zones' nodes (a topology's links between nodes), since each replica
// reaches the others where it is told to, or where their names lead it.
func (s Start) Peered() bool {
	given := s.given()
	return strings.Contains(given, VarPeers) || strings.Contains(given, VarEachPeer) || strings.Contains(given, VarEachPeerPort) || s.Named()
}

// Named reports whether the replicas announce themselves to their peers by name
// ({{peer_name}}): every replica must then resolve each name on its own (a container's
// hosts file), which a local process cannot.
func (s Start) Named() bool { return strings.Contains(s.given(), VarPeerName) }

// given is everything the replicas are given, run together: the command, the environment's
// values and the files' contents, for asking which placeholders any of them holds.
func (s Start) given() string {
	return strings.Join(s.Command, " ") + envValues(s.Env) + fileContents(s.Files)
}

// File is one file given to the target.
type File struct {
	Path    string // inside the container (docker) or relative to the run's directory (process)
	Content []byte // placeholders allowed
}

// Request is how the harness sends a decision request.
type Request struct {
	Method  string            // GET, or POST when Body is set
	Path    string            // default "/"
	Headers map[string]string // sent with every request
	// ClientHeader, ClientQuery or Body (exactly one) names the client.
	ClientHeader string
	ClientQuery  string
	Body         string // a template with {{client}}
	// Timeout is how long a request may take before it counts as a timeout error; 0 is
	// the harness's default (5 s).
	Timeout time.Duration
}

// Responses says what a status means. Any status in none of the lists, and every
// transport failure, is an error.
type Responses struct {
	Accepted, Rejected, Error []int
	// JSON, when set, reads the decision of a response with an accepted status from its
	// body (Decide).
	JSON *JSONRule
}

// Verdict is what a response amounts to.
type Verdict uint8

// Verdicts of a status.
const (
	Accepted Verdict = iota + 1
	Rejected
	Error
)

// Of says what status code means for this target.
func (r Responses) Of(code int) Verdict {
	switch {
	case slices.Contains(r.Accepted, code):
		return Accepted
	case slices.Contains(r.Rejected, code):
		return Rejected
	}
	return Error
}

// Class is a client class and what it is declared to get.
type Class struct {
	Name   string
	Prefix string // IDs of this class's clients start with it ("" for the default class)
	Limit  int
	Window time.Duration
}

// Store is where the target keeps its counters.
type Store struct {
	// Managed: the harness runs Redis and passes its address in {{redis}}; the store
	// scenarios stop and pause it.
	Managed bool
	// Redis is the address of a store the harness does not run (host:port on loopback):
	// read for its command counts only.
	Redis string
	// Scripts are the commands the target's Lua scripts call inside Redis (lower case): the
	// store's work, counted in its ops but not in its round trips.
	Scripts []string
}

// ClockRecord is clock.backend's one value: the harness runs a recording backend for the
// limiter to proxy to ({{backend}}) and records when each admitted request reached it.
const ClockRecord = "record"

// Clock is a target's exact clock: at most one of its fields is set.
type Clock struct {
	// DecidedAt is the response header in which the limiter says when it decided each
	// request, in Unix nanoseconds on its clock (the built-in replica's
	// X-RateLimit-Decided-At).
	DecidedAt string
	// Backend says the limiter proxies what it admits to the recording backend the harness
	// runs ({{backend}}), which records when each request reached it.
	Backend bool
}

// Who answers for a refused connection to a node the harness killed (Faults.KilledNode).
const (
	// BlameHarness: the harness routes each request to a node itself, so a request it sent to
	// a node it had killed is its own routing's error, reported apart and not held against
	// the limiter (the default).
	BlameHarness = "harness"
	// BlameLimiter: the target promises that a dead node is not the client's problem (it
	// routes its clients itself, or says its clients retry elsewhere): every refusal is the
	// limiter's error.
	BlameLimiter = "limiter"
)

// Faults is the target's say in the fault scenarios.
type Faults struct {
	// KilledNode is who answers for a refused connection to a node that replica-kill
	// killed: BlameHarness (default) or BlameLimiter.
	KilledNode string
	// StoreDelay is what store-slow adds to every store reply; 0 is twice the harness's
	// store timeout (the replica's --store-timeout), a delay a limiter that waits for its
	// store cannot hide.
	StoreDelay time.Duration
}

// Metrics names a target's Prometheus metrics (text format, on every replica's address)
// for the sync health panel. An empty name is a figure the target does not expose.
type Metrics struct {
	// Path is the metrics path; default /metrics.
	Path string
	// Exchanges is a counter of syncs with the store by the label "result": ok, failed or
	// timeout (any other value counts as failed).
	Exchanges string
	// ExchangeDuration is a histogram of sync durations in seconds.
	ExchangeDuration string
	// ExchangeClients is a histogram of the clients one sync carried.
	ExchangeClients string
	// ViewAge is a histogram of the age, in seconds, of the store's view a decision used.
	ViewAge string
	// Blind is a counter of the seconds a replica went without a successful sync for more
	// than two intervals.
	Blind string
	// SyncLag is a gauge of the seconds since the replica's last successful sync.
	SyncLag string
	// SyncInterval is how often the target syncs, if it says: the store cost claim's
	// nodes / interval.
	SyncInterval time.Duration
}

// BodyFor is the request body for client id: Body with {{client}} replaced by the ID,
// escaped for a JSON string.
func (r Request) BodyFor(id string) []byte {
	if r.Body == "" {
		return nil
	}
	q, _ := json.Marshal(id)
	return bytes.ReplaceAll([]byte(r.Body), []byte(VarClient), q[1:len(q)-1])
}

// Vars are the values of the placeholders for one replica.
type Vars struct {
	Port        int
	Host        string
	Listen      string
	Redis       string
	Backend     string // the recording backend's host:port ({{backend}})
	Node, Nodes int
	// PeerPort is the replica's second port ({{peer_port}}).
	PeerPort int
	// PeerName is the replica's name as its peers know it ({{peer_name}}).
	PeerName string
	// Peers are every replica as the others reach it, in node order ({{peers}}, the
	// repeated lines' {{each.*}}).
	Peers []Peer
}

// Peer is one replica as the other replicas reach it.
type Peer struct {
	Node     int
	Host     string // 127.0.0.1, or its container's name on a bridge network
	Port     int    // its HTTP port there
	PeerPort int    // its second port there
}

// Addr is the peer's address for the other replicas, host:peer_port.
func (p Peer) Addr() string { return net.JoinHostPort(p.Host, strconv.Itoa(p.PeerPort)) }

// Expand fills the placeholders of s for one replica: first the repeated lines (every line
// with an {{each.*}} placeholder, once per peer), then the others.
func (v Vars) Expand(s string) string {
	if strings.Contains(s, eachPrefix) {
		s = v.repeatLines(s)
	}
	peers := make([]string, len(v.Peers))
	for i, p := range v.Peers {
		peers[i] = p.Addr()
	}
	return strings.NewReplacer(VarPort, strconv.Itoa(v.Port), VarHost, v.Host, VarListen, v.Listen, VarRedis, v.Redis, VarBackend, v.Backend,
		VarNode, strconv.Itoa(v.Node), VarNodes, strconv.Itoa(v.Nodes),
		VarPeerPort, strconv.Itoa(v.PeerPort), VarPeers, strings.Join(peers, ","), VarPeerName, v.PeerName).Replace(s)
}

// repeatLines writes every line of s that holds an {{each.*}} placeholder once per peer.
func (v Vars) repeatLines(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.Contains(line, eachPrefix) {
			b.WriteString(line)
			continue
		}
		for _, p := range v.Peers {
			b.WriteString(strings.NewReplacer(VarEachNode, strconv.Itoa(p.Node), VarEachPeer, p.Addr(),
				VarEachPeerPort, strconv.Itoa(p.PeerPort), VarEachListen, net.JoinHostPort(p.Host, strconv.Itoa(p.Port))).Replace(line))
		}
	}
	return b.String()
}

// Window is the window every class shares (the run aligns to its edges).
func (t *Target) Window() time.Duration { return t.Classes[0].Window }

// ClassOf is the class a client ID belongs to: the longest matching prefix, else the default.
func (t *Target) ClassOf(id string) Class {
	best := t.Classes[0]
	for _, c := range t.Classes[1:] {
		if strings.HasPrefix(id, c.Prefix) && len(c.Prefix) > len(best.Prefix) {
			best = c
		}
	}
	return best
}

// Loopback reports whether u is an http(s) URL on a loopback host.
func loopback(u *url.URL) bool {
	h := u.Hostname()
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}
