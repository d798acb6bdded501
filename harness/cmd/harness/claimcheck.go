package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
)

func newModelClaimCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "claimcheck",
		Short: "Message bytes, fault-free and fault-window runs and K01-scale cost of the claim-check document",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := model.RunClaimCheck()
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			return model.WriteClaimCheck(cmd.OutOrStdout(), m)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON instead of tables")
	return cmd
}
