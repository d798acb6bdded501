package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/scaletest"
	"github.com/edgeproof/rlharness/reports"
)

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a document's system on real infrastructure",
	}
	cmd.AddCommand(newRunAutoscaleCmd())
	return cmd
}

func newRunAutoscaleCmd() *cobra.Command {
	cfg := scaletest.DefaultConfig()
	var rounds int
	var run *runFlags
	cmd := &cobra.Command{
		Use:   "autoscale",
		Short: "Scale real worker replicas with the document's controller under the replayed load series",
		Long: `Starts 12 worker replicas (Docker by default, or local processes) and stops all but 2, then
replays the horizontal-scaling document's 120-round load series with Vegeta, spread across
the replicas that are ready. Every round the replicas' utilisation gauges are scraped and
averaged, delayed by --delay more rounds, and handed to the controller, whose count starts and
stops replicas through the fleet; start-up times are measured.

So that one small machine can generate the load, rates are scaled by --rate-scale (0.1: peak
392 req/s instead of 3915) and so is each replica's saturation throughput (117.647 instead of
1176.47 req/s): the replica counts are the document's. A round lasts --round (1s).

The run is scored with the document's measures against the ideal for the offered load, beside
the model's figures for the same settings; autoscale.json and report.html go to --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rounds > 0 {
				s := model.Series()
				if rounds > len(s) {
					return fmt.Errorf("--rounds %d: the series has %d rounds", rounds, len(s))
				}
				cfg.Series = s[:rounds]
			}
			cfg.Logger = run.logger(os.Stderr)
			cfg.Progress = cmd.OutOrStdout()
			res, err := scaletest.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if err := scaletest.WriteResult(cmd.OutOrStdout(), res); err != nil {
				return err
			}
			page, err := reports.GenerateAutoscale(cfg.OutDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "result: %s/autoscale.json, report: %s\n", cfg.OutDir, page)
			return nil
		},
	}
	f := cmd.Flags()
	run = newRunFlags(f, &cfg.Provider, &cfg.Network, nil, &cfg.OutDir, "run directory for autoscale.json and report.html")
	f.IntVar(&cfg.Delay, "delay", cfg.Delay, "metric delay added to the real pipeline, rounds (ZO28: 3)")
	f.IntVar(&cfg.Window, "window", cfg.Window, "stabilization window, rounds (ZO29); 0 none")
	f.IntVar(&cfg.Step, "step", cfg.Step, "step limit, replicas per round (ZO30); 0 none")
	f.DurationVar(&cfg.Round, "round", cfg.Round, "length of a round")
	f.Float64Var(&cfg.RateScale, "rate-scale", cfg.RateScale, "multiplies the series' rates and each replica's saturation throughput")
	f.IntVar(&rounds, "rounds", 0, "replay only the first N rounds of the series (0: all 120)")
	f.IntVar(&cfg.ScrapesPerRound, "scrapes", cfg.ScrapesPerRound, "utilisation scrapes per round, averaged")
	f.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "each worker's warm-up before it reports ready")
	return cmd
}
