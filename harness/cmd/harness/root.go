package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "harness",
		Short:         "Prove a distributed rate limiter's promises against its models and real infrastructure",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newModelCmd(), newLoadtestCmd(), newReportCmd(), newRunCmd(), newBenchCmd())
	addRunSubcommands(root, newRunClaimCheckCmd())
	return root
}

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Reproduce the source documents' model tables with the project's own code",
	}
	var asJSON bool
	rl := &cobra.Command{
		Use:   "ratelimit",
		Short: "Sizing, window-algorithm and distributed-counter tables of the rate-limiter document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := model.RunRateLimit()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			return model.WriteRateLimit(cmd.OutOrStdout(), m)
		},
	}
	rl.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON instead of tables")
	cmd.AddCommand(rl, newModelAutoscaleCmd(), newModelClaimCheckCmd())
	return cmd
}

func newModelAutoscaleCmd() *cobra.Command {
	var asJSON bool
	as := &cobra.Command{
		Use:   "autoscale",
		Short: "Metric-delay sweep, dampers and step test of the horizontal-scaling document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := model.RunAutoscale()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			return model.WriteAutoscale(cmd.OutOrStdout(), m)
		},
	}
	as.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON instead of tables")
	return as
}
