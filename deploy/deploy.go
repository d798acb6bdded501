// Package deploy renders the manifests that run a load test's shards beyond one machine: a
// Kubernetes Indexed Job of `harness attack` pods (JOB_COMPLETION_INDEX is the shard index)
// writing to a shared volume, and a Job that runs `harness judge` on it. Kubernetes is the
// distributed engine; the harness brings only the shards and the judge.
package deploy

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/edgeproof/rlharness/harness/schedule"
)

//go:embed k8s/*.yaml.tmpl
var templates embed.FS

var tmpl = template.Must(template.ParseFS(templates, "k8s/*.yaml.tmpl"))

// Params are what the manifests are rendered from.
type Params struct {
	Name, Namespace string
	Shards          int
	Image           string
	Targets         []string // replica base URLs as the pods reach them
	ClockRef        string   // Redis host:port for the shards' clock offsets
	Start           time.Time
	Now             time.Time     // when the manifests are rendered; zero: Start − Lead
	Lead            time.Duration // DefaultStart's margin
	Schedule        schedule.Spec
	StorageClass    string
	Storage         string // the outcome volume's size
	CPU, Memory     string // each shard's request = limit
	JudgeMemory     string
}

// DefaultParams are four shards of the harness image, 2 CPUs and 1 GiB each.
func DefaultParams() Params {
	return Params{Name: "rlharness", Namespace: "default", Shards: 4, Image: "rlharness/harness:dev",
		Lead: 2 * time.Minute, Storage: "5Gi", CPU: "2", Memory: "1Gi", JudgeMemory: "4Gi"}
}

// DefaultStart is the first window edge since the epoch at least Lead after now: time to
// apply the Job and for every pod to pull its image and start.
func (p Params) DefaultStart(now time.Time) time.Time {
	w := p.Schedule.Window()
	if w <= 0 {
		return now.Add(p.Lead)
	}
	ns := now.Add(p.Lead).UnixNano()
	return time.Unix(0, (ns/int64(w)+1)*int64(w)).UTC()
}

// Manifests are the two files the steps apply in turn.
type Manifests struct {
	Attack []byte // the outcome volume and the Indexed Job of attack shards
	Judge  []byte // the judge Job
}

var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (p Params) check() error {
	switch {
	case p.Shards < 1:
		return fmt.Errorf("--shards must be >= 1 (got %d)", p.Shards)
	case p.Image == "":
		return fmt.Errorf("--image is required: the harness image the cluster can pull")
	case len(p.Targets) == 0:
		return fmt.Errorf("--target-url is required: the replicas' base URLs as the pods reach them")
	case !dnsName.MatchString(p.Name) || len(p.Name) > 40:
		return fmt.Errorf("--name %q: lower-case letters, digits and '-', at most 40 characters (it prefixes resource names)", p.Name)
	case !dnsName.MatchString(p.Namespace):
		return fmt.Errorf("--namespace %q is not a valid namespace name", p.Namespace)
	case p.Start.IsZero():
		return fmt.Errorf("no start instant: every shard must be given the same one")
	case schedule.CheckTimeScale(p.Schedule.TimeScale) != nil:
		return schedule.CheckTimeScale(p.Schedule.TimeScale)
	}
	for _, t := range p.Targets {
		if !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
			return fmt.Errorf("--target-url %q must start with http:// or https://", t)
		}
	}
	for flag, q := range map[string]string{"--storage": p.Storage, "--cpu": p.CPU, "--memory": p.Memory, "judge memory": p.JudgeMemory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("%s %q: %w", flag, q, err)
		}
	}
	return nil
}

// Render fills the templates under k8s/ with p.
func Render(p Params) (Manifests, error) {
	if err := p.check(); err != nil {
		return Manifests{}, err
	}
	if p.Schedule.Replicas == 0 {
		p.Schedule.Replicas = len(p.Targets)
	}
	// The window and the pod's grace: the schedule's three windows, the wait for the start,
	// and ten minutes for building the schedule and writing the outcomes.
	now := p.Now
	if now.IsZero() {
		now = p.Start.Add(-p.Lead)
	}
	deadline := int64(p.Start.Sub(now).Seconds()) + int64(3*p.Schedule.Window().Seconds()) + 600
	data := struct {
		Params
		StartRFC3339, TimeScale, Rate string
		Replicas                      int
		Deadline                      int64
	}{p, p.Start.UTC().Format(time.RFC3339Nano), strconv.FormatFloat(p.Schedule.TimeScale, 'g', -1, 64),
		strconv.FormatFloat(p.Schedule.Rate, 'g', -1, 64), p.Schedule.Replicas, max(deadline, 600)}
	var m Manifests
	for name, dst := range map[string]*[]byte{"attack.yaml.tmpl": &m.Attack, "judge.yaml.tmpl": &m.Judge} {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
			return Manifests{}, fmt.Errorf("render %s: %w", name, err)
		}
		*dst = b.Bytes()
	}
	return m, nil
}
