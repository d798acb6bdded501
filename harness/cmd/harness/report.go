package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/reports"
)

func newReportCmd() *cobra.Command {
	var baseline string
	var peerTable bool
	cmd := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Write report.html and junit.xml for a run directory from its saved results",
		Long: `Reads RUN_DIR/summary.json and the scenarios' outcomes.csv and writes RUN_DIR/report.html
(self-contained: charts inlined, nothing fetched) and RUN_DIR/junit.xml (one test case per
gated check). With --baseline, compares with an earlier summary.json and exits 1 on a
regression beyond tolerance: p99 latency +50 %, achieved/asked rate -10 %, overshoot +0.05.
A directory of 'harness run claimcheck' (claimcheck.json) or 'harness run autoscale'
(autoscale.json) gets its own section instead, and no JUnit file. With --peer-table-md it
writes nothing and prints the run's systems side by side as a Markdown table instead (the
README's peer table is this, for make loadtest-peers).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if peerTable {
				return writePeerTable(cmd.OutOrStdout(), args[0])
			}
			if left := loadtest.Unjudged(args[0]); len(left) > 0 {
				return fmt.Errorf("%s: the run started %s but its %s does not hold it: it was killed before it finished (or it still runs); 'harness judge %s' judges the outcomes it wrote (marked incomplete) and writes the report",
					args[0], strings.Join(left, ", "), result.SummaryFile, args[0])
			}
			return writeReport(cmd.OutOrStdout(), args[0], baseline)
		},
	}
	cmd.Flags().StringVar(&baseline, "baseline", "", "an earlier run's summary.json (or its run directory) to compare with")
	cmd.Flags().BoolVar(&peerTable, "peer-table-md", false, "print the run's systems side by side as a Markdown table and write nothing")
	return cmd
}

// writePeerTable prints the peer table of the run in dir as Markdown.
func writePeerTable(out io.Writer, dir string) error {
	s, err := result.Read[result.Summary](dir, result.SummaryFile)
	if err != nil {
		return err
	}
	rows := result.PeerTable(s.Scenarios)
	if len(rows) == 0 {
		return fmt.Errorf("%s has no system to put side by side: run harness loadtest with --target (make loadtest-peers)", dir)
	}
	_, err = io.WriteString(out, result.PeerTableMarkdown(rows))
	return err
}

// writeReport writes the run's report and JUnit file, prints their paths and the baseline's
// regressions; a regression is a gate error (exit 1).
func writeReport(out io.Writer, dir, baseline string) error {
	opt := reports.Options{BaselinePath: baseline}
	if baseline != "" {
		b, err := reports.ReadBaseline(baseline)
		if err != nil {
			return err
		}
		opt.Baseline = &b
	}
	w, err := reports.Generate(dir, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n", w.HTML)
	if w.JUnit != "" {
		fmt.Fprintf(out, "junit: %s\n", w.JUnit)
	}
	if baseline == "" {
		return nil
	}
	for _, d := range w.Regressions {
		fmt.Fprintf(out, "%s\n", d)
	}
	if len(w.Regressions) > 0 {
		return &gateError{msg: fmt.Sprintf("%d regression(s) against the baseline %s; see %s", len(w.Regressions), baseline, w.HTML)}
	}
	fmt.Fprintf(out, "baseline %s: no regression beyond tolerance (%d figures compared)\n", baseline, len(w.Deltas))
	return nil
}
