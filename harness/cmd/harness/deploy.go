package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/deploy"
	"github.com/edgeproof/rlharness/harness/loadtest"
)

func newDeployCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Manifests that run a load test's shards on a cluster",
	}
	p := deploy.DefaultParams()
	def := loadtest.DefaultConfig()
	p.Schedule = def.Spec
	p.Schedule.Replicas = 0
	var start, out string
	render := &cobra.Command{
		Use:   "render --shards N --image IMAGE --target-url URL... [--out DIR]",
		Short: "Render the Kubernetes Indexed Job of N attack shards, its volume, and the judge Job",
		Long: `Writes attack.yaml (a PersistentVolumeClaim for the outcomes and an Indexed Job of N
'harness attack' pods, JOB_COMPLETION_INDEX their shard) and judge.yaml (a Job running
'harness judge' on the volume) to --out, or both to stdout. Every shard gets the same
--start: by default the next window edge at least --lead from now, so render right before
'kubectl apply'. See docs/shards.md, "Running across machines".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p.Now = time.Now()
			if start != "" {
				t, err := time.Parse(time.RFC3339Nano, start)
				if err != nil {
					return fmt.Errorf("--start %q: want an RFC 3339 time: %w", start, err)
				}
				p.Start = t
			} else {
				p.Start = p.DefaultStart(p.Now)
			}
			m, err := deploy.Render(p)
			if err != nil {
				return err
			}
			if out == "" {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s---\n%s", m.Attack, m.Judge)
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			for name, b := range map[string][]byte{"attack.yaml": m.Attack, "judge.yaml": m.Judge} {
				if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
					return fmt.Errorf("write %s: %w", name, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s/attack.yaml, %s/judge.yaml: %d shards from %s\n", out, out, p.Shards, p.Start.UTC().Format(time.RFC3339))
			return nil
		},
	}
	f := render.Flags()
	f.IntVar(&p.Shards, "shards", p.Shards, "attack shards: the Job's completions and parallelism")
	f.StringVar(&p.Image, "image", p.Image, "the harness image every pod runs (scripts/build-images.sh harness, pushed where the cluster pulls)")
	f.StringArrayVar(&p.Targets, "target-url", nil, "a replica's base URL as the pods reach it, once per replica index")
	f.StringVar(&p.ClockRef, "clock-ref", "", "Redis host:port every shard reads TIME from (e.g. the limiter's Redis), to bound the skew")
	f.StringVar(&start, "start", "", "the shards' common start (RFC 3339); default: the next window edge after --lead")
	f.DurationVar(&p.Lead, "lead", p.Lead, "how far ahead the default start is: time to apply the Job and start every pod")
	f.StringVar(&p.Name, "name", p.Name, "name prefix of the resources")
	f.StringVar(&p.Namespace, "namespace", p.Namespace, "namespace of the resources")
	f.StringVar(&p.StorageClass, "storage-class", "", "storage class of the outcome volume (ReadWriteMany); empty: the cluster's default")
	f.StringVar(&p.Storage, "storage", p.Storage, "size of the outcome volume")
	f.StringVar(&p.CPU, "cpu", p.CPU, "CPU request and limit of each shard (Guaranteed QoS: a throttled generator falls behind)")
	f.StringVar(&p.Memory, "memory", p.Memory, "memory request and limit of each shard")
	specFlags(f, &p.Schedule, "")
	f.IntVar(&p.Schedule.Replicas, "replicas", 0, "replica indexes (0: one per --target-url)")
	f.StringVar(&out, "out", "", "directory for attack.yaml and judge.yaml; empty: both to stdout")
	cmd.AddCommand(render)
	return cmd
}
