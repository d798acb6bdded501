package reports

import (
	"fmt"
	"html/template"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/edgeproof/rlharness/harness/result"
)

// GenerateClaimCheck reads dir/claimcheck.json (harness run claimcheck) and writes
// dir/report.html: the claim-check section, every setting's measured figures beside the
// model's for the same events, its checks, and the bytes through the queue per setting.
func GenerateClaimCheck(dir string) (string, error) {
	rs, err := result.Read[[]result.ClaimRun](dir, result.ClaimCheckFile)
	if err != nil {
		return "", err
	}
	if len(rs) == 0 {
		return "", fmt.Errorf("%s holds no runs: run 'harness run claimcheck --out %s' again", filepath.Join(dir, result.ClaimCheckFile), dir)
	}
	carried, err := claimCarriedChart(rs)
	if err != nil {
		return "", err
	}
	data := struct {
		Runs    []result.ClaimRun
		Pass    bool
		Carried template.HTML
	}{rs, true, template.HTML(carried)}
	for _, r := range rs {
		data.Pass = data.Pass && r.Pass
	}
	return writeHTML(dir, claimTmpl, data)
}

// claimCarriedChart is the document's headline on real infrastructure: MB through the
// queue per setting, the model's (with and without the ledger) beside Redis's count. Every
// bar carries its figure: a claim's bar is 1/141 of an attachment's and would not be read.
func claimCarriedChart(rs []result.ClaimRun) (string, error) {
	p, height, err := claimCarriedPlot(rs)
	if err != nil {
		return "", err
	}
	return svg(p, chartW, height)
}

func claimCarriedPlot(rs []result.ClaimRun) (*plot.Plot, vg.Length, error) {
	p := plot.New()
	p.Title.Text = "Bytes through the queue per setting"
	p.X.Label.Text = "MB carried by every delivery"
	p.Legend.Top = true
	series := []struct {
		name string
		val  func(r result.ClaimRun) int64
	}{
		{"model (document)", func(r result.ClaimRun) int64 { return r.Model.CarriedBytes }},
		{"model + ledger", func(r result.ClaimRun) int64 { return r.Predicted.CarriedBytes }},
		{"measured in Redis", func(r result.ClaimRun) int64 { return r.Measured.QueueBytes }},
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name()
	}
	h := vg.Points(9)
	top := 0.0
	for i, s := range series {
		vals := make(plotter.Values, len(rs))
		lab := plotter.XYLabels{XYs: make(plotter.XYs, len(rs)), Labels: make([]string, len(rs))}
		for j, r := range rs {
			vals[j] = float64(s.val(r)) / 1e6
			top = max(top, vals[j])
			lab.XYs[j] = plotter.XY{X: vals[j], Y: float64(j)}
			lab.Labels[j] = fmt.Sprintf("%.2f", vals[j])
		}
		b, err := plotter.NewBarChart(vals, h)
		if err != nil {
			return nil, 0, err
		}
		b.Horizontal = true
		b.Color = palette[i]
		b.Offset = h * vg.Length(float64(i)-float64(len(series)-1)/2)
		b.LineStyle.Width = 0
		p.Add(b)
		p.Legend.Add(s.name, b)
		l, err := plotter.NewLabels(lab)
		if err != nil {
			return nil, 0, err
		}
		for k := range l.TextStyle {
			l.TextStyle[k].Font.Size = vg.Points(7)
		}
		l.Offset = vg.Point{X: vg.Points(3), Y: b.Offset - vg.Points(3)}
		p.Add(l)
	}
	p.NominalY(names...)
	p.X.Min = 0
	p.X.Max = top * 1.15 // room for the largest bar's figure
	return p, max(chartH, vg.Length(len(names))*vg.Points(40)+vg.Centimeter*2), nil
}

var claimTmpl = template.Must(newTemplate("claimcheck").Funcs(template.FuncMap{
	"dur":  func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"f1":   func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"mark": func(ok bool) string { return map[bool]string{true: "PASS", false: "FAIL"}[ok] },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Claim-check pipeline report</title>
<style>{{styleSheet}}</style></head><body>
<section id="claimcheck">
<h1>Claim-check pipeline on Redis Streams: <span class="{{mark .Pass}}">{{mark .Pass}}</span></h1>
<p>Every setting ran on a fresh fleet: one producer (POST /events, proofs of 40,000 bytes sent by Vegeta) and consumers in a
consumer group. The model's columns are the document's model for the same events, seed and crash probabilities; "model + ledger"
is the same with the idempotency ledger the real consumers keep. Under the fault window the real processes are killed on the
events the model's crash plan names (the producer between its two writes, a consumer before its ack).</p>
<table id="claim-settings"><tr><th>setting</th><th>events</th><th>events/s asked</th><th>crashes p (producer / consumer)</th><th>fleet</th><th>seconds</th><th>checks</th></tr>
{{range .Runs}}<tr class="setting"><td>{{.Name}}</td><td class="n">{{.Events}}</td><td class="n">{{.Rate}}</td><td class="n">{{.Model.ProducerCrash}} / {{.Model.ConsumerCrash}}</td><td>{{.Conditions.Provider}}/{{.Conditions.Network}} {{.Conditions.TargetImage}}{{.Conditions.TargetBinary}}</td><td class="n">{{f1 .Measured.Seconds}}</td><td class="{{mark .Pass}}">{{mark .Pass}}</td></tr>
{{end}}</table>
<div class="chart">{{.Carried}}</div>
{{range $i, $r := .Runs}}
<h2 id="claim-{{$i}}">{{$r.Name}}</h2>
<p>{{$r.Events}} events at {{$r.Rate}} events/s, seed {{$r.Seed}}; TTL {{dur $r.TTL}}, visibility timeout {{dur $r.Visibility}};
{{with $r.Conditions}}{{.Provider}} provider, {{.Network}} network, {{.Replicas}} processes (one producer){{end}}.</p>
<table class="claim-figures"><tr><th>figure</th><th>model (document)</th><th>model + ledger</th><th>measured in Redis</th></tr>
{{range $r.Figures}}<tr class="figure"><td>{{.Name}}</td><td class="n">{{.Model}}</td><td class="n">{{.Ledger}}</td><td class="n">{{.Measured}}</td></tr>
{{end}}</table>
<table class="claim-checks"><tr><th>check</th><th>result</th><th>detail</th></tr>
{{range $r.Checks}}<tr class="check"><td>{{.Name}}</td><td class="{{mark .Pass}}">{{mark .Pass}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{end}}
</section>
</body></html>
`))
