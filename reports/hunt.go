package reports

import (
	"fmt"
	"html/template"
	"image/color"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// GenerateHunt reads dir/hunt.json (harness hunt) and writes dir/report.html: per system what
// the learning step found, the rounds, and per family the worst case, its parameters and the
// schedule file that replays it, every variant tried, and a chart of them all.
func GenerateHunt(dir string) (string, error) {
	h, err := result.Read[result.Hunt](dir, result.HuntFile)
	if err != nil {
		return "", err
	}
	type system struct {
		result.HuntSystem
		Name  string
		Chart template.HTML
	}
	data := struct {
		Hunt    result.Hunt
		Verdict string
		Systems []system
	}{Hunt: h, Verdict: h.Outcome.Word()}
	for _, s := range h.Systems {
		chart, err := huntChart(s)
		if err != nil {
			return "", err
		}
		name := s.System
		if s.Design != "" {
			name += " (design " + s.Design + ")"
		}
		data.Systems = append(data.Systems, system{HuntSystem: s, Name: name, Chart: template.HTML(chart)})
	}
	return writeHTML(dir, huntTmpl, data)
}

// huntChart is every variant's overshoot by family (faults: after the store returned), the
// generator-bound ones apart, with the 1.1× bound.
func huntChart(s result.HuntSystem) (string, error) {
	var names []string
	var kept, bound plotter.XYs
	top := 1.2
	for i, f := range s.Families {
		names = append(names, f.Name)
		for _, v := range f.Tried {
			x := v.Overshoot
			if f.Kind == "fault" {
				x = v.AfterRecovery
			}
			top = max(top, x)
			xy := plotter.XY{X: x, Y: float64(i)}
			if v.GeneratorBound {
				bound = append(bound, xy)
			} else {
				kept = append(kept, xy)
			}
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "Every variant tried: busiest window of accepted requests over the limit"
	p.X.Label.Text = "x limit (store fault: after the store returned)"
	p.X.Min, p.X.Max = 0, top*1.05
	p.NominalY(names...)
	p.Legend.Top = true
	if err := addMarks(p, vg.Points(3),
		marks{"sent faithfully", kept, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, draw.CircleGlyph{}},
		marks{"generator-bound (not evidence)", bound, color.RGBA{R: 0xbb, G: 0x66, A: 0xff}, draw.CrossGlyph{}},
	); err != nil {
		return "", err
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: 1.1, Y: -0.5}, {X: 1.1, Y: float64(len(names)) - 0.5}})
	if err != nil {
		return "", err
	}
	limit.Color, limit.Dashes = color.RGBA{R: 0xb1, G: 0x11, B: 0x11, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(limit)
	p.Legend.Add("1.1x", limit)
	return svg(p, chartW, max(chartH, vg.Length(len(names))*vg.Points(28)+vg.Centimeter*3))
}

var huntTmpl = template.Must(newTemplate("hunt").Funcs(template.FuncMap{
	"dur":  func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"sec":  func(d time.Duration) string { return d.Round(time.Second).String() },
	"x3":   func(v float64) string { return fmt.Sprintf("x%.3f", v) },
	"f0":   func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"mark": func(ok bool) string { return map[bool]string{true: "PASS", false: "FAIL"}[ok] },
	"g3":   func(v float64) string { return fmt.Sprintf("%.3g", v) },
	"pcls": func(f result.HuntFamily) string {
		switch {
		case f.BrokeUnderPressure:
			return "FAIL"
		case strings.HasPrefix(f.PressureVerdict, "held"):
			return "PASS"
		case strings.HasPrefix(f.PressureVerdict, "generator-bound"):
			return "bound"
		}
		return ""
	},
	"cls": func(f result.HuntFamily) string {
		switch f.Outcome {
		case "":
			return ""
		case outcome.Pass:
			return "PASS"
		case outcome.GeneratorBound, outcome.NotMade:
			return "bound"
		}
		return "FAIL"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Hunt: the worst case, searched for</title>
<style>{{styleSheet}}</style></head><body>
<section id="hunt">
<h1>Finding the worst case: <span class="verdict {{.Verdict}}">{{.Verdict}}</span></h1>
<p>Families of aimed traffic, each searched over its parameters (a coarse sweep of at most {{.Hunt.Config.Coarse}} points, then
{{.Hunt.Config.Levels}} refinements around the worst), many variants at once in every round, each its own client, judged as harness
loadtest judges: the busiest window-long interval of a client's accepted requests over its limit, and rejections of a client within
its limit by its own window (false rejects). At-limit clients never send more than their limit in any window: any rejection of them
is false. A variant whose own sends the generator made late or slow (loadtest's lateness and rate gates) is generator-bound: shown,
never taken as the worst case while a faithful one exists. Budget per system: {{sec .Hunt.Config.Budget}} and {{.Hunt.Config.Requests}}
requests; bursts at up to {{f0 .Hunt.Config.MaxRate}} requests/s; seed {{.Hunt.Config.Seed}}; {{.Hunt.Cores}} cores.</p>
{{if .Hunt.Failed}}<p class="FAIL">{{range .Hunt.Failed}}{{.}}<br>{{end}}</p>{{end}}
{{range $s := .Systems}}
<h2 id="system-{{$s.Name}}">{{$s.Name}}</h2>
<p>{{$s.Replicas}} replicas ({{$s.Conditions.Provider}} provider, {{$s.Conditions.Network}} network), limit {{$s.Limit}} per {{dur $s.Window}}
(time scale {{$s.TimeScale}}){{if $s.SyncInterval}}, sync every {{dur $s.SyncInterval}}{{end}}; {{len $s.Rounds}} rounds, {{$s.Requests}}
requests in {{sec $s.Elapsed}}: {{$s.Stopped}}.{{if $s.Error}} <span class="FAIL">Error: {{$s.Error}}</span>{{end}}</p>
<p>Learned from the probes: {{$s.Learned.Edge}}; {{$s.Learned.Ticks}}.</p>
<table class="hunt-families"><tr><th>family</th><th>kind</th><th>variants</th><th>worst</th><th>after the store returned</th><th>false rejects</th><th>verdict</th><th>worst parameters</th><th>replay</th><th>under pressure</th></tr>
{{range $s.Families}}<tr class="family"><td>{{.Name}}</td><td>{{.Kind}}</td><td class="n">{{len .Tried}}</td>
<td class="n">{{with .Worst}}{{x3 .Overshoot}}{{else}}-{{end}}</td><td class="n">{{with .Worst}}{{if .Replicas}}{{x3 .AfterRecovery}}{{else}}-{{end}}{{else}}-{{end}}</td>
<td class="n">{{with .Worst}}{{.FalseRejects}}{{else}}-{{end}}</td><td class="{{cls .}}">{{.Verdict}}{{if .Note}}<br><small>{{.Note}}</small>{{end}}</td>
<td>{{with .Worst}}{{.ParamString}} (round {{.Round}}){{end}}</td><td>{{if .Schedule}}<a href="{{.Schedule}}">{{.Schedule}}</a>{{end}}</td>
<td class="{{pcls .}}">{{if .PressureVerdict}}{{.PressureVerdict}}{{if .PressureSchedule}}<br><a href="{{.PressureSchedule}}">{{.PressureSchedule}}</a>{{end}}{{else}}-{{end}}</td></tr>
{{end}}</table>
{{range $fam := $s.Families}}{{with $fam.Worst}}{{with .Clocks}}<p class="clocks">{{$fam.Name}}, its worst variant: {{.String}}</p>{{end}}{{end}}{{end}}
{{if $.Hunt.Config.Pressure}}<h3>{{$s.Name}}: pressure</h3>
<p>Each family's worst point is also sent harder, level by level up to {{$.Hunt.Config.Pressure}}: a herd of fresh clients sending it at
the same instants, every burst unpaced (asked at the level's requests per replica per millisecond), an attack's bursts times the share
(x{{g3 $.Hunt.Config.PressureShare}} a level, at most 8 limits in a window) and sent in passes, again and again (1, 12, 36): one pass of a herd at most half of {{$.Hunt.Config.PressureRequests}} requests, a round at most four times {{$.Hunt.Config.PressureRequests}}.
A ladder stops at the level that broke the bound, where the store's calls timed out, or where the generator's peak (its busiest 10 ms)
grew less than 1.25x over the previous level's while short of 0.9x what was asked: generator-bound, not held.</p>
<table class="hunt-pressure"><tr><th>family</th><th>level</th><th>herd</th><th>per replica per ms</th><th>share</th><th>passes</th><th>overshoot</th><th>false rejects</th><th>peak sent (req/s)</th><th>peak asked (req/s)</th><th>store timeouts</th><th>decisions without the store</th><th>verdict</th></tr>
{{range $f := $s.Families}}{{range $f.PressureRounds}}<tr class="pressure"><td>{{$f.Name}}</td><td class="n">{{.Level}}</td><td class="n">{{.Herd}}</td><td class="n">{{.Conns}}</td><td class="n">x{{g3 .Share}}</td><td class="n">{{.Repeat}}</td>
<td class="n {{if .Broke}}FAIL{{end}}">{{x3 .Variant.Overshoot}}</td><td class="n">{{.Variant.FalseRejects}}</td><td class="n">{{f0 .AchievedPeak}}</td><td class="n">{{f0 .AskedPeak}}</td>
<td class="n">{{if .StoreRead}}{{f0 .StoreTimeouts}}{{else}}not read{{end}}</td><td class="n">{{if .StoreRead}}{{f0 .Degraded}}{{else}}not read{{end}}</td><td>{{if .Broke}}broke{{else}}not broken{{end}}</td></tr>
{{end}}{{if not $f.PressureRounds}}{{if $f.PressureVerdict}}<tr class="pressure"><td>{{$f.Name}}</td><td colspan="12">{{$f.PressureVerdict}}</td></tr>{{end}}{{end}}{{end}}</table>{{end}}
<div class="chart">{{$s.Chart}}</div>
<table class="hunt-rounds"><tr><th>round</th><th>kind</th><th>start</th><th>variants</th><th>requests</th><th>length</th><th>pace (req/s)</th><th>lateness p99</th><th>generator-bound variants</th><th>fault</th></tr>
{{range $s.Rounds}}<tr class="round"><td class="n">{{.Round}}</td><td>{{.Kind}}</td><td>{{.Start.Format "15:04:05.000"}}</td><td class="n">{{.Variants}}</td><td class="n">{{.Requests}}</td>
<td class="n">{{dur .Duration}}</td><td class="n">{{f0 .Pace}}</td><td class="n">{{dur .Lateness.P99}}</td><td class="n">{{.Bound}}</td>
<td>{{with .Fault}}{{.Kind}} {{dur .From}}..{{dur .To}}{{with .Timing}} (made {{dur .Began}}..{{dur .Back}}){{end}}{{end}}{{if .Error}} <span class="FAIL">{{.Error}}</span>{{end}}</td></tr>
{{end}}</table>
{{range $f := $s.Families}}{{if $f.Tried}}
<h3>{{$s.Name}}: {{$f.Name}}</h3>
<p>{{$f.Doc}}.</p>
<table class="hunt-variants"><tr><th>round</th><th>level</th><th>parameters</th><th>offered</th><th>accepted</th><th>rejected</th><th>errors</th><th>busiest window</th><th>overshoot</th><th>after return</th><th>false rejects</th><th>generator</th></tr>
{{range $f.Tried}}<tr class="variant"><td class="n">{{.Round}}</td><td class="n">{{.Level}}</td><td>{{.ParamString}}</td><td class="n">{{.Offered}}</td><td class="n">{{.Accepted}}</td>
<td class="n">{{.Rejected}}</td><td class="n">{{.Errors}}</td><td class="n">{{.Busiest}}</td><td class="n">{{x3 .Overshoot}}</td><td class="n">{{if .Replicas}}{{x3 .AfterRecovery}}{{else}}-{{end}}</td>
<td class="n">{{.FalseRejects}}</td><td class="{{if .GeneratorBound}}bound{{end}}">{{if .GeneratorBound}}bound{{else}}kept up{{end}}</td></tr>
{{end}}</table>
{{end}}{{end}}
{{end}}
</section>
</body></html>
`))
