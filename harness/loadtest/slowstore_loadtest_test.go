//go:build loadtest

package loadtest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// stallingProvider starts fleets whose store stalls: every `every` it runs a script that
// holds Redis for `hold`, longer than the replicas' store timeout, as a starved machine's
// Redis answers late. The store never goes away: no fault is injected.
type stallingProvider struct {
	fleet.Provider
	ctx         context.Context
	every, hold time.Duration
}

// busy holds Redis for ARGV[1] microseconds.
var busy = redis.NewScript(`
local t0 = redis.call('TIME')
local start = t0[1] * 1000000 + t0[2]
repeat
  local t = redis.call('TIME')
until t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1])
return 1
`)

func (p stallingProvider) Start(ctx context.Context, spec fleet.Spec) (fleet.Fleet, error) {
	fl, err := p.Provider.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: fl.RedisAddr(), ReadTimeout: 5 * time.Second})
	go func() {
		defer rdb.Close()
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C:
				_ = busy.Run(p.ctx, rdb, nil, p.hold.Microseconds()).Err()
			}
		}
	}()
	return fl, nil
}

// The fresh-clone load test's sliding_window/central let 745 of 600 through at the boundary
// burst and said "claim not confirmed", blaming the sliced window. Its excess acceptances
// were the fail-open fallback's: on the loaded machine the replicas' store calls passed the
// 50 ms store timeout, the circuit breaker opened, and each replica decided alone with the
// full limit. Here the store stalls for 150 ms every 400 ms without any fault: the scenario
// must say how many decisions its replicas made without the store, and the sliced window's
// claim, which rests on every decision having been made over the store, is not measured.
func TestLoadtestCentralOnASlowStoreSaysItsReplicasDecidedAlone(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("the local provider needs redis-server: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := quickConfig(t)
	cfg.Provider, cfg.Spec.Replicas, cfg.Spec.TimeScale, cfg.Spec.Rate, cfg.Spec.Clients = fleet.ProviderLocal, 4, 0.1, 200, 2000
	cfg.Algorithm, cfg.Mode = limiters.SlidingWindow, limiters.ModeCentral
	cfg.Gates.LatenessP99 = cfg.latenessTolerance()
	sc := result.Scenario{Name: "sliding_window/central", Algorithm: string(limiters.SlidingWindow), Mode: string(limiters.ModeCentral)}
	p := stallingProvider{Provider: fleet.LocalProvider{}, ctx: ctx, every: 400 * time.Millisecond, hold: 150 * time.Millisecond}
	res, err := runScenario(ctx, cfg, p, sc, sut{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Sync.Degraded
	if d == nil || d.Decisions == 0 || d.TimedOut == 0 {
		t.Fatalf("decisions without the store %+v: want the replicas' fallbacks after their store calls timed out", d)
	}
	t.Logf("%s; boundary burst x%.3f, worst client x%.3f", d, probeOf(res, schedule.PatternBoundary).Overshoot, res.MaxOvershoot)
	var window bool
	for _, c := range res.Claims {
		if !c.NotMeasured || !strings.Contains(c.Why, "decisions without the store") {
			t.Errorf("claim %q: %s; want not measured, naming the decisions made without the store", c.Text, c.Verdict())
		}
		window = window || strings.HasPrefix(c.Text, "sliced sliding window")
	}
	if !window {
		t.Errorf("no claim about the sliced window among %+v", res.Claims)
	}
	for _, c := range res.Checks {
		if c.Name == "max overshoot" && !strings.Contains(c.Detail, "decisions without the store") {
			t.Errorf("overshoot check %q does not say the replicas decided alone", c.Detail)
		}
	}
}

func probeOf(res result.ScenarioResult, pattern string) result.ProbeResult {
	for _, p := range res.Probes {
		if strings.HasSuffix(p.ID, pattern) {
			return p
		}
	}
	return result.ProbeResult{}
}
