package bench

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/dockertest"
)

// The slice's quick form, which make test runs so that harness bench --slice cannot rot: 300
// req/s for 2 s to one replica of each system told it is node 0 of 8, Redis held to 1/8 of a
// core, on Docker's host network; a target file's limiter (the fixed-window one: its client
// in a query parameter) stands in for envoy's, whose image make test does not build. Each
// ceiling search takes one step, so the ceilings are lower bounds and their ratio is not
// measured. Every figure a plan rests on is read for real from /proc and Redis, and
// the figures that only the store's design decides are held to what it must be: redis_rate
// one store call a decision, the bounded design far fewer.
func TestSliceQuickForm(t *testing.T) {
	dockertest.Require(t, "replica", "noop", "redis", "fixedwindow")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	sl := DefaultSlice()
	sl.Rate, sl.Steady = 300, 2*time.Second
	sl.Systems = []string{SliceBounded, SliceDocument, SlicePeer, "../../targets/peers/fixedwindow.yaml"}
	cfg := DefaultConfig()
	cfg.Networks, cfg.Step, cfg.Slice = []string{fleet.NetworkHost}, time.Second, &sl
	cfg.Search = Search{Start: 300, Min: 100, Max: 600, Factor: 2, MaxSteps: 1}
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Progress = &progress
	begin := time.Now()
	b, err := Run(ctx, cfg)
	t.Logf("slice in %v:\n%s", time.Since(begin).Round(time.Second), progress.String())
	if err != nil || len(b.Errors) > 0 {
		t.Fatalf("run: %v %v", err, b.Errors)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	s := b.Slice
	if s == nil || len(s.Systems) != 5 {
		t.Fatalf("slice %+v: want 5 systems", s)
	}
	if s.Rate != 300 && s.RateWhy == "" {
		t.Errorf("ran at %v req/s of the 300 asked, and says nothing of why", s.Rate)
	}
	got := map[string]result.FleetBench{}
	for _, f := range s.Systems {
		got[f.Name] = f
		st := f.Steady
		if st == nil || st.Answered < st.Requests*95/100 || st.Clients < 400 {
			t.Errorf("%s: steady run %+v: want nearly every request answered, from hundreds of clients", f.Name, st)
			continue
		}
		if c := f.Replica; c == nil || c.PID <= 0 || c.CPUPerRequestUs <= 0 || c.CPUPerRequestUs > 5000 || c.RSSBefore <= 0 {
			t.Errorf("%s: replica cost %+v (%s): want its process's CPU per decision, from /proc", f.Name, c, f.ReplicaWhy)
		}
		if g := f.Generator; g == nil || g.CPUPerRequestUs <= 0 || g.CPUPerRequestUs > 20_000 {
			t.Errorf("%s: generator cost %+v (%s)", f.Name, g, f.GeneratorWhy)
		}
		if f.Name == SliceNoop {
			continue
		}
		if f.Conditions.NodeCount != 8 || f.Conditions.Replicas != 1 || f.Conditions.StoreCPU != 0.125 {
			t.Errorf("%s: conditions %+v: want one replica told it is one of 8, Redis held to 1/8", f.Name, f.Conditions)
		}
		if f.StoreCPU == nil || f.StoreCPU.Seconds <= 0 || f.StoreMemory == nil {
			t.Errorf("%s: Redis CPU %+v (%s), memory %+v (%s): want both read", f.Name, f.StoreCPU, f.StoreCPUWhy, f.StoreMemory, f.StoreMemoryWhy)
		}
		if f.Ceiling <= 0 && len(f.Steps) == 0 {
			t.Errorf("%s: no ceiling search", f.Name)
		}
	}
	// redis_rate calls its one script a decision; the bounded design decides a client within
	// its budget alone: at 300 req/s over 25,000 clients, only the probes and the epoch reads
	// reach the store.
	if rr := got[SlicePeer].StoreCmdPerRequest; rr < 0.95 || rr > 1.1 {
		t.Errorf("redis_rate: %.3f store round trips a request, want one", rr)
	}
	if bd := got[SliceBounded].StoreCmdPerRequest; bd <= 0 || bd > 0.5 {
		t.Errorf("bounded: %.3f store round trips a request, want the epoch reads and the probes' calls, well under redis_rate's", bd)
	}
	if len(b.Figures) != 4 {
		t.Fatalf("%d figures, want the slice's 4", len(b.Figures))
	}
	for _, f := range b.Figures {
		if f.Status != result.StatusMet && f.Status != result.StatusNotMet && f.Status != result.StatusNotMeasured {
			t.Errorf("%s: status %q", f.Name, f.Status)
		}
		if f.Status == result.StatusNotMeasured && f.Why == "" && !strings.Contains(f.Note, "search") {
			t.Errorf("%s: not measured without saying why: %+v", f.Name, f)
		}
	}
}

// testWriter sends a logger's lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
