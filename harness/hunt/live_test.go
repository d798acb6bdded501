//go:build loadtest

package hunt

// The hunt itself against real containers, short and time-scaled (make test runs it after the
// unit tests, one package at a time): the fixed-window target's edge found and replayed, and
// the bounded design holding every family aimed at it.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// quickHunt is a short hunt on Docker's host network at time scale 0.1 (a 6 s window). With
// RLHARNESS_RUN_DIR set (CI sets it) the run directory is kept there.
func quickHunt(t *testing.T, budget time.Duration, families ...string) RunConfig {
	cfg := loadtest.DefaultConfig()
	cfg.Network = "host"
	cfg.Spec.TimeScale = 0.1
	out := t.TempDir()
	if dir := os.Getenv("RLHARNESS_RUN_DIR"); dir != "" {
		out = filepath.Join(dir, t.Name())
	}
	cfg.OutDir = out
	rc := RunConfig{Load: cfg, Budget: budget, Requests: 300_000, MaxRate: DefaultMaxRate, Seed: 7, Families: families,
		Coarse: 6, Levels: 1, Fault: FaultNone, OutDir: out}
	if testing.Verbose() {
		rc.Progress = os.Stdout
	}
	return rc
}

// fixedWindow6s is targets/peers/fixedwindow.yaml at a 6 s window, as a file of the test's.
func fixedWindow6s(t *testing.T) *target.Target {
	t.Helper()
	b, err := os.ReadFile("../../targets/peers/fixedwindow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "12s", "6s")
	path := filepath.Join(t.TempDir(), "fixedwindow.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := target.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func familyOf(t *testing.T, s result.HuntSystem, name string) result.HuntFamily {
	t.Helper()
	for _, f := range s.Families {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("%s has no family %s", s.System, name)
	return result.HuntFamily{}
}

// The hunt finds about 2x at the fixed-window target's window edge, and loadtest --schedule
// replays the schedule it wrote to the same figure.
func TestHuntLiveFixedWindowEdge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc := quickHunt(t, 45*time.Second, FamilyEdge)
	rc.Load.Targets = []*target.Target{fixedWindow6s(t)}
	h, err := Run(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	s := h.Systems[0]
	f := familyOf(t, s, FamilyEdge)
	t.Logf("%s: %s; %d variants in %d rounds; learned %s", f.Name, f.Verdict(), len(f.Tried), len(s.Rounds), s.Learned.Edge)
	if f.Worst == nil || f.Worst.Overshoot < 1.5 || !f.Breaks || h.Pass || h.GeneratorBound {
		t.Fatalf("worst %+v, breaks %v, pass %v, generator-bound %v: want about x2 found and the hunt failed", f.Worst, f.Breaks, h.Pass, h.GeneratorBound)
	}
	if !strings.Contains(s.Learned.Edge, "whole windows since the epoch (a run of rejections turned into acceptances") {
		t.Errorf("learned %q: want the fixed window's edges found at whole windows since the epoch", s.Learned.Edge)
	}
	// The worst schedule, replayed by the load test on a fresh fleet of the target.
	file, err := schedule.ReadFile(filepath.Join(rc.OutDir, f.Schedule))
	if err != nil {
		t.Fatal(err)
	}
	cfg := rc.Load
	cfg.OutDir = filepath.Join(rc.OutDir, "replay")
	if cfg, err = cfg.WithSchedule(&file); err != nil {
		t.Fatal(err)
	}
	sum, err := loadtest.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Scenarios[0]
	t.Logf("replayed: %d requests, x%.3f, generator-bound %v", r.Requests, r.MaxOvershoot, r.GeneratorBound)
	if r.Requests != len(file.Schedule.Requests) || r.MaxOvershoot < 1.5 || sum.Pass {
		t.Errorf("replay: %d requests (the file's %d), x%.3f, pass %v: want the file's traffic and its overshoot", r.Requests, len(file.Schedule.Requests), r.MaxOvershoot, sum.Pass)
	}
}

// designBreaks are the checks the family's worst variant failed, each with its figure, but a
// refusal of a client within its limit in a round where store calls timed out: a node whose
// store call timed out decides alone up to its share of the limit
// (docs/design-bound.md), and on two cores a herd sent as fast as the machine sends can
// starve a store call past its timeout. That refusal is the fallback's, logged with the
// round's store figures beside it; every other failed check, and that one in a round whose
// store answered every call, is a break. The round's store must have been read.
func designBreaks(t *testing.T, f result.HuntFamily) []string {
	t.Helper()
	w := f.Worst
	if w.Store == nil {
		return []string{"the round's store was not read: want the replica's metrics beside the verdict"}
	}
	var out []string
	for _, c := range w.Checks {
		switch {
		case c.Pass:
		case c.Name == accounting.CheckFalseRejectsName && w.Store.Timeouts+w.Store.Degraded > 0:
			t.Logf("%s: %d false rejects in a round where %s store calls timed out (%s decisions made with the store down)",
				f.Name, w.FalseRejects, result.Number(w.Store.Timeouts), result.Number(w.Store.Degraded))
		default:
			out = append(out, fmt.Sprintf("%s: %s %s (threshold %s)", f.Verdict(), c.Name, result.Number(c.Figure), result.Number(c.Threshold)))
		}
	}
	return out
}

// The bounded design (the replica's --design bounded) holds every family aimed at delayed
// sync within 1.1x and refuses no at-limit client.
func TestHuntLiveBoundedDesignHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc := quickHunt(t, 60*time.Second, FamilySliceDrop, FamilySpread, FamilyFresh, FamilyAtLimitBursts)
	rc.Load.Design = string(limiters.DesignBounded)
	h, err := Run(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	s := h.Systems[0]
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	measured := 0
	for _, f := range s.Families {
		t.Logf("%s: %s (%d variants)", f.Name, f.Verdict(), len(f.Tried))
		if f.Worst == nil || f.GeneratorBound {
			continue
		}
		measured++
		for _, why := range designBreaks(t, f) {
			t.Errorf("%s broke the bounded design: %s (%s)", f.Name, why, f.Worst.ParamString())
		}
	}
	if measured < 3 {
		t.Errorf("%d of %d families measured on traffic sent faithfully: the hunt did not look", measured, len(s.Families))
	}
	if !h.Pass && !h.GeneratorBound {
		t.Errorf("the hunt failed: %v", h.Failed)
	}
}

// The bounded design holds clients whose bursts land a window apart: the limit twice a window
// less a gap apart, and a herd of fresh clients each sending its limit once a window with a
// busy sender's jitter; on arrival bounds no client of either gets more than 1.1x. A design
// that takes arrivals a little less than a window apart to be a window apart fails it.
func TestHuntLiveWindowApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc := quickHunt(t, 75*time.Second, FamilyWindowApart, FamilyWindowHerd)
	rc.Load.Design = string(limiters.DesignBounded)
	// The herd asks the generator's burst rate, each burst unpaced: at the default 1,500 req/s
	// (15 clients, 62,400 requests in its round) two cores shared by the generator, eight
	// replicas and Redis answered it past the run's deadline ("run exceeded the schedule's last
	// offset + grace + timeout", 3 clean-clone CI runs of 3 on one machine). At 750 req/s the
	// herd is 8 clients (4 to 12 searched) and its round ends within the deadline; what the test
	// holds, 1.1x for every client of a herd bursting a window apart, is the same. (At 500 and
	// 600 req/s the learning round's probe no longer fits a round.)
	rc.MaxRate = 750
	h, err := Run(ctx, rc)
	if err == nil && len(h.Systems) == 1 && strings.Contains(h.Systems[0].Error, traffic.ErrDeadline.Error()) {
		// Even at 750 req/s, one clean-clone CI run of two had the herd's round outlive its
		// deadline ("round 2: run exceeded the schedule's last offset + grace + timeout"): the
		// generator could not carry it, which says nothing of the design. Made again once, as
		// the load tests make again a run that fell behind (runMeasured); twice fails.
		t.Logf("the hunt made again: %s", h.Systems[0].Error)
		rc.OutDir = filepath.Join(rc.OutDir, "again")
		rc.Load.OutDir = rc.OutDir
		h, err = Run(ctx, rc)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := h.Systems[0]
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	for _, name := range []string{FamilyWindowApart, FamilyWindowHerd} {
		f := familyOf(t, s, name)
		if f.Worst == nil {
			t.Errorf("%s: %s", name, f.Verdict())
			continue
		}
		w := f.Worst
		t.Logf("%s: %s (%s; %d of %d clients over 1.1x); %s", name, f.Verdict(), w.ParamString(), w.ClientsOver, w.Clients, w.Clocks)
		// This test is promise 1's: no client whose bursts land a window apart gets more than
		// 1.1x. The herd is sent as fast as two cores send it, with eight replicas and the
		// store beside the generator, and its answers can queue for seconds (CI read arrival
		// bounds of ±7.2 s p99 and 7 requests past the client's timeout); what that costs the
		// other promises is logged with its figures, and judged on paced traffic by
		// TestHuntLiveBoundedDesignHolds and the load tests.
		for _, c := range w.Checks {
			switch {
			case c.Pass:
			case c.Name == accounting.CheckOvershootName:
				t.Errorf("%s broke the bounded design: %s (%s)", name, f.Verdict(), c)
			default:
				t.Logf("%s: %s (not this test's promise; the round's store: %+v)", name, c, w.Store)
			}
		}
		if w.ClientsOver > 0 {
			t.Errorf("%s: %d of %d clients got more than 1.1x their limit in a window-long interval", name, w.ClientsOver, w.Clients)
		}
	}
	// At 750 req/s and limit 600 per 6 s window, the herd is 8 clients (4 to 12 searched).
	if herd := familyOf(t, s, FamilyWindowHerd); herd.Worst != nil && herd.Worst.Clients < 4 {
		t.Errorf("a herd of %d clients: want the family's herd of 4 or more", herd.Worst.Clients)
	}
}
