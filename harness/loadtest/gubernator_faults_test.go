//go:build gubernator

package loadtest

// What gubernator's clients see when a node goes away: it keeps its counters among its
// nodes, so its fault is a node, not a store. Until the load test's fault scenarios kill any
// target's replicas (replica-kill), make test-gubernator measures it here on three nodes
// (docs/peers.md has what it printed).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
)

// gubernatorNodes is three nodes of a gubernator target file with the rule set to limit per
// minute, and a way to ask them.
type gubernatorNodes struct {
	t     *testing.T
	tg    *target.Target
	fl    fleet.Fleet
	runID string
	urls  []string
}

func startGubernator(ctx context.Context, t *testing.T, file string, limit int) *gubernatorNodes {
	tg, err := target.Load("../../targets/peers/" + file)
	if err != nil {
		t.Fatal(err)
	}
	tg.Start.Replicas = 3
	tg.Request.Body = strings.NewReplacer(`"limit":600`, fmt.Sprintf(`"limit":%d`, limit), `"burst":600`, fmt.Sprintf(`"burst":%d`, limit),
		`"duration":12000`, `"duration":60000`).Replace(tg.Request.Body)
	sys := sut{t: tg}
	cfg := DefaultConfig().forTarget(tg, 0)
	cfg.Network = fleet.NetworkHost
	spec := sys.spec(cfg, result.Scenario{Name: tg.Name})
	spec.RunID = fmt.Sprintf("gubfault-%d", time.Now().UnixNano()%1e9)
	fl, err := sys.start(ctx, fleet.DockerProvider{}, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Terminate(context.WithoutCancel(ctx)) })
	return &gubernatorNodes{t: t, tg: tg, fl: fl, runID: spec.RunID, urls: fl.ReplicaURLs()}
}

// ask sends one decision for client to node and says what it got and which node owned it.
func (g *gubernatorNodes) ask(ctx context.Context, node int, client string) (target.Verdict, string) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, g.urls[node]+g.tg.Request.Path, bytes.NewReader(g.tg.Request.BodyFor(client)))
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return target.Error, ""
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	var body struct {
		Responses []struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"responses"`
	}
	owner := ""
	if json.Unmarshal(b.Bytes(), &body) == nil && len(body.Responses) == 1 {
		owner = body.Responses[0].Metadata["owner"]
	}
	return g.tg.Responses.Decide(resp.StatusCode, b.Bytes()), owner
}

// ownerOf is the index of the node that owns client's counter (it announces itself as
// node-<node>.peers.rlharness:<its peer port>), asking through node 0.
func (g *gubernatorNodes) ownerOf(ctx context.Context, client string) int {
	_, owner := g.ask(ctx, 0, client)
	for i := range g.urls {
		if strings.HasPrefix(owner, fmt.Sprintf("node-%d.peers.rlharness:", i)) {
			return i
		}
	}
	g.t.Fatalf("no owner for %s in the answer (%q)", client, owner)
	return -1
}

// tally is what one client got.
type gubTally struct {
	accepted, rejected, errors int
	firstErr, lastErr          time.Duration // since the fault, of the errors
}

func (c *gubTally) add(v target.Verdict, since time.Duration) {
	switch v {
	case target.Accepted:
		c.accepted++
	case target.Rejected:
		c.rejected++
	default:
		if c.errors == 0 {
			c.firstErr = since
		}
		c.errors++
		c.lastErr = since
	}
}

// TestGubernatorNodeFaults: one client is sent its whole limit through the nodes that do
// not own it, then its owner goes away (stopped gracefully, and in a second run SIGKILLed),
// and the client goes on asking through the others, one request every 100 ms, within the
// same minute. It reports the acceptances over the limit and the errors, and wants the
// evidence the figures rest on: the limit was reached before the fault, and the survivors
// answered again afterwards.
func TestGubernatorNodeFaults(t *testing.T) {
	const limit = 100
	for _, c := range []struct {
		name   string
		fault  func(ctx context.Context, g *gubernatorNodes, node int) error
		follow time.Duration
	}{
		{"graceful-stop", func(ctx context.Context, g *gubernatorNodes, node int) error {
			return g.fl.Stop(ctx, fleet.ReplicaMember(node))
		}, 15 * time.Second},
		{"sigkill", func(ctx context.Context, g *gubernatorNodes, node int) error {
			name := "rlharness-" + g.runID + "-" + fleet.ReplicaMember(node)
			if out, err := exec.CommandContext(ctx, "docker", "kill", "--signal", "KILL", name).CombinedOutput(); err != nil {
				return fmt.Errorf("docker kill %s: %v: %s", name, err, out)
			}
			return nil
		}, 50 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			g := startGubernator(ctx, t, "gubernator-batching.yaml", limit)
			client := "gub-fault-" + c.name
			time.Sleep(2 * time.Second) // the three find each other
			owner := g.ownerOf(ctx, client)
			others := []int{}
			for i := range g.urls {
				if i != owner {
					others = append(others, i)
				}
			}
			var before gubTally
			before.add(target.Accepted, 0) // ownerOf's request
			for k := range limit - 1 + 10 {
				v, _ := g.ask(ctx, others[k%len(others)], client)
				before.add(v, 0)
			}
			if before.accepted != limit || before.rejected != 10 || before.errors != 0 {
				t.Fatalf("before the fault: %d accepted, %d rejected, %d errors of %d; want the limit, then 10 rejected",
					before.accepted, before.rejected, before.errors, limit+10)
			}
			start := time.Now()
			if err := c.fault(ctx, g, owner); err != nil {
				t.Fatal(err)
			}
			var after gubTally
			for k := 0; time.Since(start) < c.follow; k++ {
				v, _ := g.ask(ctx, others[k%len(others)], client)
				after.add(v, time.Since(start))
				time.Sleep(100 * time.Millisecond)
			}
			v, _ := g.ask(ctx, others[0], client)
			if v == target.Error {
				t.Errorf("the survivors still answer errors %v after the owner went away", c.follow)
			}
			t.Logf("%s of the owner (node %d of 3, %d per minute): before, %d accepted and %d rejected; in the %v after, %d accepted, %d rejected, %d errors",
				c.name, owner, limit, before.accepted, before.rejected, c.follow, after.accepted, after.rejected, after.errors)
			t.Logf("%s: %d of %d admitted within the minute (x%.2f)", c.name, before.accepted+after.accepted, limit, float64(before.accepted+after.accepted)/limit)
			if after.errors > 0 {
				t.Logf("%s: errors from %v to %v after the fault", c.name, after.firstErr.Round(100*time.Millisecond), after.lastErr.Round(100*time.Millisecond))
			}
			if err := g.fl.Start(ctx, fleet.ReplicaMember(owner)); err != nil {
				t.Errorf("start the owner again: %v", err)
			}
		})
	}
}
