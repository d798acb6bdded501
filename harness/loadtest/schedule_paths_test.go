package loadtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgeproof/rlharness/deploy"
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

// parseAttack reads a `harness attack` command line (without the command's name) as the
// command does, the shard index from JOB_COMPLETION_INDEX where the line asks for it.
func parseAttack(t *testing.T, args []string, jobIndex int) AttackConfig {
	t.Helper()
	fs := pflag.NewFlagSet("attack", pflag.ContinueOnError)
	flags := NewAttackFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("harness attack %q: %v", args, err)
	}
	ac, err := flags.Config(func(k string) string {
		if k == JobIndexEnv {
			return strconv.Itoa(jobIndex)
		}
		return ""
	})
	if err != nil {
		t.Fatalf("harness attack %q: %v", args, err)
	}
	return ac
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
// schedule: the load test's scenario, the attack shards the load test starts (their command
// line as the shard runner writes it and the attack command reads it), the judge's rebuild
// from the shard.json files the shards write, and the shards of a Kubernetes Job rendered by
// `harness deploy render`. The digest pins the schedule this spec has always given.
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

	// The load test's shards: each one's command line as the runner writes it, read by the
	// attack command's flags.
	dir := t.TempDir()
	sharded := cfg.shardAttack(sc, urls, "127.0.0.1:6379", start)
	var acs []AttackConfig
	for i := range shards {
		args := attackArgs(sharded, i, dir)
		ac := parseAttack(t, args[1:], -1)
		if ac.Shard != i || ac.Shards != shards || !ac.Start.Equal(start) {
			t.Fatalf("shard %d's command line %q reads back as shard %d/%d from %v", i, args, ac.Shard, ac.Shards, ac.Start)
		}
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

	// A Kubernetes Job's shards: the attack container's arguments as deploy renders them (the
	// deploy command's spec: the load test's, with the replicas left to the targets).
	p := deploy.DefaultParams()
	p.Shards, p.Image, p.Targets, p.Start = shards, "rlharness/harness:dev", urls, start
	p.Schedule = cfg.Spec
	p.Schedule.Replicas = 0
	m, err := deploy.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	args := attackContainerArgs(t, m.Attack)
	acs = acs[:0]
	for i := range shards {
		acs = append(acs, parseAttack(t, args[1:], i))
	}
	if w := p.Schedule.Window(); !p.DefaultStart(start).Truncate(w).Equal(p.DefaultStart(start)) {
		t.Errorf("deploy's default start %v is not on a window edge (%v)", p.DefaultStart(start), w)
	}
	paths["deploy render's shards"] = shardSchedules(t, "deploy render's shards", acs)

	for name, s := range paths {
		if got := scheduleBytes(s); !bytes.Equal(got, want) {
			t.Errorf("%s: %d requests, %d clients, not the scenario's %d and %d byte for byte", name, len(s.Requests), len(s.Clients),
				len(scenario.Requests), len(scenario.Clients))
		}
	}
	if len(paths) != 3 {
		t.Fatalf("%d paths compared, want 3 beside the scenario's", len(paths))
	}
}

// attackContainerArgs is the argument list of the attack Job's container in a rendered
// attack.yaml.
func attackContainerArgs(t *testing.T, manifest []byte) []string {
	t.Helper()
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		if !strings.Contains(doc, "kind: Job") {
			continue
		}
		var j batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
			t.Fatal(err)
		}
		return j.Spec.Template.Spec.Containers[0].Args
	}
	t.Fatalf("no Job in the rendered attack.yaml:\n%s", manifest)
	return nil
}
