package reports

import (
	"fmt"
	"html/template"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/edgeproof/rlharness/autoscale"
	"github.com/edgeproof/rlharness/harness/result"
)

// GenerateAutoscale reads dir/autoscale.json (harness run autoscale) and writes
// dir/report.html: the horizontal-scaling section, replicas over time (asked, ready,
// required), utilisation, the scores beside the model's and the replicas' start-up times.
func GenerateAutoscale(dir string) (string, error) {
	a, err := result.Read[result.Autoscale](dir, result.AutoscaleFile)
	if err != nil {
		return "", err
	}
	replicas, err := autoscaleReplicasChart(a)
	if err != nil {
		return "", err
	}
	util, err := autoscaleUtilChart(a)
	if err != nil {
		return "", err
	}
	type scoreRow struct {
		Name  string
		Score autoscale.Score
	}
	data := struct {
		A        result.Autoscale
		Scores   []scoreRow
		Replicas template.HTML
		Util     template.HTML
	}{a, []scoreRow{{"real: asked", a.Asked}, {"real: ready", a.Ready}, {"model, same settings", a.Model},
		{"model, one round later", a.ModelNextRound}}, template.HTML(replicas), template.HTML(util)}
	return writeHTML(dir, autoscaleTmpl, data)
}

func autoscaleReplicasChart(a result.Autoscale) (string, error) {
	p := plot.New()
	p.Title.Text = "Replicas over time"
	p.X.Label.Text = "round"
	p.Y.Label.Text = "replicas"
	series := []struct {
		name string
		val  func(r result.AutoscaleRound) float64
	}{
		{"required", func(r result.AutoscaleRound) float64 { return float64(r.Required) }},
		{"asked", func(r result.AutoscaleRound) float64 { return float64(r.Asked) }},
		{"ready", func(r result.AutoscaleRound) float64 { return r.Ready }},
	}
	for i, s := range series {
		xy := make(plotter.XYs, len(a.Rounds))
		for t, r := range a.Rounds {
			xy[t] = plotter.XY{X: float64(r.Round), Y: s.val(r)}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return "", err
		}
		l.StepStyle = plotter.PostStep
		l.Color = palette[i]
		l.Width = 1.5
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	return svg(p, chartW, chartH)
}

func autoscaleUtilChart(a result.Autoscale) (string, error) {
	p := plot.New()
	p.Title.Text = "Utilisation: scraped and seen by the controller"
	p.X.Label.Text = "round"
	p.Y.Label.Text = "utilisation"
	for i, s := range []struct {
		name string
		val  func(r result.AutoscaleRound) float64
	}{
		{"scraped (mean of ready replicas)", func(r result.AutoscaleRound) float64 { return r.Measured }},
		{"seen (after the added delay)", func(r result.AutoscaleRound) float64 { return r.Seen }},
	} {
		xy := make(plotter.XYs, len(a.Rounds))
		for t, r := range a.Rounds {
			xy[t] = plotter.XY{X: float64(r.Round), Y: s.val(r)}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return "", err
		}
		l.Color = palette[i+3]
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	if n := len(a.Rounds); n > 0 {
		if err := hline(p, a.Settings.Controller.Target, 0, float64(n-1), red, true, "target"); err != nil {
			return "", err
		}
	}
	p.Legend.Top = true
	p.Y.Min = 0
	return svg(p, chartW, chartH)
}

var autoscaleTmpl = template.Must(newTemplate("autoscale").Funcs(template.FuncMap{
	"setting": func(c autoscale.Config) string { return c.String() },
	"dur":     func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"f2":      func(v float64) string { return fmt.Sprintf("%.2f", v) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Horizontal scaling report {{.A.StartedAt.Format "2006-01-02 15:04"}}</title>
<style>{{styleSheet}}</style></head><body>
<section id="autoscale">
<h1>Horizontal scaling: the controller on real replicas</h1>
{{with .A.Settings}}<p>{{setting .Controller}}, metric delay {{.AddedDelay}} round(s) added to the real pipeline; target utilisation {{.Controller.Target}},
{{.Controller.Min}}–{{.Controller.Max}} replicas. Rounds of {{dur .Round}}; rates ×{{.RateScale}}, so a replica saturates at {{f2 .Saturation}} req/s
(the document's 1176.47 × {{.RateScale}}) and the replica counts are the document's. Utilisation scraped {{.ScrapesPerRound}}× a round and averaged;
worker queue {{dur .MaxQueue}}, warm-up {{dur .Warmup}}.</p>{{end}}
<p>Fleet: {{.A.Conditions.Provider}}/{{.A.Conditions.Network}}, {{.A.Conditions.TargetImage}}{{.A.Conditions.TargetBinary}}.
Best-fit lag of the load the replicas reported: {{f2 .A.PipelineLag}} round(s).</p>
<h2>Scores (the document's measures)</h2>
<table id="scores"><tr><th></th><th>changes</th><th>oscillation</th><th>over-prov. replica-rounds</th><th>under-prov. rounds</th><th>under-prov. in step</th><th>total replica-rounds</th><th>peak</th><th>step response</th></tr>
{{range .Scores}}<tr class="score"><td>{{.Name}}</td><td class="n">{{.Score.Changes}}</td><td class="n">{{.Score.Oscillation}}</td><td class="n">{{.Score.Over}}</td><td class="n">{{.Score.Under}}</td><td class="n">{{.Score.UnderInStep}}</td><td class="n">{{.Score.Total}}</td><td class="n">{{.Score.Peak}}</td><td class="n">{{.Score.Response}}</td></tr>
{{end}}</table>
<div class="chart">{{.Replicas}}</div>
<div class="chart">{{.Util}}</div>
<h2>Replica start-up (asked → ready)</h2>
<table id="startups"><tr><th>member</th><th>asked in round</th><th>took</th><th>error</th></tr>
{{range .A.Startups}}<tr class="startup"><td>{{.Member}}</td><td class="n">{{.Round}}</td><td class="n">{{dur .Took}}</td><td>{{.Error}}</td></tr>
{{end}}</table>
<h2>Traffic</h2>
{{with .A.Traffic}}<p>{{.Scheduled}} requests scheduled, {{.Sent}} sent; asked {{f2 .AskedRate}} req/s, achieved {{f2 .AchievedRate}} req/s; worst lateness {{f2 .MaxLateness}} ms{{if .Truncated}}; <b>truncated</b>{{end}}.</p>{{end}}
<table id="rounds"><tr><th>round</th><th>load (doc req/s)</th><th>sent req/s</th><th>required</th><th>asked</th><th>ready</th><th>scraped</th><th>seen</th><th>200</th><th>503</th><th>errors</th><th>p99 ms</th></tr>
{{range .A.Rounds}}<tr class="round"><td class="n">{{.Round}}</td><td class="n">{{.Load}}</td><td class="n">{{f2 .Offered}}</td><td class="n">{{.Required}}</td><td class="n">{{.Asked}}</td><td class="n">{{f2 .Ready}}</td><td class="n">{{f2 .Measured}}</td><td class="n">{{f2 .Seen}}</td><td class="n">{{.OK}}</td><td class="n">{{.Shed}}</td><td class="n">{{.Errors}}</td><td class="n">{{f2 .P99}}</td></tr>
{{end}}</table>
</section>
</body></html>
`))
