//go:build gubernator

package loadtest

// gubernator's nodes through zones (docs/zones.md#gubernator-through-zones): two near nodes and
// two far ones, 40.5 ms ± 10 ms apart each way, each node reaching another zone's by the name
// it announces, which its container's hosts file leads to its zone's link. make
// test-gubernator runs it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
)

// zonedGubernator is four nodes of a gubernator target file in near:2, far:2.
type zonedGubernator struct {
	t    *testing.T
	tg   *target.Target
	fl   fleet.Fleet
	urls []string
}

func startZonedGubernator(ctx context.Context, t *testing.T, file string) *zonedGubernator {
	tg, err := target.Load("../../targets/peers/" + file)
	if err != nil {
		t.Fatal(err)
	}
	tg.Start.Replicas = 4
	// A limit no test client reaches: every answer is UNDER_LIMIT or an error.
	tg.Request.Body = strings.NewReplacer(`"limit":600`, `"limit":100000`, `"burst":600`, `"burst":100000`,
		`"duration":12000`, `"duration":60000`).Replace(tg.Request.Body)
	zones, err := topology.Parse("near:2:0.5ms,far:2:40ms±10ms")
	if err != nil {
		t.Fatal(err)
	}
	sys := sut{t: tg}
	cfg := DefaultConfig().forTarget(tg, 0)
	cfg.Network = fleet.NetworkHost
	cfg.Zones = zones
	spec := sys.spec(cfg, result.Scenario{Name: tg.Name})
	spec.RunID = fmt.Sprintf("gubzones-%d", time.Now().UnixNano()%1e9)
	fl, err := sys.start(ctx, fleet.DockerProvider{}, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Terminate(context.WithoutCancel(ctx)) })
	if got := fl.Conditions().PeerLinks; got != 4 {
		t.Fatalf("%d links between the zones' nodes, want 4 (each zone's to each of the other's two nodes)", got)
	}
	return &zonedGubernator{t: t, tg: tg, fl: fl, urls: fl.ReplicaURLs()}
}

// ask sends one decision for client to node: the verdict, the owner the answer names (empty
// where node owns it), and how long the answer took.
func (g *zonedGubernator) ask(ctx context.Context, node int, client string) (target.Verdict, int, time.Duration) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, g.urls[node]+g.tg.Request.Path, bytes.NewReader(g.tg.Request.BodyFor(client)))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return target.Error, -1, time.Since(begin)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	took := time.Since(begin)
	var body struct {
		Responses []struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"responses"`
	}
	owner := node
	if json.Unmarshal(b.Bytes(), &body) == nil && len(body.Responses) == 1 {
		if o := body.Responses[0].Metadata["owner"]; o != "" {
			owner = -1
			for i := range g.urls {
				if strings.HasPrefix(o, fmt.Sprintf("node-%d.peers.rlharness:", i)) {
					owner = i
				}
			}
		}
	}
	return g.tg.Responses.Decide(resp.StatusCode, b.Bytes()), owner, took
}

// wholeRing waits until every node's health check counts all four as its peers: memberlist
// has joined them, and every node hashes a key to the same owner.
func (g *zonedGubernator) wholeRing(ctx context.Context) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		counts := make([]int, len(g.urls))
		whole := true
		for i, u := range g.urls {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"/v1/HealthCheck", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				var h struct {
					PeerCount int `json:"peer_count"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&h)
				resp.Body.Close()
				counts[i] = h.PeerCount
			}
			whole = whole && counts[i] == len(g.urls)
		}
		if whole {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("after 60 s the nodes count %v peers, want %d each", counts, len(g.urls))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// clients are n clients owned by a near node (0 or 1) and n by the other far node (3), as far
// node 2 sees the ring once it is whole.
func (g *zonedGubernator) clients(ctx context.Context, n int) (near, far []string) {
	g.wholeRing(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for k := 0; len(near) < n || len(far) < n; k++ {
		if time.Now().After(deadline) {
			g.t.Fatalf("after 60 s, %d clients owned by a near node and %d by far node 3 (want %d each)", len(near), len(far), n)
		}
		c := fmt.Sprintf("gubzone-%d-%d", time.Now().UnixNano()%1e6, k)
		v, owner, _ := g.ask(ctx, 2, c)
		switch {
		case v != target.Accepted:
			time.Sleep(500 * time.Millisecond) // the ring is not whole yet
		case owner == 0 || owner == 1:
			if len(near) < n {
				near = append(near, c)
			}
		case owner == 3:
			if len(far) < n {
				far = append(far, c)
			}
		}
	}
	return near, far
}

// owner is the node that owns client, as far node 2 names it.
func (g *zonedGubernator) owner(ctx context.Context, client string) int {
	_, o, _ := g.ask(ctx, 2, client)
	return o
}

// known is how many hits owner has counted for client: the limit less what it says remains,
// its own hit of this question included.
func (g *zonedGubernator) known(ctx context.Context, owner int, client string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.urls[owner]+g.tg.Request.Path, bytes.NewReader(g.tg.Request.BodyFor(client)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("ask owner node %d: %v", owner, err)
	}
	defer resp.Body.Close()
	var body struct {
		Responses []struct {
			Limit     string `json:"limit"`
			Remaining string `json:"remaining"`
		} `json:"responses"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Responses) != 1 {
		g.t.Fatalf("owner node %d's answer: %v", owner, err)
	}
	limit, _ := strconv.Atoi(body.Responses[0].Limit)
	rem, _ := strconv.Atoi(body.Responses[0].Remaining)
	return limit - rem
}

// reached says whether a hit far node 2 takes for client (GLOBAL: answered at once, sent to
// the owner afterwards) reaches its owner: the owner's count grows by that hit and its own.
func (g *zonedGubernator) reached(ctx context.Context, client string, owner int) bool {
	before := g.known(ctx, owner, client)
	g.ask(ctx, 2, client)
	time.Sleep(500 * time.Millisecond) // the sync wait (100 ms) and the link's round trip, with room
	return g.known(ctx, owner, client)-before >= 2
}

// median asks node for each client in turn, rounds times, and gives the median answer time
// and the verdicts.
func (g *zonedGubernator) median(ctx context.Context, node int, clients []string, rounds int) (time.Duration, map[target.Verdict]int) {
	var took []time.Duration
	verdicts := map[target.Verdict]int{}
	for range rounds {
		for _, c := range clients {
			v, _, d := g.ask(ctx, node, c)
			took = append(took, d)
			verdicts[v]++
		}
	}
	slices.Sort(took)
	return took[len(took)/2], verdicts
}

// metric is the sum of a metric's samples on node whose line starts with prefix.
func (g *zonedGubernator) metric(ctx context.Context, node int, prefix string) float64 {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.urls[node]+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("GET /metrics on node %d: %v", node, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			f := strings.Fields(line)
			if x, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				sum += x
			}
		}
	}
	return sum
}

// TestGubernatorThroughZones: from far node 2, a client owned by a near node against one owned
// by far node 3, before and during a partition of the far zone. BATCHING forwards every
// request to the owner and waits: through the link it takes the zones' round trip (at least
// 2 x 30.5 ms), within the far zone it does not, and in the partition the far node answers
// errors for the near zone's clients. GLOBAL answers from the node's own copy and sends the
// hits to the owner afterwards: the far node answers a near-owned client as fast as a far
// one, its async sends take the link's round trip, and in the partition it keeps answering.
func TestGubernatorThroughZones(t *testing.T) {
	const linkRTT = 61 * time.Millisecond // 2 x (40.5 - 10) ms: the least a round trip through the link can take
	for _, file := range []string{"gubernator-batching.yaml", "gubernator-global.yaml"} {
		t.Run(file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			g := startZonedGubernator(ctx, t, file)
			global := strings.HasSuffix(g.tg.Name, "global")
			near, far := g.clients(ctx, 5)
			o := g.owner(ctx, near[0])
			toNear, vn := g.median(ctx, 2, near, 4)
			toFar, vf := g.median(ctx, 2, far, 4)
			t.Logf("%s, far node 2: median answer %v for clients a near node owns, %v for far node 3's; verdicts %v, %v",
				g.tg.Name, toNear.Round(100*time.Microsecond), toFar.Round(100*time.Microsecond), vn, vf)
			if vn[target.Accepted] != 20 || vf[target.Accepted] != 20 {
				t.Fatalf("before the partition: verdicts %v (near-owned), %v (far-owned); want 20 accepted each", vn, vf)
			}
			if toFar >= linkRTT/2 {
				t.Errorf("far node 2 answered far node 3's clients in %v at the median: within a zone no link stands", toFar)
			}
			if global {
				if toNear >= linkRTT/2 {
					t.Errorf("GLOBAL: far node 2 answered near-owned clients in %v at the median; it answers from its own copy, without the link's %v", toNear, linkRTT)
				}
				time.Sleep(time.Second) // the async sends of the hits above
				sum, n := g.metric(ctx, 2, "gubernator_global_send_duration_sum"), g.metric(ctx, 2, "gubernator_global_send_duration_count")
				mean := time.Duration(sum / n * float64(time.Second))
				t.Logf("GLOBAL: far node 2's async sends of hits to their owners: %v on average over %.0f", mean.Round(100*time.Microsecond), n)
				if n == 0 || mean < linkRTT {
					t.Errorf("GLOBAL: far node 2's sends of hits (%.0f) took %v on average; each batch goes to a near owner too, through the link (at least %v)", n, mean, linkRTT)
				}
			} else {
				if toNear < linkRTT {
					t.Errorf("BATCHING: far node 2 answered near-owned clients in %v at the median; forwarded through the link it takes at least %v", toNear, linkRTT)
				}
				sum := g.metric(ctx, 2, `gubernator_batch_send_duration_sum{peerAddr="node-0.`) + g.metric(ctx, 2, `gubernator_batch_send_duration_sum{peerAddr="node-1.`)
				n := g.metric(ctx, 2, `gubernator_batch_send_duration_count{peerAddr="node-0.`) + g.metric(ctx, 2, `gubernator_batch_send_duration_count{peerAddr="node-1.`)
				mean := time.Duration(sum / n * float64(time.Second))
				t.Logf("BATCHING: far node 2's batches to the near nodes: %v on average over %.0f", mean.Round(100*time.Microsecond), n)
				if n == 0 || mean < linkRTT {
					t.Errorf("BATCHING: far node 2's batches to the near nodes (%.0f) took %v on average, want at least %v", n, mean, linkRTT)
				}
			}

			if global && !g.reached(ctx, near[0], o) {
				t.Errorf("GLOBAL: a hit far node 2 took for %s did not reach its near owner within 500 ms with the link up", near[0])
			}
			if err := g.fl.CutLink(ctx, "far", fleet.LinkRefused); err != nil {
				t.Fatal(err)
			}
			_, vn = g.median(ctx, 2, near, 2)
			_, vf = g.median(ctx, 2, far, 2)
			t.Logf("%s, the far zone cut from the near one: far node 2 answered %v for near-owned clients, %v for far node 3's", g.tg.Name, vn, vf)
			if vf[target.Accepted] != 10 {
				t.Errorf("in the partition far node 2 answered %v for far node 3's clients: the far zone still reaches itself", vf)
			}
			if global && vn[target.Accepted] != 10 {
				t.Errorf("GLOBAL in the partition: far node 2 answered %v for near-owned clients; it answers from its own copy", vn)
			}
			if global && g.reached(ctx, near[0], o) {
				t.Errorf("GLOBAL in the partition: a hit far node 2 took for %s reached its near owner", near[0])
			}
			if !global && vn[target.Error] != 10 {
				t.Errorf("BATCHING in the partition: far node 2 answered %v for near-owned clients; the owner it forwards to is out of reach", vn)
			}
			// The load test's outage is 6 s at its time scale: hold the cut as long, the far node
			// asked for a near-owned client now and then, as under load.
			for cut := time.Now(); time.Since(cut) < 6*time.Second; {
				g.ask(ctx, 2, near[0])
				time.Sleep(200 * time.Millisecond)
			}
			if err := g.fl.CutLink(ctx, "far", fleet.LinkUp); err != nil {
				t.Fatal(err)
			}
			// gRPC dials a peer it lost again after a backoff (1 s, then x1.6 each time, ± 20 %):
			// how long after the link is mended a far node reaches the near owners again. BATCHING
			// answers again then; GLOBAL answered all along, and its owner hears of the far node's
			// hits again then.
			mended := time.Now()
			back := g.reached
			if !global {
				back = func(ctx context.Context, client string, _ int) bool {
					v, _, _ := g.ask(ctx, 2, client)
					return v == target.Accepted
				}
			}
			for !back(ctx, near[0], o) {
				if time.Since(mended) > 30*time.Second {
					t.Fatalf("30 s after the link was mended far node 2 does not reach near-owned client %s's owner", near[0])
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%s: far node 2 reached the near owners again %v after the link was mended", g.tg.Name, time.Since(mended).Round(10*time.Millisecond))

			// A blackholed link keeps the connections open and drops their bytes: the streams
			// on them cannot resume once it carries again, and the nodes must notice.
			if err := g.fl.CutLink(ctx, "far", fleet.LinkBlackhole); err != nil {
				t.Fatal(err)
			}
			for cut := time.Now(); time.Since(cut) < 6*time.Second; {
				g.ask(ctx, 2, near[0])
				time.Sleep(200 * time.Millisecond)
			}
			if err := g.fl.CutLink(ctx, "far", fleet.LinkUp); err != nil {
				t.Fatal(err)
			}
			mended = time.Now()
			for !back(ctx, near[0], o) {
				if time.Since(mended) > 90*time.Second {
					t.Fatalf("90 s after a blackholed link carried again far node 2 does not reach near-owned client %s's owner", near[0])
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%s: far node 2 reached the near owners again %v after a blackholed link carried again", g.tg.Name, time.Since(mended).Round(10*time.Millisecond))
		})
	}
}
