package deploy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// docs splits a rendered file into its YAML documents, dropping comment-only ones.
func docs(b []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		for _, line := range strings.Split(string(d), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// decode reads every document of b strictly into the Kubernetes type its kind names: a
// field the API does not know, a duplicate or a wrong type fails, as kubectl's strict
// validation would.
func decode(t *testing.T, b []byte) (pvcs []corev1.PersistentVolumeClaim, jobs []batchv1.Job) {
	t.Helper()
	for i, d := range docs(b) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(d, &head); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, d)
		}
		var err error
		switch head.APIVersion + " " + head.Kind {
		case "v1 PersistentVolumeClaim":
			var p corev1.PersistentVolumeClaim
			err = yaml.UnmarshalStrict(d, &p)
			pvcs = append(pvcs, p)
		case "batch/v1 Job":
			var j batchv1.Job
			err = yaml.UnmarshalStrict(d, &j)
			jobs = append(jobs, j)
		default:
			t.Fatalf("document %d is %s %s, want a PersistentVolumeClaim or a Job", i, head.APIVersion, head.Kind)
		}
		if err != nil {
			t.Fatalf("document %d (%s) does not decode strictly: %v\n%s", i, head.Kind, err, d)
		}
	}
	return pvcs, jobs
}

func testParams(shards int) Params {
	p := DefaultParams()
	p.Shards = shards
	p.Image = "registry.example/rlharness/harness:1.0"
	p.Targets = []string{"http://replica-0.limiter:8080", "http://replica-1.limiter:8080"}
	p.ClockRef = "redis.limiter:6379"
	p.Schedule = schedule.Spec{TimeScale: 1, Rate: 40000, Clients: 200000, Seed: 20260730}
	p.Now = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	p.Start = p.DefaultStart(p.Now)
	return p
}

func TestRenderedManifestsAreValidKubernetes(t *testing.T) {
	for _, n := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			p := testParams(n)
			m, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			pvcs, jobs := decode(t, m.Attack)
			if len(pvcs) != 1 || len(jobs) != 1 {
				t.Fatalf("attack.yaml holds %d volumes and %d jobs, want one each", len(pvcs), len(jobs))
			}
			_, judges := decode(t, m.Judge)
			if len(judges) != 1 {
				t.Fatalf("judge.yaml holds %d jobs, want one", len(judges))
			}
			pvc, atk, judge := pvcs[0], jobs[0], judges[0]

			if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
				t.Errorf("outcome volume access modes %v: every shard's pod writes it, want ReadWriteMany", pvc.Spec.AccessModes)
			}
			if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("5Gi")) != 0 {
				t.Errorf("outcome volume requests %s, want 5Gi", q.String())
			}

			s := atk.Spec
			if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
				t.Errorf("completion mode %v, want Indexed: JOB_COMPLETION_INDEX is the shard index", s.CompletionMode)
			}
			if s.Completions == nil || s.Parallelism == nil || *s.Completions != int32(n) || *s.Parallelism != int32(n) {
				t.Errorf("completions %v parallelism %v, want both %d: every shard at once", s.Completions, s.Parallelism, n)
			}
			if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
				t.Errorf("backoff limit %v, want 0: a retried shard would send its clients twice", s.BackoffLimit)
			}
			pod := s.Template.Spec
			if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
				t.Fatalf("restart policy %q, %d containers; want Never and one", pod.RestartPolicy, len(pod.Containers))
			}
			c := pod.Containers[0]
			if c.Image != p.Image {
				t.Errorf("image %q, want %q", c.Image, p.Image)
			}
			args := strings.Join(c.Args, " ")
			for _, want := range []string{
				"attack", fmt.Sprintf("--shard=$JOB_COMPLETION_INDEX/%d", n), "--start=2026-12-03T07:03:00Z",
				"--seed=20260730", "--rate=40000", "--time-scale=1", "--clients=200000", "--replicas=2",
				"--clock-ref=redis.limiter:6379", "--target=http://replica-0.limiter:8080", "--target=http://replica-1.limiter:8080", "--out=/out",
			} {
				if !slices.Contains(c.Args, want) {
					t.Errorf("attack args lack %q: %s", want, args)
				}
			}
			if !hasMount(c, "outcomes", "/out") || !claims(pod, "outcomes", "rlharness-outcomes") {
				t.Errorf("the attack pod does not mount the outcome volume at /out: %+v %+v", c.VolumeMounts, pod.Volumes)
			}
			env := map[string]*corev1.EnvVar{}
			for i := range c.Env {
				env[c.Env[i].Name] = &c.Env[i]
			}
			if e := env["GOMAXPROCS"]; e == nil || e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil || e.ValueFrom.ResourceFieldRef.Resource != "limits.cpu" {
				t.Errorf("GOMAXPROCS not taken from the CPU limit: %+v", c.Env)
			}
			if _, set := env["JOB_COMPLETION_INDEX"]; set {
				t.Error("JOB_COMPLETION_INDEX set by hand; the Job controller sets it")
			}
			guaranteed(t, "attack", c, "2", "1Gi")
			if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
				t.Error("attack pod may run as root")
			}

			js := judge.Spec
			if js.CompletionMode != nil && *js.CompletionMode == batchv1.IndexedCompletion {
				t.Error("the judge Job is indexed; it is one pod")
			}
			if js.Completions == nil || *js.Completions != 1 {
				t.Errorf("judge completions %v, want 1", js.Completions)
			}
			jc := js.Template.Spec.Containers[0]
			if !slices.Equal(jc.Args, []string{"judge", "/out", "--out=/out/judged"}) || jc.Image != p.Image {
				t.Errorf("judge runs %s %v, want harness judge /out", jc.Image, jc.Args)
			}
			if !hasMount(jc, "outcomes", "/out") || !claims(js.Template.Spec, "outcomes", "rlharness-outcomes") {
				t.Error("the judge does not mount the outcome volume at /out")
			}
			guaranteed(t, "judge", jc, "1", "4Gi")
		})
	}
}

func hasMount(c corev1.Container, name, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name && m.MountPath == path })
}

func claims(pod corev1.PodSpec, volume, claim string) bool {
	return slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Name == volume && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim
	})
}

// guaranteed checks that requests equal limits (Guaranteed QoS: a throttled generator falls
// behind its schedule) at the given CPU and memory.
func guaranteed(t *testing.T, who string, c corev1.Container, cpu, mem string) {
	t.Helper()
	for _, r := range []struct {
		name corev1.ResourceName
		want string
	}{{corev1.ResourceCPU, cpu}, {corev1.ResourceMemory, mem}} {
		req, lim := c.Resources.Requests[r.name], c.Resources.Limits[r.name]
		if req.Cmp(resource.MustParse(r.want)) != 0 || lim.Cmp(resource.MustParse(r.want)) != 0 {
			t.Errorf("%s %s: request %s limit %s, want both %s", who, r.name, req.String(), lim.String(), r.want)
		}
	}
}

func TestStrictDecodeRejectsAnUnknownField(t *testing.T) {
	m, err := Render(testParams(2))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(m.Judge, []byte("  backoffLimit: 0\n"), []byte("  backoffLimit: 0\n  backofLimit: 3\n"), 1)
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(docs(bad)[0], &j); err == nil || !strings.Contains(err.Error(), "backofLimit") {
		t.Fatalf("a misspelt field decoded: err %v", err)
	}
}

func TestRenderRefusesBadParams(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Params)
		want string
	}{
		{"no shards", func(p *Params) { p.Shards = 0 }, "--shards"},
		{"no image", func(p *Params) { p.Image = "" }, "--image"},
		{"no targets", func(p *Params) { p.Targets = nil }, "--target-url"},
		{"target without scheme", func(p *Params) { p.Targets = []string{"replica:8080"} }, "http://"},
		{"bad name", func(p *Params) { p.Name = "Load_Test" }, "--name"},
		{"bad cpu", func(p *Params) { p.CPU = "two" }, "--cpu"},
		{"no start", func(p *Params) { p.Start = time.Time{} }, "start"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := testParams(2)
			tc.edit(&p)
			if _, err := Render(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to name %q", err, tc.want)
			}
		})
	}
}

func TestDefaultStartIsAWindowEdgeAfterTheLead(t *testing.T) {
	p := testParams(2)
	now := time.Date(2026, 12, 3, 7, 0, 30, 0, time.UTC)
	for _, tc := range []struct {
		scale float64
		want  time.Time
	}{
		{1, time.Date(2026, 12, 3, 7, 3, 0, 0, time.UTC)},    // 07:02:30 → the next minute
		{0.2, time.Date(2026, 12, 3, 7, 2, 36, 0, time.UTC)}, // 12 s windows
	} {
		p.Schedule.TimeScale = tc.scale
		if got := p.DefaultStart(now); !got.Equal(tc.want) {
			t.Errorf("scale %v: start %v, want %v", tc.scale, got, tc.want)
		}
	}
}
