package loadtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// writeShards writes what n attack shards of spec would leave, every request answered on time
// with code(i) and sent at its offset plus late; edit changes a shard's record.
func writeShards(t *testing.T, dir string, spec schedule.Spec, n int, code func(int) uint16, late time.Duration, edit func(*result.Shard)) {
	t.Helper()
	s, err := schedule.Build(spec, schedule.DefaultClasses())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	for i := range n {
		part, index, err := s.Shard(i, n)
		if err != nil {
			t.Fatal(err)
		}
		w, err := traffic.Create(ShardDir(dir, i))
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range part.Requests {
			j := int(index[k])
			if err := w.Write(traffic.Outcome{Index: j, Code: code(j), Sent: r.At + late, Latency: time.Millisecond, Lateness: late}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		m := result.Shard{Shard: i, Shards: n, Scenario: "sliding_window/central", Algorithm: "sliding_window", Mode: "central",
			Schedule: spec, Start: start, Host: "gen-" + string(rune('a'+i)), Scheduled: len(part.Requests), Sent: len(part.Requests),
			ClockOffset: &result.ClockOffset{Offset: time.Duration(i) * time.Millisecond, RTT: 200 * time.Microsecond}}
		if edit != nil {
			edit(&m)
		}
		if err := result.Write(ShardDir(dir, i), result.ShardFile, m); err != nil {
			t.Fatal(err)
		}
	}
}

var testSpec = schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 7, Replicas: 2}

func TestJudgeMergesShardsIntoTheWholeRun(t *testing.T) {
	ok := func(int) uint16 { return 200 }
	one, three := t.TempDir(), t.TempDir()
	writeShards(t, one, testSpec, 1, ok, 0, nil)
	writeShards(t, three, testSpec, 3, ok, 0, nil)
	s1, err := Judge([]string{one}, JudgeConfig{OutDir: one})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := Judge([]string{three}, JudgeConfig{OutDir: filepath.Join(three, "judged")})
	if err != nil {
		t.Fatal(err)
	}
	r1, r3 := s1.Scenarios[0], s3.Scenarios[0]
	if r1.Requests != r3.Requests || r1.Accepted != r3.Accepted || r3.Accepted != r3.Requests || r1.MaxOvershoot != r3.MaxOvershoot {
		t.Errorf("1 shard %d requests %d accepted overshoot %v; 3 shards %d, %d, %v", r1.Requests, r1.Accepted, r1.MaxOvershoot, r3.Requests, r3.Accepted, r3.MaxOvershoot)
	}
	// The probes are all accepted: uniform 2x gets twice its limit through, in both.
	if s1.Pass || s3.Pass || strings.Join(s1.Failed, ";") != strings.Join(s3.Failed, ";") || s3.GeneratorBound {
		t.Errorf("verdicts: 1 shard %v %v, 3 shards %v %v (generator-bound %v)", s1.Pass, s1.Failed, s3.Pass, s3.Failed, s3.GeneratorBound)
	}
	if sk := r3.ClockSkew; sk == nil || r3.Shards != 3 || sk.Max != 2*time.Millisecond+200*time.Microsecond || sk.Exceeded {
		t.Errorf("3 shards 0, 1, 2 ms apart ± 0.1 ms: skew %+v", sk)
	}
	for _, c := range r3.Claims {
		if strings.Contains(c.Text, "store") {
			t.Errorf("the judge has no store counters, yet claims %q [%s]", c.Text, c.Figure)
		}
	}
	if r1.ClockSkew != nil || len(r3.Checks) != len(r1.Checks)+1 {
		t.Errorf("the skew check belongs to sharded runs only: %d and %d checks", len(r1.Checks), len(r3.Checks))
	}
	if _, err := os.Stat(filepath.Join(three, "judged", result.SummaryFile)); err != nil {
		t.Errorf("no summary.json: %v", err)
	}
	// Judging again writes the merged outcomes afresh.
	if _, err := Judge([]string{three}, JudgeConfig{OutDir: filepath.Join(three, "judged")}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := traffic.ReadFile(filepath.Join(r3.Dir(filepath.Join(three, "judged")), traffic.OutcomesFile), func(traffic.Outcome) error { n++; return nil }); err != nil || n != r3.Requests {
		t.Errorf("merged outcomes after judging twice: %d (%v), want %d", n, err, r3.Requests)
	}
}

func TestJudgeMarksSkewedShardsGeneratorBound(t *testing.T) {
	dir := t.TempDir()
	// Every request is accepted and on time: only the shards' clocks are wrong.
	writeShards(t, dir, testSpec, 2, func(int) uint16 { return 200 }, 0, func(m *result.Shard) {
		m.ClockOffset.Offset = time.Duration(m.Shard) * 40 * time.Millisecond // 40 ms apart at 5 ms tolerance
	})
	s, err := Judge([]string{dir}, JudgeConfig{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Scenarios[0]
	if !s.GeneratorBound || !r.GeneratorBound || r.ClockSkew == nil || !r.ClockSkew.Exceeded {
		t.Fatalf("40 ms of skew at time scale 0.05 (tolerance %v): generator-bound %v, skew %+v", r.ClockSkew.Tolerance, s.GeneratorBound, r.ClockSkew)
	}
	if r.ClockSkew.Tolerance != 5*time.Millisecond {
		t.Errorf("tolerance %v, want 2%% of a 250 ms slice", r.ClockSkew.Tolerance)
	}
	if !strings.Contains(strings.Join(s.Failed, ";"), "shard clock skew") {
		t.Errorf("failed %v, want the skew check named", s.Failed)
	}
	for _, c := range r.Claims {
		if !c.Inconclusive {
			t.Errorf("claim %q judged on skewed shards", c.Text)
		}
	}
}

func TestJudgeRefusesShardsThatAreNotOneRun(t *testing.T) {
	ok := func(int) uint16 { return 200 }
	tests := []struct {
		name string
		make func(dir string) []string
		want string
	}{
		{"a shard missing", func(dir string) []string {
			writeShards(t, dir, testSpec, 3, ok, 0, nil)
			return []string{ShardDir(dir, 0), ShardDir(dir, 2)}
		}, "shard 1 of 3 is missing"},
		{"a shard twice", func(dir string) []string {
			writeShards(t, dir, testSpec, 2, ok, 0, nil)
			return []string{dir, ShardDir(dir, 1)}
		}, "shard 1 is in both"},
		{"another seed", func(dir string) []string {
			writeShards(t, dir, testSpec, 2, ok, 0, func(m *result.Shard) {
				if m.Shard == 1 {
					m.Schedule.Seed++
				}
			})
			return []string{dir}
		}, "different runs"},
		{"another start", func(dir string) []string {
			writeShards(t, dir, testSpec, 2, ok, 0, func(m *result.Shard) {
				if m.Shard == 1 {
					m.Start = m.Start.Add(time.Second)
				}
			})
			return []string{dir}
		}, "the same --start"},
		{"nothing there", func(dir string) []string { return []string{dir} }, "holds no shard.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Judge(tc.make(dir), JudgeConfig{OutDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == JobIndexEnv {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		arg, env string
		i, n     int
		err      string
	}{
		{"0/1", "", 0, 1, ""},
		{"3/4", "", 3, 4, ""},
		{"$JOB_COMPLETION_INDEX/8", "5", 5, 8, ""},
		{"/8", "7", 7, 8, ""},
		{"/8", "", 0, 0, "not set"},
		{"4/4", "", 0, 0, "0 <= i < N"},
		{"2", "", 0, 0, "want i/N"},
		{"a/2", "", 0, 0, "--shard"},
	}
	for _, tc := range tests {
		i, n, err := ParseShard(tc.arg, env(tc.env))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShard(%q) err %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || i != tc.i || n != tc.n {
			t.Errorf("ParseShard(%q, %s=%q) = %d/%d %v, want %d/%d", tc.arg, JobIndexEnv, tc.env, i, n, err, tc.i, tc.n)
		}
	}
}

func TestAttackArgsRoundTrip(t *testing.T) {
	ac := AttackConfig{Schedule: schedule.Spec{TimeScale: 0.2, Rate: 333.5, Clients: 200000, Seed: 18446744073709551615, Replicas: 8},
		Shards: 4, Scenario: "sliding_window/delayed", Targets: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"},
		Start: time.Date(2026, 12, 3, 7, 0, 12, 345678900, time.UTC), ClockRef: "127.0.0.1:6379"}
	got := strings.Join(AttackArgs(ac, 3, "/out"), " ")
	for _, want := range []string{"attack --shard 3/4", "--time-scale 0.2", "--rate 333.5", "--clients 200000",
		"--seed 18446744073709551615", "--replicas 8", "--start 2026-12-03T07:00:12.3456789Z", "--out /out",
		"--target http://127.0.0.1:1 --target http://127.0.0.1:2", "--clock-ref 127.0.0.1:6379", "--scenario sliding_window/delayed"} {
		if !strings.Contains(got, want) {
			t.Errorf("attack args %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "--algorithm") {
		t.Errorf("an empty algorithm passed on: %s", got)
	}
}
