package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeproof/rlharness/harness/loadtest"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
	"github.com/edgeproof/rlharness/reports"
)

func newReportCmd() *cobra.Command {
	var baseline, out, keep string
	var peerTable, history bool
	cmd := &cobra.Command{
		Use:   "report RUN_DIR | report --history RUN_DIR... | report --peer-table-md RUN_DIR...",
		Short: "Write report.html and junit.xml for a run directory from its saved results",
		Long: `Reads RUN_DIR/summary.json and the scenarios' outcomes.csv and writes RUN_DIR/report.html
(self-contained: charts inlined, nothing fetched) and RUN_DIR/junit.xml (one test case per
gated check). With --baseline, compares with an earlier summary.json and exits 1 on a
regression beyond tolerance: p99 latency +50 %, achieved/asked rate -10 %, overshoot +0.05.
A directory of 'harness run claimcheck' (claimcheck.json) or 'harness run autoscale'
(autoscale.json) gets its own section instead, and no JUnit file. With --peer-table-md RUN_DIR...
it writes nothing and prints the runs' systems side by side as one Markdown table instead
(docs/results/peers.md is this, for the peers', Traefik's and the gateways' runs: make results);
--keep PAGE keeps the rows of PAGE's table for the systems no RUN_DIR ran, so that one run made
again replaces its own rows only.

With --history it reads the summary.json of every RUN_DIR given (the nightly workflow's
artifacts; a summary.json file may stand for its directory), orders the runs by started_at and
writes one self-contained page (--out, default history.html): per gated check and scenario, the
figure over the runs with the gate's threshold and each run's commit, generator-bound runs
marked as such and never counted as regressions, and a table of the first run where a figure
crossed its gate. It exits with the newest run's code: 0 it passed, 1 a gate failed, 3 it was
generator-bound; 2 when no RUN_DIR holds a summary.json.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if history || peerTable {
				return cobra.MinimumNArgs(1)(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if keep != "" && !peerTable {
				return errors.New("--keep is a --peer-table-md flag: add --peer-table-md, or leave it out")
			}
			if history {
				return writeHistory(cmd.OutOrStdout(), args, out)
			}
			if peerTable {
				return writePeerTable(cmd.OutOrStdout(), keep, args...)
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
	cmd.Flags().StringVar(&keep, "keep", "", "with --peer-table-md: a page holding the table between its peer-table markers (docs/results/peers.md); its rows for systems no RUN_DIR ran stay, in their place")
	cmd.Flags().BoolVar(&history, "history", false, "read the runs given (RUN_DIR...) and write their trend page instead of a report")
	cmd.Flags().StringVar(&out, "out", reports.HistoryFile, "with --history: the trend page's path")
	return cmd
}

// writeHistory writes the trend of the runs in dirs to out and exits with the newest run's
// code: a failed gate 1, generator-bound 3.
func writeHistory(w io.Writer, dirs []string, out string) error {
	runs, missing, err := reports.ReadHistory(dirs)
	if err != nil {
		return err
	}
	for _, m := range missing {
		fmt.Fprintf(w, "not in the trend: %s\n", m)
	}
	if len(runs) == 0 {
		return fmt.Errorf("--history: none of the %d paths holds a %s: give run directories harness loadtest wrote", len(dirs), result.SummaryFile)
	}
	h := reports.BuildHistory(runs, missing, time.Now())
	if err := reports.WriteHistory(out, h); err != nil {
		return err
	}
	crossed := h.Crossings()
	fmt.Fprintf(w, "history: %s (%d runs, %d gated figures, %d crossed their gate)\n", out, len(runs), len(h.Series), len(crossed))
	for _, s := range crossed {
		if c := s.Crossing; c.First >= 0 {
			p := s.Points[c.First]
			fmt.Fprintf(w, "  %s %s: first past its gate in run %d (%s): %s %s %s\n", s.Scenario, s.Check, p.Run+1, runs[p.Run].Commit(),
				result.Number(p.Figure), p.Op, result.Number(p.Threshold))
		} else {
			fmt.Fprintf(w, "  %s %s: past its gate only in generator-bound runs (%d)\n", s.Scenario, s.Check, len(c.BoundPast))
		}
	}
	newest := h.Newest()
	switch o := newest.Summary.Outcome; o {
	case outcome.Pass:
		return nil
	case outcome.NotMade:
		return &outcomeError{o, fmt.Sprintf("NOT MADE: the newest run (%s) could not be made: %s; see %s", newest.Path, strings.Join(newest.Summary.NotMade, "; "), out)}
	case outcome.GeneratorBound:
		return &outcomeError{o, fmt.Sprintf("the newest run (%s) is generator-bound: its figures are not evidence either way; see %s", newest.Path, out)}
	default:
		return &outcomeError{o, fmt.Sprintf("the newest run (%s) is %s; see %s", newest.Path, o.Word(), out)}
	}
}

// writePeerTable prints the peer table of the runs in dirs as Markdown, with keep (a page's
// path, or "") the rows of the page's table for the systems none of them ran.
func writePeerTable(out io.Writer, keep string, dirs ...string) error {
	var rows []result.PeerRow
	for _, dir := range dirs {
		s, err := result.Read[result.Summary](dir, result.SummaryFile)
		if err != nil {
			return err
		}
		r := result.PeerTable(s.Scenarios)
		if len(r) == 0 {
			return fmt.Errorf("%s has no system to put side by side: run harness loadtest with --target (make loadtest-peers)", dir)
		}
		// A system's run on a topology and its run without one make one row.
		rows = result.MergePeerRows(rows, r)
	}
	table := result.PeerTableMarkdown(rows)
	if keep != "" {
		page, err := os.ReadFile(keep)
		if err != nil {
			return err
		}
		if table, err = result.KeepPeerRows(string(page), rows); err != nil {
			return fmt.Errorf("--keep %s: %w", keep, err)
		}
	}
	_, err := io.WriteString(out, table)
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
