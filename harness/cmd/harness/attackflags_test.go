package main

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgeproof/rlharness/deploy"
	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// parseAttack reads a `harness attack` command line (without the command's name) as the
// command does, the shard index from JOB_COMPLETION_INDEX where the line asks for it.
func parseAttack(t *testing.T, args []string, jobIndex int) loadtest.AttackConfig {
	t.Helper()
	fs := pflag.NewFlagSet("attack", pflag.ContinueOnError)
	flags := newAttackFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("harness attack %q: %v", args, err)
	}
	ac, err := flags.Config(func(k string) string {
		if k == loadtest.JobIndexEnv {
			return strconv.Itoa(jobIndex)
		}
		return ""
	})
	if err != nil {
		t.Fatalf("harness attack %q: %v", args, err)
	}
	return ac
}

// notOnTheLine are the AttackConfig fields no shard's command line carries: the process sets
// them (its connections, its progress, its binary's revision), and the shard runners send the
// spec's schedule only (loadtest --schedule refuses --shards).
var notOnTheLine = map[string]bool{"Options": true, "Progress": true, "Commit": true, "ScheduleFile": true}

// Every writer of an attack command line is read back by the attack command as the shard it
// meant: the load test's shard runner (loadtest.AttackArgs) to the field, and deploy render's
// Job, each pod's index from the environment, as the load test's shard of the same spec (given
// with its replicas left to the targets, which render counts). With loadtest's TestEveryPathBuildsOneSchedule (one spec,
// one schedule, byte for byte, on each such shard, the scenario and the judge) this is the
// load test's schedule on every path, command lines included.
func TestEveryCommandLineReadsBack(t *testing.T) {
	const shards = 3
	spec := schedule.Spec{TimeScale: 0.05, Rate: 50, Clients: 300, Seed: 18446744073709551615, Replicas: 2}
	urls := []string{"http://127.0.0.1:18080", "http://127.0.0.1:18081"}
	start := time.Date(2026, 12, 3, 7, 0, 12, 345678900, time.UTC)
	sharded := loadtest.AttackConfig{Schedule: spec, Shards: shards, Scenario: "sliding_window/delayed",
		Algorithm: "sliding_window", Mode: "delayed", Targets: urls, Start: start, ClockRef: "127.0.0.1:6379"}

	// Every field is on the line, so the comparison below covers it, or is named as one the
	// line leaves to the process.
	v := reflect.ValueOf(sharded)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.IsExported() && f.Name != "Shard" && f.Name != "OutDir" && v.Field(i).IsZero() != notOnTheLine[f.Name] {
			t.Errorf("AttackConfig.%s: set %t here, on the command line %t; set every field the line carries, name the others in notOnTheLine",
				f.Name, !v.Field(i).IsZero(), !notOnTheLine[f.Name])
		}
	}

	// The load test's shards, as the shard runner writes their lines.
	for i := range shards {
		args := loadtest.AttackArgs(sharded, i, "/out")
		if args[0] != "attack" {
			t.Fatalf("shard %d's line %q is not the attack command's", i, args)
		}
		want := sharded
		want.Shard, want.OutDir = i, "/out"
		if got := parseAttack(t, args[1:], -1); !reflect.DeepEqual(got, want) {
			t.Errorf("shard %d's line %q reads back as\n%+v, written from\n%+v", i, args, got, want)
		}
	}

	// A Kubernetes Job's shards: the attack container's arguments as deploy render writes them
	// (the deploy command's spec: the load test's, with the replicas left to the targets).
	p := deploy.DefaultParams()
	p.Shards, p.Image, p.Targets, p.Start, p.ClockRef = shards, "rlharness/harness:dev", urls, start, sharded.ClockRef
	p.Schedule = spec
	p.Schedule.Replicas = 0
	m, err := deploy.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	args := attackContainerArgs(t, m.Attack)
	for i := range shards {
		got := parseAttack(t, args[1:], i)
		want := sharded
		want.Shard = i
		type shard struct { // what builds and sends the shard's schedule
			Schedule      schedule.Spec
			Shard, Shards int
			Targets       []string
			Start         time.Time
			ClockRef      string
		}
		g := shard{got.Schedule, got.Shard, got.Shards, got.Targets, got.Start, got.ClockRef}
		w := shard{want.Schedule, want.Shard, want.Shards, want.Targets, want.Start, want.ClockRef}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("deploy's shard %d (line %q) reads back as\n%+v, the load test's is\n%+v", i, args, g, w)
		}
	}
	if w := p.Schedule.Window(); !p.DefaultStart(start).Truncate(w).Equal(p.DefaultStart(start)) {
		t.Errorf("deploy's default start %v is not on a window edge (%v)", p.DefaultStart(start), w)
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
