package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "harness",
		Short:         "Prove a distributed rate limiter's promises against its models and real infrastructure",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version: the commit the binary was built from, as result files record it.
		Version: commitOr("unknown"),
	}
	root.AddCommand(newModelCmd(), newLoadtestCmd(), newReportCmd(), newRunCmd(), newBenchCmd(), newAttackCmd(), newJudgeCmd(), newDeployCmd(), newHuntCmd(), newPlanCmd())
	addRunSubcommands(root, newRunClaimCheckCmd())
	return root
}

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Reproduce the source documents' model tables with the project's own code",
	}
	cmd.AddCommand(
		modelCmd("ratelimit", "Sizing, window-algorithm and distributed-counter tables of the rate-limiter document",
			model.RunRateLimit, model.WriteRateLimit),
		modelCmd("autoscale", "Metric-delay sweep, dampers and step test of the horizontal-scaling document",
			model.RunAutoscale, model.WriteAutoscale),
		modelCmd("claimcheck", "Message bytes, fault-free and fault-window runs and K01-scale cost of the claim-check document",
			model.RunClaimCheck, model.WriteClaimCheck),
	)
	return cmd
}

// modelCmd is one document's model: its tables as text, or with --json its figures.
func modelCmd[T any](use, short string, run func() (T, error), write func(io.Writer, T) error) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := run()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			return write(cmd.OutOrStdout(), m)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON instead of tables")
	return cmd
}
