package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/plan"
)

func newPlanCmd() *cobra.Command {
	ask := plan.Ask{Rate: model.PeakRate, Replicas: model.Nodes, Clients: model.TrackedClients, System: plan.DefaultSystem, Utilisation: plan.DefaultUtilisation}
	var from []string
	var check string
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Size a fleet from one replica's measured share: cores for the generator, the replicas and Redis",
		Long: `Fits each part's busy cores, as measured by harness bench --slice at several rates, to a fixed
part plus a cost a request (the replica's and Redis's also a cost a request past a node's budget:
the bounded design's store calls, counted on the traffic a replica is sent; the generator's also a
cost a request for each busy core the replica and Redis keep beside it), and prints the cores
each part of a fleet needs at --rate over --replicas for --clients clients: the generator's shards
(the harness's own CPU), the replicas (the replica process's CPU, /proc), Redis (INFO cpu; past one
busy core, Redis Cluster masters), each sized to keep at most --utilisation of its cores busy,
with memory; the costs it fitted and the runs they came from; and the machine that holds them.

The balancer decides the store's share: by default it spreads each client's requests over the
replicas (every replica sees all --clients, each at 1/--replicas of its rate); --sticky keeps each
client on one replica (each sees --clients / --replicas, each sending it all its requests).

Without --from the plan uses the reference costs built into the harness (make plan-reference,
harness/plan/reference) and says so in its first line; --from names bench.json files, or
directories holding them, of your own slice runs (make bench-slice, make plan-reference).

--check RUN puts the plan to the test: it plans, from the costs, the rate, clients and node count
RUN was sent for its one replica, and prints each part's busy cores predicted beside those RUN
measured; it exits 1 when a part is more than 15 % off. RUN must not be one of the runs fitted to:
fit --from the lower rates, check the highest (docs/bench.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ins, builtin, err := planInputs(from)
			if err != nil {
				return err
			}
			costs, err := plan.FitCosts(ins, ask.System, builtin)
			if err != nil {
				return err
			}
			if check != "" {
				other, err := plan.Read([]string{check})
				if err != nil {
					return err
				}
				if len(other) != 1 {
					return fmt.Errorf("--check %s: give one slice run's bench.json (it names %d)", check, len(other))
				}
				ch, err := plan.CheckAgainst(costs, other[0])
				if err != nil {
					return err
				}
				if err := plan.WriteCheck(cmd.OutOrStdout(), ch); err != nil {
					return err
				}
				if len(ch.Outside) > 0 {
					return &gateError{msg: fmt.Sprintf("the plan is more than %.0f %% off %s: %s", 100*plan.CheckTolerance, check, ch.Off())}
				}
				return nil
			}
			p, err := plan.Make(costs, ask)
			if err != nil {
				return err
			}
			return plan.Write(cmd.OutOrStdout(), p)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&from, "from", nil, "bench.json files of harness bench --slice, or directories holding them, whose costs the plan fits (default: the reference costs built in, make plan-reference)")
	f.Float64Var(&ask.Rate, "rate", ask.Rate, "req/s the fleet must carry (HS2)")
	f.IntVar(&ask.Replicas, "replicas", ask.Replicas, "replicas the rate is spread over (HS4)")
	f.IntVar(&ask.Clients, "clients", ask.Clients, "clients the fleet tracks (HS1)")
	f.BoolVar(&ask.Sticky, "sticky", false, "the balancer keeps each client on one replica (default: it spreads each client's requests over the replicas)")
	f.StringVar(&ask.System, "system", ask.System, "the slice's system whose costs are used: bounded, document, redis_rate, noop, or a target file's name")
	f.Float64Var(&ask.Utilisation, "utilisation", ask.Utilisation, "the share of its cores each part may keep busy, in (0, 1]")
	f.StringVar(&check, "check", "", "another slice run's bench.json: plan its rate from the costs and print predicted beside measured; exit 1 when a part is more than 15 % off")
	return cmd
}

// planInputs are the runs a plan fits: --from's, else the reference costs built in.
func planInputs(from []string) ([]plan.Input, bool, error) {
	if len(from) == 0 {
		ins, err := plan.Reference()
		return ins, true, err
	}
	ins, err := plan.Read(from)
	return ins, false, err
}
