package loadtest

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// replayFixture is a small schedule file as harness hunt writes one: two clients of limit 40
// per 3 s window (time scale 0.05), the first sending its limit twice around a window edge,
// the second exactly its limit, over two replicas, with a store fault.
func replayFixture(t *testing.T) (schedule.File, string) {
	t.Helper()
	w := 3 * time.Second
	s := schedule.Schedule{Duration: 2 * w, Clients: []schedule.Client{
		{ID: "hunt-edge", Limit: 40, Window: w, Pattern: "window-edge", Probe: true},
		{ID: "hunt-at-limit", Limit: 40, Window: w, Pattern: "at-limit-paced", Probe: true},
	}}
	for i := range 80 {
		s.Requests = append(s.Requests, schedule.Request{At: w - 200*time.Millisecond + time.Duration(i)*5*time.Millisecond, Replica: int16(i % 2)})
	}
	for i := range 40 {
		s.Requests = append(s.Requests, schedule.Request{At: time.Duration(i) * 75 * time.Millisecond, Client: 1, Replica: int16(i % 2)})
	}
	slices.SortStableFunc(s.Requests, func(a, b schedule.Request) int { return cmp.Compare(a.At, b.At) })
	f := schedule.File{Header: schedule.Header{Name: "window-edge", Target: "replica", TimeScale: 0.05, Align: w, Replicas: 2,
		Fault: &schedule.Fault{Kind: result.FaultStop, From: 4 * time.Second, To: 5 * time.Second}}, Schedule: s}
	path := filepath.Join(t.TempDir(), "window-edge.json")
	if err := schedule.WriteFile(path, &f); err != nil {
		t.Fatal(err)
	}
	return f, path
}

// A schedule file sent by two attack shards and judged: each shard keeps the file beside its
// outcomes byte for byte, every request of the file is sent once at its offset, and the judge
// reads the file back and judges it as a load test's scenario (the edge client's 80 accepted
// in one window: x2).
func TestAttackReplaysAScheduleFileExactly(t *testing.T) {
	f, path := replayFixture(t)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Client-ID")]++
		mu.Unlock()
	}))
	defer srv.Close()
	dir := t.TempDir()
	start := time.Now().Add(500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			ac := AttackConfig{Shard: i, Shards: 2, Targets: []string{srv.URL}, Start: start, OutDir: dir, ScheduleFile: path,
				Options: traffic.Options{Grace: time.Second}}
			if _, err := Attack(context.Background(), ac); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 2 {
		kept, err := os.ReadFile(filepath.Join(ShardDir(dir, i), ReplayedFile))
		if err != nil || !bytes.Equal(kept, original) {
			t.Errorf("shard %d kept other bytes than the file's (%v)", i, err)
		}
		m, err := result.Read[result.Shard](ShardDir(dir, i), result.ShardFile)
		if err != nil || m.ScheduleFile != ReplayedFile || len(m.ScheduleDigest) != 64 || m.Schedule.TimeScale != 0.05 || m.Scenario != "schedule/window-edge" {
			t.Errorf("shard %d's record %+v (%v)", i, m, err)
		}
	}
	if seen["hunt-edge"] != 80 || seen["hunt-at-limit"] != 40 {
		t.Errorf("the target saw %v, want 80 and 40", seen)
	}
	sum, err := Judge([]string{dir}, JudgeConfig{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Scenarios[0]
	if r.Requests != len(f.Schedule.Requests) || r.Accepted != r.Requests || r.MaxOvershoot != 2 {
		t.Errorf("judged %d requests, %d accepted, overshoot %v; want %d, all, 2", r.Requests, r.Accepted, r.MaxOvershoot, len(f.Schedule.Requests))
	}
	// A shard that kept another file is not judged as if it had sent this one.
	if err := os.WriteFile(filepath.Join(ShardDir(dir, 0), ReplayedFile), bytes.Replace(original, []byte(`"hunt-edge"`), []byte(`"hunt-edgy"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Judge([]string{dir}, JudgeConfig{OutDir: dir}); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("judge of a tampered schedule file: %v, want a digest error", err)
	}
}

// WithSchedule runs the built-in replica as the file says, and refuses a target the file was
// not made for.
func TestWithScheduleTakesTheFilesConditions(t *testing.T) {
	f, _ := replayFixture(t)
	f.Design = string(limiters.DesignBounded)
	cfg, err := DefaultConfig().WithSchedule(&f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Spec.TimeScale != 0.05 || cfg.Spec.Replicas != 2 || cfg.Design != string(limiters.DesignBounded) || cfg.FailOpen || cfg.Matrix {
		t.Errorf("config %v %v %v %v %v: want the file's time scale, replicas and design, no other scenario", cfg.Spec.TimeScale, cfg.Spec.Replicas, cfg.Design, cfg.FailOpen, cfg.Matrix)
	}
	runs := cfg.runs()
	if len(runs) != 1 || runs[0].sc.Name != "schedule/window-edge" || runs[0].sc.Fault != result.FaultStop || !runs[0].sc.Gated {
		t.Fatalf("runs %+v: want the file's one scenario with its fault", runs)
	}
	got, err := runs[0].sys.schedule(cfg)
	if err != nil || len(got.Requests) != len(f.Schedule.Requests) || got.Requests[5] != f.Schedule.Requests[5] {
		t.Errorf("the scenario's schedule is not the file's (%v)", err)
	}
	if o, ok := cfg.replayOutage(); !ok || o.From != 4*time.Second || o.To != 5*time.Second {
		t.Errorf("outage %v %v, want the file's 4s..5s", o, ok)
	}
	// A target with another window.
	tg := &target.Target{Name: "other", Start: target.Start{Replicas: 2}, Classes: []target.Class{{Limit: 40, Window: time.Minute}}}
	c := DefaultConfig()
	c.Targets = []*target.Target{tg}
	if _, err := c.WithSchedule(&f); err == nil || !strings.Contains(err.Error(), "3s window") {
		t.Errorf("a 60 s target replaying a 3 s schedule: %v", err)
	}
	cfg.Design = string(limiters.DesignDocument) // --design wins over the file's
	cfg.Schedule = nil
	if again, _ := cfg.WithSchedule(&f); again.Design != string(limiters.DesignDocument) {
		t.Errorf("design %q, want the command line's", again.Design)
	}
}
