package reports

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// HistoryFile is the trend page's default name.
const HistoryFile = "history.html"

// HistoryRun is one run of a trend: its summary and where it was read.
type HistoryRun struct {
	Path    string
	Summary result.Summary
}

// Commit is the run's commit, shortened to 12 characters (and "+dirty" kept); "unknown" when
// the run names none.
func (r HistoryRun) Commit() string {
	c := r.Summary.Commit
	if c == "" {
		return "unknown"
	}
	base, dirty := strings.CutSuffix(c, "+dirty")
	if len(base) > 12 {
		base = base[:12]
	}
	if dirty {
		base += "+dirty"
	}
	return base
}

// Verdict is the run's verdict in one word, as its report heads it.
func (r HistoryRun) Verdict() string { return r.Summary.Outcome.Word() }

// ReadHistory reads the summary.json of every path (a run directory or a summary.json file) and
// orders the runs by started_at, those that started together in the order given. A path that
// holds no summary.json (a night whose run never started, a killed run not judged) is not an
// error: it is returned in missing with why, for the page to list; a path that is not there, and
// every other read failure, is.
func ReadHistory(paths []string) (runs []HistoryRun, missing []string, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("--history %s: %w", p, err)
		}
		dir, name := p, result.SummaryFile
		if !st.IsDir() {
			dir, name = filepath.Split(p)
		}
		s, err := result.Read[result.Summary](dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, fmt.Sprintf("%s: no %s (the run did not finish, or it was killed: harness judge %s writes one)", p, result.SummaryFile, dir))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--history %s: %w", p, err)
		}
		runs = append(runs, HistoryRun{Path: p, Summary: s})
	}
	slices.SortStableFunc(runs, func(a, b HistoryRun) int { return a.Summary.StartedAt.Compare(b.Summary.StartedAt) })
	return runs, missing, nil
}

// Point is one run's figure of a gated check in one scenario.
type Point struct {
	Run       int // index into History.Runs
	Figure    float64
	Threshold float64
	Op        string
	Pass      bool
	// Bound says the scenario was generator-bound in that run: its figure describes other
	// traffic than the schedule, and a crossing there is not a regression.
	Bound bool
	// Outcome is the scenario's in that run.
	Outcome outcome.Outcome
	Detail  string
}

// Series is one gated check of one scenario over the runs that have it.
type Series struct {
	Check, Scenario string
	Promise         string // the promise the check gates (PromiseOf), "" for the other gates
	Points          []Point
	// Crossing is where the figure crossed its gate; nil when it never did.
	Crossing *Crossing
}

// Last is the series' newest point.
func (s Series) Last() Point { return s.Points[len(s.Points)-1] }

// Crossing is where a series crossed its gate: the first run where it did while the generator
// kept its schedule, the run before it where it was within, the runs past the gate, and those
// past it while generator-bound (listed, not counted as regressions).
type Crossing struct {
	// First and LastWithin are indexes into the series' points; -1 for none.
	First, LastWithin int
	Past              int   // points past the gate, generator-bound ones left out
	BoundPast         []int // indexes of the points past the gate while generator-bound
}

// History is a trend over runs: a series per gated check and scenario.
type History struct {
	Runs    []HistoryRun
	Missing []string
	Series  []Series
	// Written is when the page was made.
	Written time.Time
}

// BuildHistory gathers every gated check of every run into series, in the order the newest run
// lists them, then those only older runs had.
func BuildHistory(runs []HistoryRun, missing []string, now time.Time) History {
	h := History{Runs: runs, Missing: missing, Written: now}
	index := map[[2]string]int{}
	for i := len(runs) - 1; i >= 0; i-- {
		for _, sc := range runs[i].Summary.Scenarios {
			for _, c := range sc.Checks {
				k := [2]string{c.Name, sc.Name}
				if _, ok := index[k]; ok || !sc.Gated {
					continue
				}
				index[k] = len(h.Series)
				h.Series = append(h.Series, Series{Check: c.Name, Scenario: sc.Name, Promise: PromiseOf(c.Name)})
			}
		}
	}
	for i, r := range runs {
		for _, sc := range r.Summary.Scenarios {
			if !sc.Gated {
				continue
			}
			for _, c := range sc.Checks {
				s := &h.Series[index[[2]string{c.Name, sc.Name}]]
				s.Points = append(s.Points, Point{Run: i, Figure: c.Figure, Threshold: c.Threshold, Op: c.Op, Pass: c.Pass,
					Bound: sc.GeneratorBound, Outcome: sc.Outcome, Detail: c.Detail})
			}
		}
	}
	for i := range h.Series {
		h.Series[i].Crossing = crossing(h.Series[i].Points)
	}
	return h
}

// crossing finds where a series crossed its gate; nil when every point is within it.
func crossing(pts []Point) *Crossing {
	c := Crossing{First: -1, LastWithin: -1}
	for i, p := range pts {
		switch {
		case !p.Pass && p.Bound:
			c.BoundPast = append(c.BoundPast, i)
		case !p.Pass:
			c.Past++
			if c.First < 0 {
				c.First = i
			}
		case c.First < 0 && !p.Bound:
			c.LastWithin = i
		}
	}
	if c.Past == 0 && len(c.BoundPast) == 0 {
		return nil
	}
	if c.First < 0 {
		c.LastWithin = -1
	}
	return &c
}

// Crossings are the series that crossed their gate, those that did while the generator kept
// its schedule first, in the order of their first crossing.
func (h History) Crossings() []Series {
	var out []Series
	for _, s := range h.Series {
		if s.Crossing != nil {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Series) int {
		ra, rb := a.Crossing.First < 0, b.Crossing.First < 0
		switch {
		case ra != rb:
			if ra {
				return 1
			}
			return -1
		case ra:
			return 0
		}
		return cmp.Compare(a.Points[a.Crossing.First].Run, b.Points[b.Crossing.First].Run)
	})
	return out
}

// Newest is the newest run; the zero run when there is none.
func (h History) Newest() HistoryRun {
	if len(h.Runs) == 0 {
		return HistoryRun{}
	}
	return h.Runs[len(h.Runs)-1]
}

// historyPage is what the trend's template shows.
type historyPage struct {
	History
	Crossed []Series
	Checks  []historyCheck
}

// historyCheck is one gated check's section: a chart per scenario.
type historyCheck struct {
	Name, Promise string
	Charts        []template.HTML
}

// WriteHistory writes the trend page to path: self-contained, every chart inlined.
func WriteHistory(path string, h History) error {
	p := historyPage{History: h, Crossed: h.Crossings()}
	byCheck := map[string]int{}
	for _, s := range h.Series {
		i, ok := byCheck[s.Check]
		if !ok {
			i = len(p.Checks)
			byCheck[s.Check] = i
			p.Checks = append(p.Checks, historyCheck{Name: s.Check, Promise: s.Promise})
		}
		c, err := trendChart(h, s)
		if err != nil {
			return err
		}
		p.Checks[i].Charts = append(p.Checks[i].Charts, template.HTML(c))
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	_, err := writeHTMLAs(dir, name, historyTmpl, p)
	return err
}

// segments splits a series' points into runs that follow one another: a run without the
// series' scenario ends one.
func segments(pts []Point) [][]Point {
	var out [][]Point
	for i, pt := range pts {
		if i == 0 || pt.Run != pts[i-1].Run+1 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], pt)
	}
	return out
}

// trendChart is one series over the runs: its figure (within the gate, past it, or
// generator-bound) and the gate's threshold, run by run, each run's commit under it.
func trendChart(h History, s Series) (string, error) {
	p := plot.New()
	p.Title.Text = s.Check + ": " + s.Scenario
	p.X.Label.Text = "run (commit)"
	p.Legend.Top = true
	p.Legend.Left = true
	n := len(h.Runs)
	// The line and the gate are drawn in segments of consecutive runs: a run where the
	// scenario did not run (or the system was not in it) breaks them, rather than a line
	// drawn across it as if it had been measured.
	var lines, thrs []plotter.XYs
	for _, seg := range segments(s.Points) {
		var line, thr plotter.XYs
		for _, pt := range seg {
			line = append(line, plotter.XY{X: float64(pt.Run + 1), Y: pt.Figure})
			thr = append(thr, plotter.XY{X: float64(pt.Run + 1), Y: pt.Threshold})
		}
		lines, thrs = append(lines, line), append(thrs, thr)
	}
	var within, past, bound plotter.XYs
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, pt := range s.Points {
		xy := plotter.XY{X: float64(pt.Run + 1), Y: pt.Figure}
		switch {
		case pt.Bound:
			bound = append(bound, xy)
		case pt.Pass:
			within = append(within, xy)
		default:
			past = append(past, xy)
		}
		ymin, ymax = min(ymin, pt.Figure, pt.Threshold), max(ymax, pt.Figure, pt.Threshold)
	}
	for _, line := range lines {
		if len(line) < 2 {
			continue
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return "", err
		}
		l.Color = gray
		p.Add(l)
	}
	for k, thr := range thrs {
		t, err := plotter.NewLine(thr)
		if err != nil {
			return "", err
		}
		t.Color, t.Dashes, t.StepStyle = red, []vg.Length{vg.Points(4), vg.Points(3)}, plotter.MidStep
		if len(thr) == 1 { // one run: a short line across its point
			t.XYs = plotter.XYs{{X: thr[0].X - 0.4, Y: thr[0].Y}, {X: thr[0].X + 0.4, Y: thr[0].Y}}
		}
		p.Add(t)
		if k == 0 {
			p.Legend.Add("gate ("+s.Points[0].Op+")", t)
		}
	}
	if err := addMarks(p, vg.Points(3.5),
		marks{"within the gate", within, palette[0], draw.CircleGlyph{}},
		marks{"past the gate", past, red, draw.CircleGlyph{}},
		marks{"generator-bound: not evidence", bound, palette[1], draw.RingGlyph{}},
	); err != nil {
		return "", err
	}
	// The runs' commits under the axis; every k-th where there are too many to read.
	every := max(1, (n+15)/16)
	var ticks []plot.Tick
	for i, r := range h.Runs {
		t := plot.Tick{Value: float64(i + 1)}
		if i%every == 0 || i == n-1 {
			t.Label = fmt.Sprintf("%d %s", i+1, r.Commit())
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	// Labels a reader can read at the page's size.
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(11), vg.Points(11)
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	pad := (ymax - ymin) * 0.15
	if pad == 0 {
		pad = max(math.Abs(ymax)*0.15, 1)
	}
	lo, hi := ymin-pad, ymax+pad
	if ymin >= 0 && lo < 0 {
		lo = 0 // a count or a ratio is never negative
	}
	p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*0.5 // the legend above the points
	return svg(p, chartW, chartH)
}

var historyTmpl = template.Must(newTemplate("history").Funcs(template.FuncMap{
	"f": result.Number,
	"date": func(t time.Time) string {
		if t.IsZero() {
			return "unknown"
		}
		return t.UTC().Format("2006-01-02 15:04Z")
	},
	"run": func(h History, i int) HistoryRun { return h.Runs[i] },
	"point": func(s Series, i int) Point {
		if i < 0 {
			return Point{Run: -1}
		}
		return s.Points[i]
	},
	"add1":         func(i int) int { return i + 1 },
	"promiseName":  promiseName,
	"outcomeClass": outcomeClass,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Load test trend, {{len .Runs}} runs</title>
<style>{{styleSheet}}</style></head><body>
<h1>Load test trend</h1>
{{$h := .History}}{{with .Runs}}<p id="span">{{len .}} runs, from {{date (index . 0).Summary.StartedAt}} ({{(index . 0).Commit}}) to {{date $h.Newest.Summary.StartedAt}} ({{$h.Newest.Commit}}); the newest: <span class="{{outcomeClass $h.Newest.Summary.Outcome}}">{{$h.Newest.Verdict}}</span>.
A point in a generator-bound run (hollow) is the runner's, not the limiter's: it is shown and never counted as a regression.</p>{{end}}
{{with .Missing}}<p id="missing">Not in the trend: {{range .}}<br>{{.}}{{end}}</p>{{end}}

<h2>Where a figure first crossed its gate</h2>
{{if .Crossed}}<table id="crossings"><tr><th>check</th><th>scenario</th><th>first past the gate</th><th>figure</th><th>last within it before</th><th>runs past it</th><th>its latest run</th><th>past it while generator-bound (not regressions)</th></tr>
{{range .Crossed}}{{$s := .}}{{$c := .Crossing}}<tr class="crossing"><td>{{.Check}}</td><td>{{.Scenario}}</td>
{{if ge $c.First 0}}{{$p := point $s $c.First}}{{$r := run $h $p.Run}}<td>run {{add1 $p.Run}}, {{date $r.Summary.StartedAt}}, {{$r.Commit}}</td><td class="n">{{f $p.Figure}} ({{$p.Op}} {{f $p.Threshold}})</td>
<td>{{if ge $c.LastWithin 0}}{{$q := point $s $c.LastWithin}}{{$w := run $h $q.Run}}run {{add1 $q.Run}}, {{$w.Commit}}{{else}}none: past it in its first run{{end}}</td>
{{else}}<td colspan="3">never while the generator kept its schedule</td>{{end}}
<td class="n">{{$c.Past}} of {{len $s.Points}}</td>
{{with $s.Last}}<td>run {{add1 .Run}}: {{f .Figure}} {{if .Bound}}<span class="bound">generator-bound</span>{{else if .Pass}}<span class="pass">within</span>{{else}}<span class="fail">past</span>{{end}}</td>{{end}}
<td>{{range $i, $b := $c.BoundPast}}{{if $i}}, {{end}}run {{add1 (point $s $b).Run}}{{end}}</td></tr>
{{end}}</table>{{else}}<p id="crossings">No gated figure crossed its gate in these runs.</p>{{end}}

<h2>Runs</h2>
<table id="runs"><tr><th>run</th><th>started</th><th>commit</th><th>verdict</th><th>provider, network, time scale</th><th>read from</th></tr>
{{range $i, $r := .Runs}}<tr class="run"><td class="n">{{add1 $i}}</td><td>{{date .Summary.StartedAt}}</td><td>{{.Commit}}</td><td><span class="{{outcomeClass .Summary.Outcome}}">{{.Verdict}}</span></td><td>{{.Summary.Config.Provider}}, {{.Summary.Config.Network}}, {{printf "%.3g" .Summary.Config.TimeScale}}</td><td>{{.Path}}</td></tr>
{{end}}</table>

{{range .Checks}}<section class="trend-check">
<h2>{{.Name}}{{with .Promise}} (the promise: {{promiseName .}}){{end}}</h2>
<div class="side">{{range .Charts}}<div class="chart">{{.}}</div>{{end}}</div>
</section>
{{end}}
<p>Written {{date .Written}} by harness report --history.</p>
</body></html>
`))
