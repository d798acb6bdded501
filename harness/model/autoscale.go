package model

import (
	"fmt"
	"math"

	"github.com/edgeproof/rlharness/autoscale"
)

// The horizontal-scaling document's assumptions (003, ZO25–ZO30) and its M19 inputs.
const (
	Saturation     = 1176.47                 // M19: saturation throughput per replica, req/s
	TargetUtil     = autoscale.DefaultTarget // M19: target utilisation 0.70
	Rounds         = 120                     // ZO25: one round is one measurement interval
	MaxReplicas    = autoscale.DefaultMax    // ZO27
	MinReplicas    = autoscale.DefaultMin
	StartReplicas  = autoscale.DefaultInitial
	MetricDelay    = 3        // ZO28: rounds
	SeriesSeed     = 20260805 // ZO26
	WaveRounds     = 40       // ZO26: period of the wave
	WaveBase       = 1200     // ZO26: req/s
	WaveAmplitude  = 900      // ZO26: req/s
	StepLoad       = 1800     // ZO26: req/s added in rounds 60–89
	NoiseBand      = 0.08     // ZO26: ±8 %
	LoadFloor      = 200      // ZO26: req/s
	StepTestBefore = 800      // denge.mjs step test: req/s in rounds 0–59
	StepTestAfter  = 3200     // denge.mjs step test: req/s from round 60
)

// StepRounds are the rounds of the series' step, where under-provisioning is counted apart.
var StepRounds = autoscale.DocumentStep

// Series is the document's 120-round load in req/s (ZO26): a 40-round wave
// 1200 + 900·sin(2πt/40), +1800 in rounds 60–89, noise drawn uniformly in ±8 % from the
// minimal-standard generator seeded 20260805, rounded, at least 200.
func Series() []float64 {
	g := NewMinStd(SeriesSeed)
	s := make([]float64, Rounds)
	for t := range s {
		wave := WaveBase + WaveAmplitude*math.Sin(2*math.Pi*float64(t)/WaveRounds)
		step := 0.0
		if t >= StepRounds.From && t < StepRounds.To {
			step = StepLoad
		}
		noise := 1 - NoiseBand + 2*NoiseBand*g.Float64()
		s[t] = math.Max(LoadFloor, roundHalfUp((wave+step)*noise))
	}
	return s
}

// StepTestSeries is denge.mjs's noiseless step test: 800 req/s for 60 rounds, then 3200.
func StepTestSeries() []float64 {
	s := make([]float64, Rounds)
	for t := range s {
		s[t] = StepTestBefore
		if t >= StepRounds.From {
			s[t] = StepTestAfter
		}
	}
	return s
}

// roundHalfUp is JavaScript's Math.round: halves go up, also for negatives.
func roundHalfUp(x float64) float64 { return math.Floor(x + 0.5) }

// Required is the ideal replica count for each round's load (the document's gereken).
func Required(series []float64) []int {
	g := make([]int, len(series))
	for t, load := range series {
		g[t] = autoscale.Required(load, Saturation, TargetUtil, MinReplicas)
	}
	return g
}

// Setting is one row of the document's tables: a metric delay and the controller's dampers.
type Setting struct {
	Delay  int `json:"delay"`
	Window int `json:"window,omitempty"`
	Step   int `json:"step,omitempty"`
}

// Config is the controller the setting names: the document's, with its dampers.
func (s Setting) Config() autoscale.Config {
	c := autoscale.Default()
	c.Window, c.Step = s.Window, s.Step
	return c
}

// ScaleRun is one controller run over a series: every decision and its score.
type ScaleRun struct {
	Setting   Setting              `json:"setting"`
	Replicas  []int                `json:"replicas"`
	Decisions []autoscale.Decision `json:"-"`
	Score     autoscale.Score      `json:"score"`
}

// RunScaling is olcekleme.mjs's kostur with the project's controller: each round the load
// is measured as utilisation of the replicas then running (load / (replicas × 1176.47)),
// the measurement goes through a DelayLine, and the controller decides on what comes out.
// The count decided in round t is the count scored for round t.
func RunScaling(series []float64, s Setting) (ScaleRun, error) {
	ctl, err := autoscale.New(s.Config(), StartReplicas)
	if err != nil {
		return ScaleRun{}, err
	}
	line := autoscale.NewDelayLine(s.Delay)
	run := ScaleRun{Setting: s, Replicas: make([]int, len(series)), Decisions: make([]autoscale.Decision, len(series))}
	for t, load := range series {
		line.Record(load / (float64(ctl.Replicas()) * Saturation))
		u, _ := line.At(t)
		d := ctl.Decide(t, u)
		run.Decisions[t], run.Replicas[t] = d, d.To
	}
	run.Score = autoscale.Rate(StartReplicas, run.Replicas, Required(series), StepRounds)
	return run, nil
}

// DelaySweep are olcekleme.mjs's delays, with no window and no step limit.
var DelaySweep = []int{0, 1, 2, 3, 4, 5, 6}

// DamperRow is one row of denge.mjs's table.
type DamperRow struct {
	Name    string          `json:"name"`
	Setting Setting         `json:"setting"`
	Score   autoscale.Score `json:"score"`
}

// Dampers are denge.mjs's settings at delay 3 (ZO28), in its order, then its two rows at
// delay 0.
var Dampers = []DamperRow{
	{Name: "untuned", Setting: Setting{Delay: MetricDelay}},
	{Name: "stabilization window 2", Setting: Setting{Delay: MetricDelay, Window: 2}},
	{Name: "stabilization window 3", Setting: Setting{Delay: MetricDelay, Window: 3}},
	{Name: "stabilization window 5", Setting: Setting{Delay: MetricDelay, Window: 5}},
	{Name: "stabilization window 8", Setting: Setting{Delay: MetricDelay, Window: 8}},
	{Name: "step limit 1", Setting: Setting{Delay: MetricDelay, Step: 1}},
	{Name: "step limit 2", Setting: Setting{Delay: MetricDelay, Step: 2}},
	{Name: "window 3 + step 1", Setting: Setting{Delay: MetricDelay, Window: 3, Step: 1}},
	{Name: "window 5 + step 1", Setting: Setting{Delay: MetricDelay, Window: 5, Step: 1}},
	{Name: "delay 0: untuned", Setting: Setting{Delay: 0}},
	{Name: "delay 0: window 3 + step 1", Setting: Setting{Delay: 0, Window: 3, Step: 1}},
}

// StepTestDelays are the delays of denge.mjs's step test.
var StepTestDelays = []int{0, 3, 6}

// StepTestRow is one line of the step test: response rounds at each of StepTestDelays.
type StepTestRow struct {
	Name     string  `json:"name"`
	Setting  Setting `json:"setting"` // Delay unused: see Response
	Response []int   `json:"response"`
}

// Autoscale is every figure of document 003's two programs.
type Autoscale struct {
	Series      []float64     `json:"series"`
	MinLoad     float64       `json:"min_load"`
	MaxLoad     float64       `json:"max_load"`
	MinRequired int           `json:"min_required"`
	MaxRequired int           `json:"max_required"`
	IdealTotal  int           `json:"ideal_total"`
	DelaySweep  []ScaleRun    `json:"delay_sweep"`
	Dampers     []DamperRow   `json:"dampers"`
	StepTest    []StepTestRow `json:"step_test"`
	Summary     AutoscaleDrop `json:"summary"`
}

// AutoscaleDrop is denge.mjs's closing lines: untuned against window 3 + step 1 at delay 3.
type AutoscaleDrop struct {
	OscillationFrom  int     `json:"oscillation_from"`
	OscillationTo    int     `json:"oscillation_to"`
	OscillationDrop  float64 `json:"oscillation_drop_pct"`
	UnderInStepFrom  int     `json:"under_in_step_from"`
	UnderInStepTo    int     `json:"under_in_step_to"`
	TotalFrom        int     `json:"total_from"`
	TotalTo          int     `json:"total_to"`
	Ideal            int     `json:"ideal"`
	MeasurementsRead int     `json:"measurements_read"`
	Delay            int     `json:"delay"`
}

// RunAutoscale computes both programs' tables and the step test.
func RunAutoscale() (Autoscale, error) {
	series := Series()
	req := Required(series)
	m := Autoscale{Series: series, MinLoad: math.Inf(1), MaxLoad: math.Inf(-1), MinRequired: math.MaxInt}
	for t, load := range series {
		m.MinLoad, m.MaxLoad = math.Min(m.MinLoad, load), math.Max(m.MaxLoad, load)
		m.MinRequired, m.MaxRequired = min(m.MinRequired, req[t]), max(m.MaxRequired, req[t])
		m.IdealTotal += req[t]
	}
	for _, d := range DelaySweep {
		r, err := RunScaling(series, Setting{Delay: d})
		if err != nil {
			return m, err
		}
		m.DelaySweep = append(m.DelaySweep, r)
	}
	for _, row := range Dampers {
		r, err := RunScaling(series, row.Setting)
		if err != nil {
			return m, fmt.Errorf("%s: %w", row.Name, err)
		}
		row.Score = r.Score
		m.Dampers = append(m.Dampers, row)
	}
	step := StepTestSeries()
	for _, row := range []StepTestRow{
		{Name: "untuned"},
		{Name: "step limit 1", Setting: Setting{Step: 1}},
		{Name: "step limit 2", Setting: Setting{Step: 2}},
		{Name: "window 3 + step 1", Setting: Setting{Window: 3, Step: 1}},
	} {
		for _, d := range StepTestDelays {
			s := row.Setting
			s.Delay = d
			r, err := RunScaling(step, s)
			if err != nil {
				return m, fmt.Errorf("step test %s: %w", row.Name, err)
			}
			row.Response = append(row.Response, r.Score.Response)
		}
		m.StepTest = append(m.StepTest, row)
	}
	a, b := m.Dampers[0].Score, m.Dampers[7].Score
	m.Summary = AutoscaleDrop{
		OscillationFrom: a.Oscillation, OscillationTo: b.Oscillation,
		OscillationDrop: 100 * (1 - float64(b.Oscillation)/float64(a.Oscillation)),
		UnderInStepFrom: a.UnderInStep, UnderInStepTo: b.UnderInStep,
		TotalFrom: a.Total, TotalTo: b.Total, Ideal: m.IdealTotal,
		MeasurementsRead: len(series), Delay: MetricDelay,
	}
	return m, nil
}
