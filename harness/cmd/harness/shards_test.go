//go:build loadtest

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// asHarnessEnv makes the test binary the harness itself: the shard runner starts it as
// `harness attack`, so a test runs real shard processes without building the command.
const asHarnessEnv = "RLHARNESS_TEST_AS_HARNESS"

func TestMain(m *testing.M) {
	if os.Getenv(asHarnessEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shardRules make every client's count independent of timing, so that two runs can be
// compared client by client: the probes are never limited, the background is far under its
// limit, and ten background clients (bg-000 … bg-009) are capped at one request a day by a
// central token bucket: each gets exactly its first request through, whichever replica and
// shard send it, and every later one is a (false) rejection. Central mode decides in Redis
// alone, so no replica-local state depends on timing either.
func shardRules(window time.Duration) []byte {
	return fmt.Appendf(nil, `default:
  limit: 600
  window: %s
  algorithm: sliding_window
  slices: 12
rules:
  - name: probes-unlimited
    match: {prefix: "probe-"}
    limit: 1000000000
    window: %s
    algorithm: sliding_window
    slices: 12
  - name: capped
    match: {prefix: "bg-00"}
    limit: 1
    window: 24h
    algorithm: token_bucket
    burst: 1
`, window, window)
}

// clientCounts re-accounts a scenario's merged outcomes client by client.
func clientCounts(t *testing.T, cfg loadtest.Config, dir string) []result.ClientReport {
	t.Helper()
	s, err := schedule.Build(cfg.Spec, schedule.DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	acc, err := accounting.New(&s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := traffic.ReadFile(filepath.Join(dir, traffic.OutcomesFile), acc.Add); err != nil {
		t.Fatal(err)
	}
	rep := acc.Report()
	if rep.Unsent != 0 || rep.Duplicates != 0 {
		t.Fatalf("%s: %d requests unsent, %d duplicates; want every request once", dir, rep.Unsent, rep.Duplicates)
	}
	return rep.Clients
}

// TestTwoShardsGiveTheVerdictAndCountsOfOne (make test runs it with the load tests, without
// -race, since its shards are this binary) runs one scenario's schedule from one generator
// and from two shard processes against real replicas (local processes, central mode) and
// compares the verdicts and every client's accepted and rejected counts, then judges the two
// shards again with `harness judge`.
func TestTwoShardsGiveTheVerdictAndCountsOfOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Setenv(asHarnessEnv, "1") // the shards' environment: this binary is the harness
	base := loadtest.DefaultConfig()
	base.Provider, base.Spec.Replicas, base.Mode = "local", 2, "central"
	base.Spec.TimeScale, base.Spec.Rate, base.Spec.Clients = 0.1, 100, 1000
	base.FailOpen, base.Matrix = false, false
	// The verdict compared is the limiter's: give the generator room on a shared machine.
	base.Gates.LatenessP99, base.Gates.MinRateRatio = 4*time.Second, 0.5
	base.Rules = shardRules(6 * time.Second)
	// A store call that times out is decided fail-open by the replica's local limiter, which
	// depends on timing: on a busy machine one of a capped client's requests went through so
	// in one run and not in the other. The comparison is of the shards, so the store is given
	// time to answer.
	base.StoreTimeout = 2 * time.Second
	base.HarnessBinary = os.Args[0]

	var sums []result.Summary
	var counts [][]result.ClientReport
	var dirs []string
	for _, shards := range []int{1, 2} {
		cfg := base
		cfg.Shards = shards
		cfg.OutDir = filepath.Join(t.TempDir(), fmt.Sprintf("shards-%d", shards))
		sum, err := loadtest.Run(ctx, cfg)
		if err != nil {
			t.Fatalf("%d shards: %v", shards, err)
		}
		if len(sum.Scenarios) != 1 || sum.Scenarios[0].Error != "" {
			t.Fatalf("%d shards: scenarios %+v", shards, sum.Scenarios)
		}
		dir := sum.Scenarios[0].Dir(cfg.OutDir)
		sums, dirs = append(sums, sum), append(dirs, dir)
		counts = append(counts, clientCounts(t, cfg, dir))
	}
	one, two := sums[0], sums[1]
	if one.Pass != two.Pass || one.GeneratorBound != two.GeneratorBound || !slices.Equal(one.Failed, two.Failed) {
		t.Errorf("verdicts differ: 1 shard pass=%v generator-bound=%v failed=%v; 2 shards pass=%v generator-bound=%v failed=%v",
			one.Pass, one.GeneratorBound, one.Failed, two.Pass, two.GeneratorBound, two.Failed)
	}
	if one.GeneratorBound {
		t.Errorf("generator-bound at %v req/s: the comparison says nothing about the shards; %v", base.Spec.Rate, one.Failed)
	}
	r1, r2 := one.Scenarios[0], two.Scenarios[0]
	if r1.Accepted != r2.Accepted || r1.Rejected != r2.Rejected || r1.FalseRejects != r2.FalseRejects {
		t.Errorf("totals differ: 1 shard %d accepted %d rejected %d false; 2 shards %d, %d, %d",
			r1.Accepted, r1.Rejected, r1.FalseRejects, r2.Accepted, r2.Rejected, r2.FalseRejects)
	}
	if r2.Shards != 2 || r2.ClockSkew == nil || len(r2.ClockSkew.Offsets) != 2 || !r2.ClockSkew.Measured || r2.ClockSkew.Exceeded {
		t.Errorf("two shards on one host: shards %d, skew %+v; want both offsets, measured, within tolerance", r2.Shards, r2.ClockSkew)
	}
	capped, rejected := 0, 0
	for c := range counts[0] {
		a, b := counts[0][c], counts[1][c]
		if a.Offered != b.Offered || a.Accepted != b.Accepted || a.Rejected != b.Rejected || a.Errors != b.Errors || a.FalseRejects != b.FalseRejects {
			t.Fatalf("client %s: 1 shard %d offered %d accepted %d rejected %d errors; 2 shards %d, %d, %d, %d",
				a.ID, a.Offered, a.Accepted, a.Rejected, a.Errors, b.Offered, b.Accepted, b.Rejected, b.Errors)
		}
		if strings.HasPrefix(a.ID, "bg-00") && a.Offered > 0 {
			capped++
			if a.Accepted != 1 {
				t.Errorf("capped client %s: %d of %d accepted, want exactly its first", a.ID, a.Accepted, a.Offered)
			}
		}
		rejected += a.Rejected
	}
	if capped == 0 || rejected == 0 || one.Pass {
		t.Fatalf("%d capped clients sent, %d rejections, pass %v: the target limited nobody, the comparison is empty", capped, rejected, one.Pass)
	}
	if want := "false rejects"; !strings.Contains(strings.Join(two.Failed, ";"), want) {
		t.Errorf("failed %v, want %q named (the capped clients)", two.Failed, want)
	}

	// harness judge on the 2-shard run's shard directories: the same verdict and counts.
	var out bytes.Buffer
	judged := filepath.Join(t.TempDir(), "judged")
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"judge", dirs[1], "--out", judged, "--max-lateness", "4s", "--min-rate-ratio", "0.5"})
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != exitGateFailed {
		t.Fatalf("harness judge exit %d (%v), want %d for the capped clients' false rejects\n%s", code, err, exitGateFailed, out.String())
	}
	for _, want := range []string{"clock skew between machines", "false rejects", "RESULT: FAIL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("harness judge output lacks %q:\n%s", want, out.String())
		}
	}
	jcfg := base
	jcfg.Shards = 2
	jc := clientCounts(t, jcfg, two.Scenarios[0].Dir(judged))
	for c := range jc {
		if jc[c].Accepted != counts[0][c].Accepted || jc[c].Rejected != counts[0][c].Rejected {
			t.Fatalf("judged client %s: %d accepted %d rejected, the 1-shard run %d, %d", jc[c].ID, jc[c].Accepted, jc[c].Rejected, counts[0][c].Accepted, counts[0][c].Rejected)
		}
	}
}
