//go:build haproxy || nginx

package loadtest

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
)

// startGateway starts a gateway's target file as processes on this host (--provider local):
// replicas of them, its first file's config with each cut's first string replaced by its
// second (a limit small enough to cross in a few requests). A cut the config lacks fails the
// test: the config changed under it.
func startGateway(t *testing.T, ctx context.Context, file string, replicas int, cuts ...[2]string) (*target.Target, fleet.Fleet) {
	t.Helper()
	return startGatewayIn(t, ctx, file, topology.Topology{}, replicas, cuts...)
}

// startGatewayIn is startGateway with the replicas placed in zones (none: zero).
func startGatewayIn(t *testing.T, ctx context.Context, file string, zones topology.Topology, replicas int, cuts ...[2]string) (*target.Target, fleet.Fleet) {
	t.Helper()
	tg, err := target.Load("../../targets/peers/" + file)
	if err != nil {
		t.Fatal(err)
	}
	tg.Start.Replicas = replicas
	conf := tg.Start.Files[0].Content
	for _, c := range cuts {
		if !bytes.Contains(conf, []byte(c[0])) {
			t.Fatalf("%s's config has no %q to cut to %q", file, c[0], c[1])
		}
		conf = bytes.Replace(conf, []byte(c[0]), []byte(c[1]), 1)
	}
	tg.Start.Files[0].Content = conf
	sys := sut{t: tg}
	cfg := DefaultConfig().forTarget(tg, 0)
	cfg.Zones = zones
	fl, err := sys.start(ctx, fleet.LocalProvider{}, sys.spec(cfg, result.Scenario{Name: tg.Name}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Terminate(context.WithoutCancel(ctx)) })
	if a := fl.RedisAddr(); a != "" {
		t.Errorf("a Redis was started at %s for a target without a store", a)
	}
	if rec := backendOf(fl); rec == nil {
		t.Fatalf("%s proxies to the recording backend, but the fleet runs none", file)
	} else {
		rec.Record()
	}
	return tg, fl
}

// checkReached wants exactly the admissions among codes to have reached the recording
// backend behind fl since the gateway started (or the last check): what a limiter that
// proxies lets through is what the protected service sees, and a refusal never reaches it.
func checkReached(t *testing.T, fl fleet.Fleet, codes []int) {
	t.Helper()
	rec := backendOf(fl)
	admitted := 0
	for _, c := range codes {
		if c == http.StatusOK {
			admitted++
		}
	}
	if got := len(rec.Take()); got != admitted {
		t.Errorf("%d requests reached the backend for answers %v, want the %d admitted", got, codes, admitted)
	}
	rec.Record()
}

// decide sends one request of client to the replica at url, as the target file says, and
// returns the status.
func decide(t *testing.T, ctx context.Context, tg *target.Target, url, client string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, tg.Request.Method, url+tg.Request.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(tg.Request.ClientHeader, client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
