package reports

import (
	"fmt"
	"html/template"

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
	return writeHTMLAs(dir, name, benchTmpl, b)
}

var benchTmpl = template.Must(newTemplate("bench").Funcs(template.FuncMap{
	"mb": func(v float64) string { return fmt.Sprintf("%.2f", v/1e6) },
	"msf": func(d result.Step) string {
		return fmt.Sprintf("%.2f", float64(d.Latency.P99)/1e6)
	},
	"late": func(d result.Step) string {
		return fmt.Sprintf("%.2f", float64(d.Lateness.P99)/1e6)
	},
	"f":   result.Number, // 40,000 (never 4e+04), 866.7
	"pct": func(v float64) string { return fmt.Sprintf("%.1f", 100*v) },
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
{{range .Fleets}}<h2>Fleet {{.Name}} ({{.Network}})</h2>
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
