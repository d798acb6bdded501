package reports

import (
	"fmt"
	"html/template"
	"math"

	"github.com/edgeproof/rlharness/harness/result"
)

// GenerateBench reads dir/bench.json (harness bench) and writes dir/report.html: the
// performance table with every figure's target, status and conditions, then the
// measurements behind it (decision costs, ceiling steps, steady runs, memory layouts).
func GenerateBench(dir string) (string, error) { return GenerateBenchAs(dir, HTMLFile) }

// GenerateBenchAs is GenerateBench writing dir/name: bench.html beside a load test's own
// report.html in one run directory (the HS2 kit's).
func GenerateBenchAs(dir, name string) (string, error) {
	b, err := result.Read[result.Bench](dir, result.BenchFile)
	if err != nil {
		return "", err
	}
	page := benchPage{Bench: b}
	if b.Slice != nil {
		page.SliceRows = b.Slice.Rows()
		if page.SliceCharts, err = sliceCharts(page.SliceRows); err != nil {
			return "", err
		}
	}
	return writeHTMLAs(dir, name, benchTmpl, page)
}

// benchPage is bench.json as its page shows it: with a slice, its systems side by side and
// their charts.
type benchPage struct {
	result.Bench
	SliceRows   []result.SliceRow
	SliceCharts []template.HTML
}

// sliceCharts are the slice's systems side by side: what a request costs each process, and
// its latency.
func sliceCharts(rows []result.SliceRow) ([]template.HTML, error) {
	var names []string
	var rep, redis, gen, p99, p999 []float64
	zero := func(v float64) float64 {
		if math.IsNaN(v) {
			return 0
		}
		return v
	}
	for _, r := range rows {
		names = append(names, r.System)
		rep, redis, gen = append(rep, zero(r.CPUPerDecisionUs)), append(redis, zero(r.RedisCPUPerRequestUs)), append(gen, zero(r.GeneratorUs))
		p99, p999 = append(p99, zero(r.P99Ms)), append(p999, zero(r.P999Ms))
	}
	var out []template.HTML
	for _, c := range []struct {
		title, unit string
		series      []string
		values      [][]float64
	}{
		{"CPU a request, by process (not measured: 0)", "us", []string{"replica (a decision)", "Redis", "generator (a request sent)"}, [][]float64{rep, redis, gen}},
		{"Latency of the steady run", "ms", []string{"p99", "p99.9"}, [][]float64{p99, p999}},
	} {
		s, err := scenarioBars(c.title, c.unit, names, c.series, c.values)
		if err != nil {
			return nil, err
		}
		out = append(out, template.HTML(s))
	}
	return out, nil
}

var benchTmpl = template.Must(newTemplate("bench").Funcs(template.FuncMap{
	"mb": func(v float64) string { return fmt.Sprintf("%.2f", v/1e6) },
	"msf": func(d result.Step) string {
		return fmt.Sprintf("%.2f", float64(d.Latency.P99)/1e6)
	},
	"late": func(d result.Step) string {
		return fmt.Sprintf("%.2f", float64(d.Lateness.P99)/1e6)
	},
	"f":      result.Number, // 40,000 (never 4e+04), 866.7
	"pct":    func(v float64) string { return fmt.Sprintf("%.1f", 100*v) },
	"pct100": func(v float64) float64 { return 100 * v },
	// cell is a slice figure as printed, "-" where it was not measured (NaN).
	"cell": func(format string, v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf(format, v)
	},
	"at": func(fs []result.ProfileFunc, i int) *result.ProfileFunc {
		if i < len(fs) {
			return &fs[i]
		}
		return nil
	},
	"status": func(f result.BenchFigure) template.HTML {
		switch f.Status {
		case result.StatusMet:
			return `<span class="pass">met</span>`
		case result.StatusNotMet:
			return `<span class="fail">not met</span>`
		}
		return template.HTML(template.HTMLEscapeString(f.StatusText()))
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Performance {{.StartedAt.Format "2006-01-02 15:04"}}</title>
<style>{{styleSheet}}</style></head><body>
<h1>Performance, measured side by side</h1>
<p>Machine cores {{.Cores}} (GOMAXPROCS {{.GoMaxProcs}}), commit {{.Commit}}, {{.StartedAt.Format "2006-01-02T15:04:05Z07:00"}} to {{.FinishedAt.Format "15:04:05Z07:00"}}.
Absolute figures drift on a shared machine; the ratios are measured in one run.</p>
<h2>The table</h2>
<table id="bench"><tr><th>#</th><th>figure</th><th>value</th><th>target</th><th>status</th><th>conditions</th></tr>
{{range .Figures}}<tr class="figure"><td>{{.Item}}</td><td>{{.Name}}</td><td>{{.Display}}{{with .Note}}<br><small>{{.}}</small>{{end}}</td><td>{{.Target}}</td><td>{{status .}}</td><td><small>{{.Conditions}}</small></td></tr>
{{end}}</table>
{{with .Errors}}<p>Not measured:{{range .}}<br>{{.}}{{end}}</p>{{end}}
{{with .Slice}}<h2>One replica's share of HS2, side by side</h2>
<p>One replica told it is node {{.Traffic.Node}} of {{.Traffic.Nodes}}, {{f .Traffic.Rate}} req/s asked from {{.Traffic.Clients}} clients and the probes' share for its node, time scale {{.Traffic.TimeScale}}, each system's Redis held to {{.StoreCPU}} of a core; steady runs at {{f .Rate}} req/s.{{with .RateWhy}} {{.}}.{{end}}
CPU from /proc over each steady run's traffic (the replica's process, this generator's), Redis's from INFO cpu; memory is what grew over the run per distinct client sent.</p>{{end}}
{{with .SliceRows}}<table id="slice"><tr><th>system</th><th>one of N</th><th>achieved req/s</th><th>ceiling req/s</th><th>p99 ms</th><th>p99.9 ms</th><th>p99 added ms</th><th>CPU µs/decision</th><th>× no-op</th><th>Redis µs/request</th><th>Redis busy</th><th>round trips/request</th><th>RSS B/client</th><th>Redis B/client</th><th>generator µs/request</th></tr>
{{range .}}<tr><td>{{.System}}</td><td><small>{{.Nodes}}</small></td><td class="n">{{cell "%.0f" .Achieved}}{{if not .Sustained}} <span class="fail">not sustained</span> <small>{{.Why}}</small>{{end}}</td><td class="n">{{if gt .Ceiling 0.0}}{{f .Ceiling}}{{if .Capped}}+{{end}}{{if .Generator}} (the generator's){{end}}{{else}}-{{end}}</td><td class="n">{{cell "%.2f" .P99Ms}}</td><td class="n">{{cell "%.2f" .P999Ms}}</td><td class="n">{{cell "%+.2f" .AddedP99Ms}}</td><td class="n">{{cell "%.1f" .CPUPerDecisionUs}}</td><td class="n">{{cell "%.2f" .VsNoop}}</td><td class="n">{{cell "%.2f" .RedisCPUPerRequestUs}}</td><td class="n">{{cell "%.0f %%" (pct100 .RedisBusy)}}</td><td class="n">{{cell "%.4f" .RoundTrips}}</td><td class="n">{{cell "%+.0f" .RSSPerClient}}</td><td class="n">{{cell "%+.1f" .RedisPerClient}}</td><td class="n">{{cell "%.1f" .GeneratorUs}}</td></tr>
{{end}}</table>
{{range $.SliceCharts}}<div class="chart">{{.}}</div>{{end}}{{end}}
{{with .Decisions}}<h2>Decision cost (in-process)</h2>
<table id="decisions"><tr><th>algorithm / mode</th><th>ns/op</th><th>× x/time/rate</th><th>allocs/op</th><th>B/op</th><th>iterations</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td class="n">{{f .NsPerOp}}</td><td class="n">{{f .VsRate}}</td><td class="n">{{.AllocsPerOp}}</td><td class="n">{{.BytesPerOp}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>{{end}}
{{define "profiles"}}<table class="profiles"><tr><th>generator</th><th>rate asked</th><th>requests</th><th>CPU s</th><th>CPU µs/request</th><th>allocs/request</th><th>B/request</th><th>GC % of CPU</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td class="n">{{f .Rate}}</td><td class="n">{{.Requests}}</td><td class="n">{{f .CPUSeconds}}</td><td class="n">{{f .CPUPerRequestUs}}</td><td class="n">{{f .AllocsPerRequest}}</td><td class="n">{{f .AllocBytesPerRequest}}</td><td class="n">{{pct .GCShare}}</td></tr>
{{end}}</table>
{{range .}}<h3>{{.Name}}: top functions</h3>
<table class="top"><tr><th>CPU: function</th><th>flat %</th><th>cum %</th><th>allocated bytes: function</th><th>flat %</th><th>cum %</th></tr>
{{$a := .Alloc}}{{range $i, $c := .CPU}}<tr><td>{{$c.Function}}</td><td class="n">{{pct $c.Flat}}</td><td class="n">{{pct $c.Cum}}</td>{{with at $a $i}}<td>{{.Function}}</td><td class="n">{{pct .Flat}}</td><td class="n">{{pct .Cum}}</td>{{end}}</tr>
{{end}}</table>{{end}}{{end}}
{{with .Profiles}}<h2>Generator profiles</h2>
<p>Each generator's CPU and allocation profile (runtime/pprof, this process only: the replicas run elsewhere) over one fixed-rate step against the same no-op replicas; the harness's step includes building its schedule and report. Raw profiles: <code>*.cpu.pprof</code>, <code>*.allocs.pprof</code> beside bench.json.</p>
{{template "profiles" .}}{{end}}
{{with .Baseline}}<h2>Generator profiles before (baseline)</h2>
<p>From {{.From}}{{with .Commit}}, commit {{.}}{{end}}, {{.StartedAt.Format "2006-01-02T15:04:05Z07:00"}}.</p>
{{template "profiles" .Profiles}}{{end}}
{{range .Fleets}}{{template "fleet" .}}{{end}}
{{with .Slice}}{{range .Systems}}{{template "fleet" .}}{{end}}{{end}}
{{define "fleet"}}<h2>Fleet {{.Name}} ({{.Network}})</h2>
{{if .Error}}<p class="fail">{{.Error}}</p>{{end}}
<p>{{.Conditions.Provider}}/{{.Network}}, {{.Conditions.Replicas}} replicas{{with .Conditions.Mode}}, mode {{.}}{{end}}; ceiling {{f .Ceiling}} req/s{{if .Capped}} (search capped: at least){{end}};
store {{f .StoreCmdPerSec}} commands/s ({{f .StoreCmdPerRequest}} per request, {{.StoreOps}} commands with the scripts' own, {{f .StoreScriptCmdPerRequest}} inside scripts per request);
Redis CPU {{with .StoreCPU}}{{printf "%.1f" .Percent}} % of a core ({{printf "%.2f" .MsPerKiloRequest}} ms per 1,000 requests){{else}}not measured{{with .StoreCPUWhy}} ({{.}}){{end}}{{end}}.</p>
<table class="steps"><tr><th>run</th><th>asked req/s</th><th>achieved</th><th>answered</th><th>429</th><th>errors</th><th>p99 ms</th><th>lateness p99 ms</th><th>sustained</th></tr>
{{range .Steps}}<tr><td>step</td><td class="n">{{f .Rate}}</td><td class="n">{{f .Achieved}}</td><td class="n">{{.Answered}}</td><td class="n">{{.Rejected}}</td><td class="n">{{.Errors}}</td><td class="n">{{msf .}}</td><td class="n">{{late .}}</td><td>{{if .Sustained}}<span class="pass">yes</span>{{else}}<span class="fail">no</span> {{.Why}}{{end}}</td></tr>
{{end}}{{with .Steady}}<tr><td>steady</td><td class="n">{{f .Rate}}</td><td class="n">{{f .Achieved}}</td><td class="n">{{.Answered}}</td><td class="n">{{.Rejected}}</td><td class="n">{{.Errors}}</td><td class="n">{{msf .}}</td><td class="n">{{late .}}</td><td>{{if .Sustained}}<span class="pass">yes</span>{{else}}<span class="fail">no</span> {{.Why}}{{end}}</td></tr>{{end}}
</table>
{{end}}
{{with .Memory}}<h2>Store memory per tracked client</h2>
<table id="memory"><tr><th>layout</th><th>keys</th><th>clients</th><th>counters each</th><th>used_memory delta B</th><th>B/client</th><th>MEMORY USAGE B/client</th><th>document B/client</th><th>document total MB</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td><small>{{.Layout}}</small></td><td class="n">{{.Clients}}</td><td class="n">{{.Records}}</td><td class="n">{{.UsedDelta}}</td><td class="n">{{f .PerClient}}</td><td class="n">{{f .SampleUsage}}</td><td class="n">{{f .Estimate}}</td><td class="n">{{mb .EstimateTotal}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))
