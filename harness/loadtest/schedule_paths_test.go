package loadtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/limiters"
)

// scheduleBytes is a schedule to the byte: every request's offset, client and replica, then
// every client and the duration.
func scheduleBytes(s schedule.Schedule) []byte {
	b := make([]byte, 0, 14*len(s.Requests))
	for _, r := range s.Requests {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.At))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Client))
		b = binary.LittleEndian.AppendUint16(b, uint16(r.Replica))
	}
	for _, c := range s.Clients {
		b = fmt.Appendf(b, "%q %d %d %q %t\n", c.ID, c.Limit, c.Window, c.Pattern, c.Probe)
	}
	return fmt.Appendf(b, "%d\n", s.Duration)
}

// shardSchedules checks what every shard of a sharded run would send and returns the whole
// schedule they agree on: each shard's plan (Attack's) builds the whole, and its parts, put
// back at their indexes, are the whole request for request, each request on one shard only.
func shardSchedules(t *testing.T, path string, acs []AttackConfig) schedule.Schedule {
	t.Helper()
	var whole schedule.Schedule
	var seen []int
	for i, ac := range acs {
		if ac.Schedule.Replicas == 0 { // as Attack does
			ac.Schedule.Replicas = len(ac.Targets)
		}
		p, err := ac.plan()
		if err != nil {
			t.Fatalf("%s: shard %d: %v", path, i, err)
		}
		if i == 0 {
			whole, seen = p.whole, make([]int, len(p.whole.Requests))
		} else if !bytes.Equal(scheduleBytes(p.whole), scheduleBytes(whole)) {
			t.Fatalf("%s: shard %d built another whole schedule than shard 0", path, i)
		}
		if got, want := ac.Schedule.Window(), ac.Schedule.Scale(time.Minute); got != want {
			t.Errorf("%s: shard %d aligns on %v, its spec's window is %v", path, i, got, want)
		}
		for k, r := range p.part.Requests {
			j := p.index[k]
			if whole.Requests[j] != r {
				t.Fatalf("%s: shard %d's request %d is %+v, the whole's %d is %+v", path, i, k, r, j, whole.Requests[j])
			}
			seen[j]++
		}
	}
	for j, n := range seen {
		if n != 1 {
			t.Fatalf("%s: request %d is sent by %d shards, want 1", path, j, n)
		}
	}
	return whole
}

// The same spec gives the same requests, byte for byte, on every path that builds a
// schedule: the load test's scenario, the attack shards the load test starts, and the judge's
// rebuild from the shard.json files the shards write. A shard is the AttackConfig its command
// line carries (AttackArgs writes it); that the attack command reads every such line back to
// the field, the shard runner's and deploy render's alike, is the command's test
// (TestEveryCommandLineReadsBack in harness/cmd/harness). The digest pins the schedule this
// spec has always given.
func TestEveryPathBuildsOneSchedule(t *testing.T) {
	const shards = 3
	cfg := DefaultConfig()
	cfg.Spec.TimeScale, cfg.Spec.Rate, cfg.Spec.Clients, cfg.Spec.Seed, cfg.Spec.Replicas, cfg.Shards = 0.05, 50, 300, 7, 2, shards
	urls := []string{"http://127.0.0.1:18080", "http://127.0.0.1:18081"}
	start := time.Date(2026, 12, 3, 7, 0, 12, 0, time.UTC)
	sc := Scenarios(cfg.Algorithm, cfg.Mode, limiters.Design(cfg.Design), false, false)[0]

	// The load test's scenario, as runScenario builds it.
	scenario, err := sut{}.schedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := scheduleBytes(scenario)
	const digest = "f3f0217131736c0dfd8050ac840a2813d8a4ca2fd6013a518df96704c7bd0290"
	if got := fmt.Sprintf("%x", sha256.Sum256(want)); got != digest {
		t.Errorf("the scenario's schedule has digest %s, want %s: the schedule of a spec changed", got, digest)
	}
	paths := map[string]schedule.Schedule{}

	// The load test's shards: each one the config its command line carries, as the shard
	// runner writes it.
	dir := t.TempDir()
	sharded := cfg.shardAttack(sc, urls, "127.0.0.1:6379", start)
	var acs []AttackConfig
	for i := range shards {
		ac := sharded
		ac.Shard, ac.OutDir = i, dir
		acs = append(acs, ac)
		// What the shard records in shard.json, for the judge below.
		if ac.Schedule.Replicas == 0 {
			ac.Schedule.Replicas = len(ac.Targets)
		}
		m := ac.record()
		m.Start = ac.Start
		if err := result.Write(ShardDir(ac.OutDir, ac.Shard), result.ShardFile, m); err != nil {
			t.Fatal(err)
		}
	}
	paths["load test's shards"] = shardSchedules(t, "load test's shards", acs)

	// The judge's rebuild from the shard.json files.
	judged, err := openShards([]string{dir}, JudgeConfig{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	paths["judge"] = judged.sched
	if got, want := judged.cfg.Spec.Window(), cfg.Spec.Window(); got != want {
		t.Errorf("the judge counts windows of %v, the load test of %v", got, want)
	}

	for name, s := range paths {
		if got := scheduleBytes(s); !bytes.Equal(got, want) {
			t.Errorf("%s: %d requests, %d clients, not the scenario's %d and %d byte for byte", name, len(s.Requests), len(s.Clients),
				len(scenario.Requests), len(scenario.Clients))
		}
	}
	if len(paths) != 2 {
		t.Fatalf("%d paths compared, want 2 beside the scenario's", len(paths))
	}
}
