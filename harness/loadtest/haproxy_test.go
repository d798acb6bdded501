//go:build haproxy

package loadtest

// make test-haproxy installs Debian's haproxy package and runs this: the target files start
// HAProxy processes for real (--provider local), their stick table shared through peers, and
// they decide.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
)

// TestHaproxyStartsAndDecides starts two HAProxy processes from each target file, the limit
// cut to 3 per window, and wants 200 three times then 429 from the first for one client;
// then, once the second's table holds the client's count (read through its runtime API, not
// by asking it, which would count), a 429 from the second to the first request it sees of
// that client: its peer pushed the client's count to it.
func TestHaproxyStartsAndDecides(t *testing.T) {
	for _, tt := range []struct{ file, rule, cut string }{
		{"haproxy-peers.yaml", "sc_http_req_rate(0) gt 600", "sc_http_req_rate(0) gt 3"},
		{"haproxy-peers-gpc.yaml", "sc_gpc0_rate(0) ge 600", "sc_gpc0_rate(0) ge 3"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			h := startHaproxy(t, ctx, tt.file, topology.Topology{}, 2, [2]string{tt.rule, tt.cut})
			var codes []int
			for range 4 {
				codes = append(codes, h.decide(0, "haproxy-test"))
			}
			if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
				t.Fatalf("node 0 answered %v, want %v", codes, want)
			}
			checkReached(t, h.fl, codes)
			if v := h.tg.Responses.Of(codes[3]); v != target.Rejected {
				t.Errorf("429 reads as %v, want rejected", v)
			}
			// The peers protocol pushes an entry as it changes; give it a moment on a busy machine.
			if !h.crossed(0, 1, "haproxy-test", 5*time.Second) {
				t.Fatalf("node 1's table does not hold node 0's count of the client 5 s after it refused it (node 0 %d, node 1 %d): the peers did not share it",
					h.count(0, "haproxy-test"), h.count(1, "haproxy-test"))
			}
			if c := h.decide(1, "haproxy-test"); c != http.StatusTooManyRequests {
				t.Fatalf("node 1 answered %d to the first request it saw of a client node 0 refused, want 429", c)
			}
		})
	}
}

// TestHaproxyPeersAcrossZones starts two HAProxy processes in two zones, 20 ms apart each way:
// the near node's count still reaches the far one over the link between them; with the far
// zone partitioned, a new client's count does not, and the far node admits it alone; mended,
// the count crosses again. Whether a count crossed is read in the far node's table (its
// runtime API), never by asking the far node, whose own count would grow with each question.
func TestHaproxyPeersAcrossZones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := startHaproxy(t, ctx, "haproxy-peers.yaml", nearFar(t), 2, [2]string{"sc_http_req_rate(0) gt 600", "sc_http_req_rate(0) gt 3"})
	if n := h.fl.Conditions().PeerLinks; n != 2 {
		t.Fatalf("%d links between the nodes, want 2 (near to far, far to near)", n)
	}
	refuse := func(client string) {
		t.Helper()
		var codes []int
		for range 4 {
			codes = append(codes, h.decide(0, client))
		}
		if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
			t.Fatalf("near node answered %v for %s, want %v", codes, client, want)
		}
	}
	refuse("across-1")
	if !h.crossed(0, 1, "across-1", 5*time.Second) {
		t.Fatal("the far node's table does not hold a client's count 5 s after the near one refused it: the count did not cross the link")
	}
	if c := h.decide(1, "across-1"); c != http.StatusTooManyRequests {
		t.Fatalf("the far node answered %d to the first request it saw of a client the near one refused, want 429", c)
	}
	if err := h.fl.CutLink(ctx, "far", fleet.LinkRefused); err != nil {
		t.Fatal(err)
	}
	refuse("across-2")
	// Cut from its peer, the far node has counted none of across-2's requests: a second later
	// (the push took 40 ms across the link before), it admits the client's first request.
	time.Sleep(time.Second)
	if c := h.decide(1, "across-2"); c != http.StatusOK {
		t.Fatalf("the far node answered %d to a client only the near one saw while the zones were partitioned, want 200", c)
	}
	if err := h.fl.CutLink(ctx, "far", fleet.LinkUp); err != nil {
		t.Fatal(err)
	}
	refuse("across-3")
	if !h.crossed(0, 1, "across-3", 10*time.Second) {
		t.Fatal("after the partition healed the far node's table did not take a client's count from the near one within 10 s")
	}
	if c := h.decide(1, "across-3"); c != http.StatusTooManyRequests {
		t.Fatalf("after the heal the far node answered %d to the first request it saw of a client the near one refused, want 429", c)
	}
}

// TestHaproxyPeersOverwriteAcrossZones counts one client on both sides of a partition, 2
// requests on the near node and 3 on the far one, then heals it and reads each node's entry
// through its runtime API (show table): HAProxy's peers push an entry's value and the receiver
// takes it for its own ("The pushed values overwrite remote ones without aggregation",
// configuration.txt section 3.5; peer_treat_updatemsg in src/peers.c), so after the heal each
// node holds 2 or 3, at least one of them the other side's count, and neither the 5 both
// counted. The rate's period is stretched to a day so that it does not decay during the test.
func TestHaproxyPeersOverwriteAcrossZones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := startHaproxy(t, ctx, "haproxy-peers.yaml", nearFar(t), 2,
		[2]string{"sc_http_req_rate(0) gt 600", "sc_http_req_rate(0) gt 4"},
		[2]string{"expire 12s store http_req_rate(12s)", "expire 1d store http_req_rate(1d)"})
	// The session is up once one client's count crosses: cut before, there is nothing to heal.
	h.send(0, "warm", 1)
	if !h.crossed(0, 1, "warm", 10*time.Second) {
		t.Fatal("the far node's table does not hold the near node's first client 10 s after it started: no peer session")
	}
	if err := h.fl.CutLink(ctx, "far", fleet.LinkRefused); err != nil {
		t.Fatal(err)
	}
	for node, n := range []int{2, 3} {
		if codes := h.send(node, "split", n); slices.ContainsFunc(codes, func(c int) bool { return c != http.StatusOK }) {
			t.Fatalf("node %d answered %v to the client's first %d requests, want 200 each", node, codes, n)
		}
		if c := h.count(node, "split"); c != n {
			t.Fatalf("node %d counts %d of the client's requests while partitioned, want its own %d", node, c, n)
		}
	}
	if err := h.fl.CutLink(ctx, "far", fleet.LinkUp); err != nil {
		t.Fatal(err)
	}
	// The session is back once another client's count crosses; the split client's entries,
	// updated while partitioned, were pushed before it (a peer resumes from its last ack).
	h.send(0, "sync", 1)
	if !h.crossed(0, 1, "sync", 15*time.Second) {
		t.Fatal("15 s after the heal the far node's table does not hold a new client of the near node: the peers' session did not come back")
	}
	near, far := h.count(0, "split"), h.count(1, "split")
	t.Logf("after the heal: near node %d, far node %d (counted 2 and 3 apart)", near, far)
	switch {
	case near == 5 || far == 5:
		t.Fatalf("after the heal a node holds the sum of both sides' counts (near %d, far %d): the peers aggregated", near, far)
	case near < 2 || near > 3 || far < 2 || far > 3:
		t.Fatalf("after the heal the nodes hold near %d, far %d, want each 2 or 3 (one side's count)", near, far)
	case near == 2 && far == 3:
		t.Fatal("after the heal each node still holds only its own count (near 2, far 3): no entry crossed the link")
	}
}

// nearFar is two zones of one node each, 20 ms apart each way.
func nearFar(t *testing.T) topology.Topology {
	t.Helper()
	zones, err := topology.Parse("near:1:0.5ms,far:1:19.5ms")
	if err != nil {
		t.Fatal(err)
	}
	return zones
}

// haproxyFleet is HAProxy processes started from a target file, each with its runtime API on
// a socket of the test's own directory.
type haproxyFleet struct {
	t    *testing.T
	ctx  context.Context
	tg   *target.Target
	fl   fleet.Fleet
	dir  string
	urls []string
}

// startHaproxy is startGatewayIn with each node's stats socket moved to the test's directory
// (the file's own sits in the node's working directory, which the fleet does not tell).
func startHaproxy(t *testing.T, ctx context.Context, file string, zones topology.Topology, replicas int, cuts ...[2]string) *haproxyFleet {
	t.Helper()
	dir := t.TempDir()
	cuts = append(cuts, [2]string{"stats socket unix@haproxy.sock", "stats socket unix@" + dir + "/node-{{node}}.sock"})
	tg, fl := startGatewayIn(t, ctx, file, zones, replicas, cuts...)
	return &haproxyFleet{t: t, ctx: ctx, tg: tg, fl: fl, dir: dir, urls: fl.ReplicaURLs()}
}

// decide is node's answer to one request of client's.
func (h *haproxyFleet) decide(node int, client string) int {
	h.t.Helper()
	return decide(h.t, h.ctx, h.tg, h.urls[node], client)
}

// send is node's answers to n requests of client's.
func (h *haproxyFleet) send(node int, client string, n int) []int {
	h.t.Helper()
	var codes []int
	for range n {
		codes = append(codes, h.decide(node, client))
	}
	return codes
}

// rateField is a stick-table entry's rate in show table's answer, either target file's.
var rateField = regexp.MustCompile(`(?:http_req_rate|gpc0_rate)\(\d+\)=(\d+)`)

// count is client's rate in node's table: -1 for no entry.
func (h *haproxyFleet) count(node int, client string) int {
	h.t.Helper()
	out := haproxyCLI(h.t, fmt.Sprintf("%s/node-%d.sock", h.dir, node), "show table rl/clients key "+client)
	m := rateField.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		h.t.Fatalf("node %d's entry for %s: %v in %q", node, client, err, out)
	}
	return n
}

// crossed is whether node to's table holds node from's count of client (or more) within d.
func (h *haproxyFleet) crossed(from, to int, client string, d time.Duration) bool {
	h.t.Helper()
	want := h.count(from, client)
	if want <= 0 {
		h.t.Fatalf("node %d has not counted %s: nothing to cross", from, client)
	}
	deadline := time.Now().Add(d)
	for h.count(to, client) < want {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// haproxyCLI sends one command to the HAProxy runtime API at sock and returns its answer.
func haproxyCLI(t *testing.T, sock, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		t.Fatalf("reach HAProxy's runtime API: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		t.Fatalf("send %q to HAProxy's runtime API: %v", cmd, err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read HAProxy's answer to %q: %v", cmd, err)
	}
	return string(out)
}
