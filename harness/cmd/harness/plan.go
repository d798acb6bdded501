package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/plan"
	"github.com/edgeproof/rlharness/harness/result"
)

func newPlanCmd() *cobra.Command {
	ask := plan.Ask{Rate: model.PeakRate, Replicas: model.Nodes, Clients: model.TrackedClients, System: plan.DefaultSystem, Utilisation: plan.DefaultUtilisation}
	var from, check string
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Size a fleet from one replica's measured share: cores for the generator, the replicas and Redis",
		Long: `Reads the bench.json of harness bench --slice (make bench-slice) and prints the cores each
part of a fleet needs at --rate over --replicas: the generator's shards (the harness's own CPU per
request sent), the replicas (the replica process's CPU per decision, /proc), Redis (its CPU per
request, INFO cpu; past one busy core, Redis Cluster masters), with memory for --clients, each
part sized to keep at most --utilisation of its cores busy; every per-request cost it used and
where it came from (file, system, figure); and the machine that holds them.

--check OTHER puts the plan to the test: it plans, from --from's costs, the rate another slice
run was sent (for its one replica) and prints each part's busy cores predicted beside those
OTHER measured. Run the slice at a low rate, then at a higher one this machine still sends, and
check the first against the second (docs/bench.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := readBench(from)
			if err != nil {
				return err
			}
			if check != "" {
				other, err := readBench(check)
				if err != nil {
					return err
				}
				p, checks, err := plan.Check(b, from, other, check, ask.System)
				if err != nil {
					return err
				}
				return plan.WriteCheck(cmd.OutOrStdout(), p, checks, check)
			}
			p, err := plan.Make(b, from, ask)
			if err != nil {
				return err
			}
			return plan.Write(cmd.OutOrStdout(), p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "runs/bench-slice/"+result.BenchFile, "the bench.json of harness bench --slice whose costs the plan uses")
	f.Float64Var(&ask.Rate, "rate", ask.Rate, "req/s the fleet must carry (HS2)")
	f.IntVar(&ask.Replicas, "replicas", ask.Replicas, "replicas the rate is spread over (HS4)")
	f.IntVar(&ask.Clients, "clients", ask.Clients, "clients the fleet tracks, for memory (HS1): every replica is sized to hold them all")
	f.StringVar(&ask.System, "system", ask.System, "the slice's system whose costs are used: bounded, document, redis_rate, noop, or a target file's name")
	f.Float64Var(&ask.Utilisation, "utilisation", ask.Utilisation, "the share of its cores each part may keep busy, in (0, 1]")
	f.StringVar(&check, "check", "", "another slice run's bench.json: plan its rate from --from's costs and print predicted beside measured")
	return cmd
}

// readBench reads a bench.json by its path.
func readBench(path string) (result.Bench, error) {
	return result.Read[result.Bench](filepath.Dir(path), filepath.Base(path))
}
