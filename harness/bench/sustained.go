package bench

import (
	"fmt"
	"strings"

	"github.com/edgeproof/rlharness/harness/result"
)

// WhyGeneratorBound is what a figure says when the runs it rests on fell behind their
// schedule: they measured the generator, so the figure is neither met nor not met.
const WhyGeneratorBound = "generator-bound"

// Sustained is the rule every figure that rests on fixed-rate runs obeys: it may be met or
// not met only when every one of those runs was sustained (no error, achieved >= 95 % of
// the rate asked, generator p99 lateness within its gate, and, where the replicas say, no
// decision made without the store). Otherwise the figure is not measured, and why says so:
// "generator-bound" when the runs that were not sustained all fell behind their schedule
// and nothing else, else what went wrong in them ("3 errors");
// detail names the runs for the figure's note.
func Sustained(runs ...result.Step) (ok bool, why, detail string) {
	if len(runs) == 0 {
		return false, "no runs", ""
	}
	var failed []result.Step
	bound := true
	for _, st := range runs {
		if st.Sustained {
			continue
		}
		failed = append(failed, st)
		bound = bound && st.GeneratorBound && st.Errors == 0 && st.Degraded == 0
	}
	if len(failed) == 0 {
		return true, "", ""
	}
	var whys []string
	for _, st := range failed {
		w := fmt.Sprintf("%s req/s: %s", result.Rate(st.Rate), st.Why)
		if st.Why == "" {
			w = fmt.Sprintf("%s req/s: not sustained", result.Rate(st.Rate))
		}
		whys = append(whys, w)
	}
	detail = fmt.Sprintf("%d of %d runs not sustained (%s)", len(failed), len(runs), strings.Join(whys, "; "))
	if bound {
		return false, WhyGeneratorBound, detail
	}
	why = "runs not sustained"
	n, degraded := errorsIn(failed)
	switch {
	case n > 0:
		why = fmt.Sprintf("runs not sustained: %d errors", n)
	case degraded > 0:
		why = fmt.Sprintf("runs not sustained: %d decisions without the store", degraded)
	}
	return false, why, detail
}

// errorsIn counts the steps' errors and their decisions made without the store.
func errorsIn(steps []result.Step) (errs int, degraded int64) {
	for _, st := range steps {
		errs += st.Errors
		degraded += st.Degraded
	}
	return errs, degraded
}

// withEvidence applies Sustained to a figure that has been given its status from its value:
// a figure whose runs were not all sustained is not measured, whatever the value says, and
// its note says which runs failed. Value and Display are kept: they are what was seen.
func withEvidence(f result.BenchFigure, runs ...result.Step) result.BenchFigure {
	ok, why, detail := Sustained(runs...)
	if ok || f.Status == result.StatusNotMeasured {
		return f
	}
	f.Status, f.Why = result.StatusNotMeasured, why
	f.Note = strings.TrimPrefix(f.Note+"; "+detail, "; ")
	return f
}
