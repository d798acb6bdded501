// Package reports turns a run directory (summary.json and the scenarios' outcomes.csv) into
// a self-contained HTML report, a JUnit file for CI and a comparison with a baseline. It
// reads result files only: it knows nothing of Docker or of the fleet.
package reports

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// HTMLFile is the name of the HTML report in a run directory.
const HTMLFile = "report.html"

// Options are what a report is generated with beyond the run directory.
type Options struct {
	// Baseline, when set, is an earlier run's summary to compare with.
	Baseline *result.Summary
	// BaselinePath names it in the report.
	BaselinePath string
	Tolerance    Tolerance
}

// Written is what Generate wrote and found.
type Written struct {
	HTML, JUnit string
	Summary     result.Summary
	Deltas      []Delta
	Regressions []Delta
}

// Generate reads dir/summary.json and the scenarios' outcomes, and writes dir/report.html
// and dir/junit.xml. Regressions against the baseline are returned, not an error: the
// caller decides the exit code.
func Generate(dir string, opt Options) (Written, error) {
	w := Written{HTML: filepath.Join(dir, HTMLFile), JUnit: filepath.Join(dir, JUnitFile)}
	if isRunOf(dir, result.ClaimCheckFile) {
		// A harness run claimcheck directory: its own section, no gates, no JUnit.
		html, err := GenerateClaimCheck(dir)
		return Written{HTML: html}, err
	}
	if isRunOf(dir, result.AutoscaleFile) {
		// A harness run autoscale directory: its own section, no gates, no JUnit.
		html, err := GenerateAutoscale(dir)
		return Written{HTML: html}, err
	}
	if isRunOf(dir, result.HuntFile) {
		// A harness hunt directory: the families' worst cases, no JUnit.
		html, err := GenerateHunt(dir)
		return Written{HTML: html}, err
	}
	if isRunOf(dir, result.BenchFile) {
		// A harness bench directory: the performance table, no gates, no JUnit.
		html, err := GenerateBench(dir)
		return Written{HTML: html}, err
	}
	sum, err := result.Read[result.Summary](dir, result.SummaryFile)
	if err != nil {
		return w, err
	}
	w.Summary = sum
	if opt.Tolerance == (Tolerance{}) {
		opt.Tolerance = DefaultTolerance()
	}
	if opt.Baseline != nil {
		w.Deltas = Compare(*opt.Baseline, sum, opt.Tolerance)
		w.Regressions = Regressions(w.Deltas)
	}
	page, err := build(dir, sum, opt, w.Deltas)
	if err != nil {
		return w, err
	}
	f, err := os.Create(w.HTML)
	if err != nil {
		return w, fmt.Errorf("write the report: %w", err)
	}
	if err := page.render(f); err != nil {
		f.Close()
		return w, err
	}
	if err := f.Close(); err != nil {
		return w, fmt.Errorf("write the report: %w", err)
	}
	j, err := os.Create(w.JUnit)
	if err != nil {
		return w, fmt.Errorf("write the junit file: %w", err)
	}
	if err := WriteJUnit(j, sum); err != nil {
		j.Close()
		return w, err
	}
	return w, j.Close()
}

// ReadBaseline reads an earlier run's summary.json (or the run directory holding it).
func ReadBaseline(path string) (result.Summary, error) {
	dir, name := path, result.SummaryFile
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		dir, name = filepath.Split(path)
	}
	s, err := result.Read[result.Summary](dir, name)
	if err != nil {
		return s, fmt.Errorf("--baseline: %w", err)
	}
	return s, nil
}

// readOutcomes buckets a scenario's outcomes.csv by send time. A missing file is no
// series (ok false), not an error: a run may have been copied without its outcomes.
func readOutcomes(path string, bucket time.Duration) (outcomeSeries, bool, error) {
	o := outcomeSeries{Bucket: bucket}
	grow := func(v []float64, i int) []float64 {
		for len(v) <= i {
			v = append(v, 0)
		}
		return v
	}
	_, err := traffic.ReadFile(path, func(x traffic.Outcome) error {
		i := int(max(x.Sent, 0) / bucket)
		o.Accepted, o.Rejected, o.Errored = grow(o.Accepted, i), grow(o.Rejected, i), grow(o.Errored, i)
		switch {
		case x.Code >= 200 && x.Code < 300:
			o.Accepted[i]++
		case x.Code == 429:
			o.Rejected[i]++
		default:
			o.Errored[i]++
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("%s: %w", path, err)
	}
	return o, true, nil
}

// windowRow is one line of the window table: the model's figure beside the fleet's.
type windowRow struct {
	Pattern                        string
	Model                          result.WindowRow
	Measured                       bool
	Offered, Accepted, Busiest     int
	Overshoot                      float64
	ModelOver, MeasuredOver, Agree bool
	// LockedOut says the fleet admitted the client less than accounting.DefaultMinShare of its
	// limit in a window while it sent steadily over it (the lock-out gate's, on the gated
	// clock), LockedShare the share: the model's one node never does, so the verdicts differ.
	LockedOut   bool
	LockedShare float64
}

// distRow is the document's distributed-counter model beside the scenario's measurement.
type distRow struct {
	Model result.DistRow
}

func probe(sc result.ScenarioResult, pattern string) (result.ProbeResult, bool) {
	for _, p := range sc.Probes {
		if strings.HasSuffix(p.ID, "-"+pattern) || p.ID == pattern {
			return p, true
		}
	}
	return result.ProbeResult{}, false
}

func windowRows(m *result.RateLimitModel, sc result.ScenarioResult) []windowRow {
	if m == nil {
		return nil
	}
	var out []windowRow
	for _, r := range m.Windows {
		if r.Algorithm != sc.Algorithm {
			continue
		}
		row := windowRow{Pattern: r.Pattern, Model: r, ModelOver: r.Ratio > m.Gate}
		if p, ok := probe(sc, r.Pattern); ok {
			row.Measured, row.Offered, row.Accepted, row.Busiest, row.Overshoot = true, p.Offered, p.Accepted, p.BusiestAccepted, p.Overshoot
			row.MeasuredOver = p.Overshoot > m.Gate
			row.LockedShare = p.SteadyShareArrival
			if sc.Clocks == nil || sc.Clocks.Gate == result.ClockClient {
				row.LockedShare = p.SteadyShare
			}
			row.LockedOut = p.SteadyWindows > 0 && row.LockedShare < accounting.DefaultMinShare
			row.Agree = row.ModelOver == row.MeasuredOver && !row.LockedOut
		}
		out = append(out, row)
	}
	return out
}

func distRows(m *result.RateLimitModel, sc result.ScenarioResult) []distRow {
	if m == nil {
		return nil
	}
	var out []distRow
	for _, r := range m.Distributed {
		if r.Mode == sc.Mode {
			out = append(out, distRow{Model: r})
		}
	}
	return out
}

// sync90 is the measured probe that sends at 90 req/s over the distributed nodes.
func sync90(sc result.ScenarioResult) (result.ProbeResult, bool) {
	return probe(sc, schedule.PatternSync90)
}

// isRunOf reports whether dir is a run directory of another kind than a load test: it holds
// file (autoscale.json, claimcheck.json, bench.json) and no summary.json.
func isRunOf(dir, file string) bool {
	_, errF := os.Stat(filepath.Join(dir, file))
	_, errS := os.Stat(filepath.Join(dir, result.SummaryFile))
	return errF == nil && errors.Is(errS, fs.ErrNotExist)
}

// writeHTML renders data with t into dir/report.html and returns the file's path.
func writeHTML(dir string, t *template.Template, data any) (string, error) {
	return writeHTMLAs(dir, HTMLFile, t, data)
}

// writeHTMLAs is writeHTML to dir/name.
func writeHTMLAs(dir, name string, t *template.Template, data any) (string, error) {
	out := filepath.Join(dir, name)
	f, err := os.Create(out)
	if err != nil {
		return "", fmt.Errorf("write the report: %w", err)
	}
	if err := t.Execute(f, data); err != nil {
		f.Close()
		return "", fmt.Errorf("render the report: %w", err)
	}
	return out, f.Close()
}
