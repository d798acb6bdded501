package reports

import (
	"fmt"

	"github.com/edgeproof/rlharness/harness/result"
)

// Tolerance is how much worse than its baseline a run may be before it is a regression.
type Tolerance struct {
	LatencyP99 float64 // relative growth of p99 latency: 0.5 is +50 %
	RateRatio  float64 // relative fall of achieved/asked rate: 0.1 is −10 %
	Overshoot  float64 // absolute growth of the worst overshoot: 0.05
}

// DefaultTolerance is what CI holds a run to against its baseline.
func DefaultTolerance() Tolerance {
	return Tolerance{LatencyP99: 0.5, RateRatio: 0.1, Overshoot: 0.05}
}

// Delta is one figure of one scenario, now and in the baseline.
type Delta struct {
	Scenario  string
	Metric    string
	Base      float64
	Current   float64
	Bound     float64 // the worst Current may be
	Regressed bool
	// Higher says which way is worse: a higher figure (latency, overshoot) or a lower one.
	Higher bool
	// Ungated says why the figure is shown but not gated: a generator-bound run's latency and
	// rate measure the machine that sent it (a 4-core CI runner cannot send 40,000 req/s), not
	// the limiter, so comparing them would fail on the size of the runner.
	Ungated string `json:",omitempty"`
}

// Change is Current − Base.
func (d Delta) Change() float64 { return d.Current - d.Base }

// String is the delta on one line.
func (d Delta) String() string {
	op := "<="
	if !d.Higher {
		op = ">="
	}
	word := "ok"
	switch {
	case d.Regressed:
		word = "REGRESSION"
	case d.Ungated != "":
		word = "not gated (" + d.Ungated + ")"
	}
	return fmt.Sprintf("%s %s %s: %.4g -> %.4g (%+.4g), must be %s %.4g", word, d.Scenario, d.Metric, d.Base, d.Current, d.Change(), op, d.Bound)
}

// Metrics compared with a baseline.
const (
	MetricLatencyP99 = "p99 latency (ms)"
	MetricRateRatio  = "achieved/asked rate"
	MetricOvershoot  = "max overshoot"
	// MetricFalseRejects is gated scenarios' rejections of clients within their limit: with the
	// overshoot, the limiter's own figures, compared whatever the generator managed.
	MetricFalseRejects = "false rejects"
)

// runnerBound is the reason a scenario's runner-dependent figures are not gated.
const runnerBound = "generator-bound: the runner's figure, not the limiter's"

// Compare compares every scenario the two runs share. A scenario that errored in either
// run has no figures to compare and is left out. Where either run of a scenario is
// generator-bound, its p99 latency and achieved/asked rate are listed but not gated; the
// overshoot and, for gated scenarios, the false rejects always are.
func Compare(base, cur result.Summary, tol Tolerance) []Delta {
	old := make(map[string]result.ScenarioResult, len(base.Scenarios))
	for _, s := range base.Scenarios {
		old[s.Name] = s
	}
	var out []Delta
	for _, c := range cur.Scenarios {
		b, ok := old[c.Name]
		if !ok || b.Error != "" || c.Error != "" {
			continue
		}
		runner := ""
		if b.GeneratorBound || c.GeneratorBound {
			runner = runnerBound
		}
		bp, cp := ms(b.Latency.P99), ms(c.Latency.P99)
		out = append(out, Delta{Scenario: c.Name, Metric: MetricLatencyP99, Base: bp, Current: cp,
			Bound: bp * (1 + tol.LatencyP99), Higher: true, Ungated: runner})
		br, cr := rateRatio(b), rateRatio(c)
		out = append(out, Delta{Scenario: c.Name, Metric: MetricRateRatio, Base: br, Current: cr,
			Bound: br * (1 - tol.RateRatio), Ungated: runner})
		out = append(out, Delta{Scenario: c.Name, Metric: MetricOvershoot, Base: b.MaxOvershoot, Current: c.MaxOvershoot,
			Bound: b.MaxOvershoot + tol.Overshoot, Higher: true})
		if c.Gated {
			out = append(out, Delta{Scenario: c.Name, Metric: MetricFalseRejects, Base: float64(b.FalseRejects), Current: float64(c.FalseRejects),
				Bound: float64(b.FalseRejects), Higher: true})
		}
	}
	for i := range out {
		d := &out[i]
		switch {
		case d.Ungated != "":
			d.Regressed = false
		case d.Higher:
			d.Regressed = d.Current > d.Bound
		default:
			d.Regressed = d.Current < d.Bound
		}
	}
	return out
}

// Regressions are the deltas beyond tolerance.
func Regressions(ds []Delta) []Delta {
	var out []Delta
	for _, d := range ds {
		if d.Regressed {
			out = append(out, d)
		}
	}
	return out
}

func rateRatio(s result.ScenarioResult) float64 {
	if s.AskedRate == 0 {
		return 0
	}
	return s.AchievedRate / s.AskedRate
}
