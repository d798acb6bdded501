package reports

import (
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// page is everything the template shows.
type page struct {
	Summary      result.Summary
	Verdict      string // PASS, FAIL or GENERATOR-BOUND
	VerdictClass string
	Gates        []result.GateCheck
	Achieved     float64 // the gated scenarios' achieved rate, summed over scenarios' mean
	Scenarios    []scenarioPage
	Overview     []template.HTML // charts over all scenarios
	Baseline     string
	Deltas       []Delta
	Regressed    int
	// NoModel says the run saved no model figures (it predates them): the page says so
	// instead of showing the model tables.
	NoModel bool
	// Peers are the systems under test side by side, when a run tested a target file's limiter.
	Peers []result.PeerRow
	// Promises are the first screen: one line per promise over the gated scenarios; Other is
	// the gated checks no promise holds.
	Promises []promiseLine
	Other    otherGates
}

// chart is one chart of a scenario's section; ID, when set, is its anchor.
type chart struct {
	ID, Title string
	SVG       template.HTML
}

type scenarioPage struct {
	result.ScenarioResult
	Windows  []windowRow
	Dist     []distRow
	Sync90   *result.ProbeResult
	Charts   []chart
	Outcomes string // why there is no traffic chart, when there is none
	Sync     syncPanel
	// Named are the charts of the clients the first screen names in this scenario.
	Named []chart
}

func build(dir string, sum result.Summary, opt Options, deltas []Delta) (*page, error) {
	// The model is the one the run saved beside its measurements, never the model of the
	// code rendering the report: an old run's page shows what it was judged against.
	m := sum.Model
	p := &page{Summary: sum, Deltas: deltas, Baseline: opt.BaselinePath, NoModel: m == nil}
	p.Verdict, p.VerdictClass = verdict(sum)
	p.Promises, p.Other = judgePromises(sum)
	named := map[string][]namedCheck{} // scenario: the probes the promises name in it
	for _, l := range p.Promises {
		if w := l.Worst; w != nil && w.Probe {
			named[w.Scenario] = append(named[w.Scenario], *w)
		}
	}
	for _, d := range deltas {
		if d.Regressed {
			p.Regressed++
		}
	}
	for _, c := range sum.Checks {
		if c.Gated {
			p.Gates = append(p.Gates, c)
		}
	}
	window := sum.Config.Window
	if window <= 0 {
		window = time.Minute
	}
	for _, sc := range sum.Scenarios {
		if sc.Target != "" {
			p.Peers = result.PeerTable(sum.Scenarios)
		}
	}
	var gated int
	for _, sc := range sum.Scenarios {
		sp, err := newScenarioPage(dir, m, sc, window)
		if err != nil {
			return nil, err
		}
		if sp.Named, err = namedCharts(sc, window, named[sc.Name]); err != nil {
			return nil, err
		}
		if sc.Gated {
			p.Achieved += sc.AchievedRate
			gated++
		}
		p.Scenarios = append(p.Scenarios, sp)
	}
	if gated > 0 {
		p.Achieved /= float64(gated)
	}
	var err error
	if p.Overview, err = overview(sum.Scenarios); err != nil {
		return nil, err
	}
	return p, nil
}

// verdict is the run's verdict as the page heads it, and its style class.
func verdict(sum result.Summary) (text, class string) {
	o := sum.Outcome
	switch o {
	case outcome.Incomplete:
		return o.Word() + ": " + sum.IncompleteWhy, outcomeClass(o)
	case outcome.Interrupted:
		return o.Word() + ": the run was stopped before it finished; the figures are what was measured until then", outcomeClass(o)
	case outcome.NotMade:
		return o.Word() + ": " + strings.Join(sum.NotMade, "; ") + "; the run says nothing about the limiter either way", outcomeClass(o)
	case outcome.GeneratorBound:
		return o.Word() + ": the generator fell behind its schedule; the figures are not evidence either way", outcomeClass(o)
	}
	return o.Word(), outcomeClass(o)
}

// outcomeClass is an outcome's style class: pass, bound (no evidence either way: the
// generator fell behind, or the run was not made) or fail.
func outcomeClass(o outcome.Outcome) string {
	switch o {
	case outcome.Pass:
		return "pass"
	case outcome.GeneratorBound, outcome.NotMade:
		return "bound"
	}
	return "fail"
}

// newScenarioPage is one scenario's section: the model's tables beside its figures, its sync
// health and its charts (none for a scenario that failed to run). window is the run's, unless
// the scenario's probes declare their own (a target's).
func newScenarioPage(dir string, m *result.RateLimitModel, sc result.ScenarioResult, window time.Duration) (scenarioPage, error) {
	if len(sc.Probes) > 0 && sc.Probes[0].Window > 0 { // a target's window is its own
		window = sc.Probes[0].Window
	}
	sp := scenarioPage{ScenarioResult: sc, Windows: windowRows(m, sc), Dist: distRows(m, sc)}
	if pr, ok := sync90(sc); ok {
		sp.Sync90 = &pr
	}
	if sc.Error != "" {
		return sp, nil
	}
	sync, err := newSyncPanel(sc)
	if err != nil {
		return sp, err
	}
	sp.Sync = sync
	c, err := probeChart(sc, window)
	if err != nil {
		return sp, err
	}
	sp.Charts = append(sp.Charts, chart{SVG: template.HTML(c)})
	o, ok, err := readOutcomes(filepath.Join(sc.Dir(dir), "outcomes.csv"), max(window/60, time.Millisecond))
	if err != nil {
		return sp, err
	}
	if ok {
		c, err := trafficChart(sc.Name, o, sc.Faults)
		if err != nil {
			return sp, err
		}
		sp.Charts = append(sp.Charts, chart{SVG: template.HTML(c)})
	} else {
		sp.Outcomes = "no outcomes.csv in the run directory: no traffic chart"
	}
	if c, err = latencyChart(sc); err != nil {
		return sp, err
	}
	sp.Charts = append(sp.Charts, chart{SVG: template.HTML(c)})
	if len(sc.PeakRatios) > 0 {
		if c, err = peakChart(sc); err != nil {
			return sp, err
		}
		sp.Charts = append(sp.Charts, chart{ID: peakChartID(sc.Name), SVG: template.HTML(c)})
	}
	return sp, nil
}

// overview is the charts over every scenario: store commands, rate asked and achieved, the
// generator's lateness; none for a run without scenarios.
func overview(scenarios []result.ScenarioResult) ([]template.HTML, error) {
	if len(scenarios) == 0 {
		return nil, nil
	}
	var names, stored, storeless []string
	var store, asked, achieved, late []float64
	for _, sc := range scenarios {
		names = append(names, sc.Name)
		if sc.NoStore {
			storeless = append(storeless, sc.Name)
		} else {
			stored = append(stored, sc.Name)
			store = append(store, sc.StoreCmdPerSec)
		}
		asked = append(asked, sc.AskedRate)
		achieved = append(achieved, sc.AchievedRate)
		late = append(late, ms(sc.Lateness.P99))
	}
	var out []template.HTML
	for _, c := range []struct {
		title, unit string
		names       []string
		series      []string
		values      [][]float64
	}{
		{"Store commands per second", "commands/s", stored, []string{"store"}, [][]float64{store}},
		{"Rate asked and achieved", "requests/s", names, []string{"asked", "achieved"}, [][]float64{asked, achieved}},
		{"Generator lateness, p99", "ms", names, []string{"p99 lateness"}, [][]float64{late}},
	} {
		if len(c.names) == 0 {
			continue
		}
		s, err := scenarioBars(c.title, c.unit, c.names, c.series, c.values)
		if err != nil {
			return nil, err
		}
		out = append(out, template.HTML(s))
	}
	if len(storeless) > 0 {
		// A system that keeps its counters among its own nodes has no store to read: a bar
		// of zero (or an empty chart) would read as a measurement.
		out = append(out, template.HTML(`<p class="nostore">Store commands per second: no store in `+
			template.HTMLEscapeString(strings.Join(storeless, ", "))+
			` (the system keeps its counters among its own nodes; the harness read no store).</p>`))
	}
	return out, nil
}

func (p *page) render(w io.Writer) error {
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("render the report: %w", err)
	}
	return nil
}

var pageTmpl = template.Must(newTemplate("report").Funcs(template.FuncMap{
	"ms":        func(d time.Duration) string { return fmt.Sprintf("%.2f", ms(d)) },
	"f":         result.Number, // 40,000 (never 4e+04), 866.7
	"f3":        func(v float64) string { return fmt.Sprintf("%.3f", v) },
	"sectionID": scenarioID,
	"count": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", n, noun)
	},
	"checkresult": func(ok, notMeasured bool) template.HTML {
		if notMeasured {
			return `<span class="bound">not measured</span>`
		}
		if ok {
			return `<span class="pass">pass</span>`
		}
		return `<span class="fail">FAIL</span>`
	},
	"oclass": outcomeClass,
	"passfail": func(ok bool) template.HTML {
		if ok {
			return `<span class="pass">pass</span>`
		}
		return `<span class="fail">FAIL</span>`
	},
	"claim": func(c result.Claim) template.HTML {
		switch {
		case c.Inconclusive, c.NotMeasured:
			return `<span class="bound">` + template.HTML(template.HTMLEscapeString(c.Verdict())) + `</span>`
		case c.Confirmed:
			return `<span class="pass">confirmed</span>`
		}
		return `<span class="fail">` + template.HTML(template.HTMLEscapeString(c.Verdict())) + `</span>`
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Load test report {{.Summary.StartedAt.Format "2006-01-02 15:04"}}</title>
<style>{{styleSheet}}</style></head><body>
<h1>Load test report</h1>
<p class="verdict {{.VerdictClass}}" id="verdict">{{.Verdict}}</p>
{{with .Summary.Failed}}<p>Failed: {{range .}}<br>{{.}}{{end}}</p>{{end}}
{{with .Peers}}<h2>Systems side by side</h2>
<p>Each system over every scenario it ran; the first is gated, and the promises, gates and conditions below are its.</p>
<table id="peers"><tr><th>system</th><th>window</th><th>boundary burst (busiest window / limit)</th><th>worst client</th><th>false rejects</th><th>p99</th><th>store commands / request (ops inside scripts too)</th><th>verdict</th><th>store stopped</th><th>store paused</th><th>store slow</th><th>store restarted</th><th>node killed</th><th>far zone</th><th>partition</th></tr>
{{range .}}<tr class="peer"><td>{{.System}}{{if .Gated}} (gated){{end}}</td>{{if and .Zoned (not .Unzoned)}}<td colspan="6">not run: only through zones</td><td>{{.Verdict}}</td>{{else}}<td class="n">{{.Window}}</td><td class="n">x{{f3 .BoundaryOvershoot}}</td><td>{{.WorstClient}} x{{f3 .MaxOvershoot}}</td><td class="n">{{.FalseRejects}}</td><td class="n">{{ms .P99}} ms</td><td class="n">{{if .NoStore}}no store{{else}}{{f3 .StorePerRequest}} ({{f3 .StoreOpsPerRequest}}){{end}}</td><td>{{.Verdict}}</td>{{end}}
{{$row := .}}{{range .FaultColumns}}<td class="peer-fault">{{.Cell $row}}</td>{{end}}{{range .ZoneColumns}}<td class="peer-fault">{{.Cell $row}}</td>{{end}}</tr>
{{end}}</table>{{end}}

<h2>Promises</h2>
<table id="promises"><tr><th>promise</th><th>result over the gated scenarios</th><th>worst</th><th>its figure</th><th></th></tr>
{{range .Promises}}<tr class="promise"><td id="promise-{{.ID}}"><b>{{.Name}}</b>: {{.Says}}</td>
<td><span class="{{.Class}}">{{.Result}}</span>{{with .Why}}: {{.}}{{end}}{{if .Failed}}: broken in {{.Failed}} of {{count .Scenarios "scenario"}}{{end}}{{if .Scenarios}} ({{if not .Failed}}{{count .Scenarios "scenario"}}, {{end}}{{count .Checks "check"}}){{end}}</td>
<td>{{with .Worst}}{{if .Tie}}every scenario{{else}}{{.Scenario}}{{with .Client}}, client {{.}}{{end}}{{if .Bound}} (generator-bound){{end}}{{end}}{{end}}</td>
<td>{{with .Worst}}{{.Name}} {{f .Figure}} ({{.Op}} {{f .Threshold}}){{end}}</td>
<td>{{with .Worst}}{{if .Anchor}}<a href="#{{.Anchor}}">{{.Shows}}</a>{{end}}{{end}}</td></tr>
{{end}}</table>
{{with .Other}}{{if .Checks}}<p id="other-gates">The other gates (the generator's schedule, errors outside fault windows, a killed node's answers): {{if .Failed}}<span class="fail">{{.Failed}} of {{.Checks}} failed</span>: {{range $i, $n := .FailedNames}}{{if $i}}; {{end}}{{$n}}{{end}}{{else}}<span class="pass">{{.Passed}} of {{.Checks}} passed</span>{{end}}. Every check is in <a href="#gates">Gates</a>.</p>{{end}}{{end}}

<h2>Gates</h2>
<table id="gates"><tr><th>scenario</th><th>check</th><th>figure</th><th>threshold</th><th>result</th><th>detail</th></tr>
{{range .Gates}}<tr class="gate"><td>{{.Scenario}}</td><td>{{.Name}}</td><td class="n">{{f .Figure}}</td><td class="n">{{.Op}} {{f .Threshold}}</td><td>{{checkresult .Pass .NotMeasured}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>

<h2>Conditions</h2>
{{with .Summary}}<table id="conditions">
<tr><th>provider</th><td>{{.Config.Provider}}</td></tr>
<tr><th>networking</th><td>{{.Config.Network}}{{with .Config.NetworkNote}} ({{.}}){{end}}</td></tr>
<tr><th>replicas</th><td>{{.Config.Replicas}}</td></tr>
<tr><th>design under test</th><td>{{.Config.Algorithm}} / {{.Config.Mode}}{{with .Config.Design}}, the {{.}} design{{end}}{{if .Config.SyncInterval}} (sync {{ms .Config.SyncInterval}} ms){{end}}</td></tr>
<tr><th>rate asked (background)</th><td>{{f .Config.Rate}} req/s</td></tr>
<tr><th>rate achieved (gated scenarios, mean)</th><td>{{f $.Achieved}} req/s</td></tr>
<tr><th>time scale</th><td>{{.Config.TimeScale}} (window {{ms .Config.Window}} ms, limit {{.Config.Limit}})</td></tr>
<tr><th>clients</th><td>{{.Config.Clients}}</td></tr>
<tr><th>seed</th><td>{{.Config.Seed}}</td></tr>
<tr><th>commit</th><td>{{.Commit}}</td></tr>
<tr><th>machine cores</th><td>{{.Cores}}</td></tr>
<tr><th>started / finished</th><td>{{.StartedAt.Format "2006-01-02T15:04:05Z07:00"}} / {{.FinishedAt.Format "2006-01-02T15:04:05Z07:00"}}</td></tr>
</table>{{end}}

{{if .Baseline}}<h2>Against the baseline</h2>
<p id="baseline">Baseline {{.Baseline}}: {{if .Regressed}}<span class="fail">{{.Regressed}} regression(s)</span>{{else}}<span class="pass">no regression</span>{{end}}
(tolerance: p99 latency +50 %, achieved/asked rate −10 %, overshoot +0.05).</p>
<table id="deltas"><tr><th>scenario</th><th>figure</th><th>baseline</th><th>now</th><th>change</th><th>bound</th><th>result</th></tr>
{{range .Deltas}}<tr class="delta"><td>{{.Scenario}}</td><td>{{.Metric}}</td><td class="n">{{f .Base}}</td><td class="n">{{f .Current}}</td><td class="n">{{f .Change}}</td><td class="n">{{f .Bound}}</td><td>{{if .Regressed}}<span class="fail">REGRESSION</span>{{else}}<span class="pass">ok</span>{{end}}</td></tr>
{{end}}</table>{{end}}



<h2>Across scenarios</h2>
<div class="side">{{range .Overview}}<div class="chart">{{.}}</div>{{end}}</div>

{{range .Scenarios}}<section class="scenario" id="{{sectionID .Name}}">
<h2>{{.Name}} {{if .Gated}}(gated){{else}}(comparison){{end}}: <span class="{{oclass .Outcome}}">{{.Outcome.Word}}{{with .Error}}: {{.}}{{end}}</span></h2>
{{with .Incomplete}}<p class="fail">INCOMPLETE: {{.}}</p>{{end}}
<p>{{.Requests}} requests: {{.Accepted}} accepted, {{.Rejected}} rejected, {{.Errors.Status5xx}} 5xx, {{.Errors.Timeout}} timeouts, {{.Errors.Connection}} connection errors.
Asked {{f .AskedRate}} req/s, achieved {{f .AchievedRate}} req/s; lateness p99 {{ms .Lateness.P99}} ms; {{if .NoStore}}no store{{else}}store {{f .StoreCmdPerSec}} commands/s{{end}}; fleet {{.Conditions.Provider}}/{{.Conditions.Network}}.
{{with .FaultTiming}}{{.Fault}} on {{.Member}}: planned from {{ms .Planned.From}} ms{{if ne .Planned.To .Planned.From}} to {{ms .Planned.To}} ms{{else}}, started again at once{{end}}; taken down from {{ms .Began}} ms (down at {{ms .Down}} ms), brought back from {{ms .Mending}} ms, {{if .Back}}answering again at {{ms .Back}} ms{{else}}never answering again{{end}}{{with .Delay}}; every store reply delayed {{ms .}} ms{{end}}{{with .Routed}}; the harness sent its requests to the other replicas from {{ms .From}} ms to {{ms .To}} ms{{end}}{{with .Error}}; <span class="fail">{{.}}</span>{{end}}.
{{end}}{{range .Faults}}Judged as the fault: {{ms .From}} ms to {{ms .To}} ms (shaded). {{end}}{{with .Errors.Routing}}{{.}} requests sent to the killed replica are the harness's routing errors, in no other count.{{end}}</p>
{{with .Clocks}}<p class="clocks">{{.String}}. Arrival bounds are what a limiter could know (a request arrived between its send and its answer); the client's clock is its send times.</p>
{{end}}{{with .Zones}}<h3>Per zone</h3>
<p>Requests are counted where they were sent; a client's overshoot in a zone is what that zone's replicas admitted of its limit in one window (arrival bounds); a false reject is the zone's when the client's whole traffic does not explain it; lock-out counts the steady clients that sent most of their requests to the zone.</p>
<table class="zones"><tr><th>zone</th><th>replicas</th><th>link, each way</th><th>requests</th><th>accepted</th><th>rejected</th><th>x limit (worst client)</th><th>false rejects</th><th>locked out / steady</th><th>errors (in the fault)</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr>
{{range .}}<tr class="zone"><td>{{.Zone}}</td><td class="n">{{len .Replicas}}</td><td class="n">{{if .PeerZone}}{{ms .PeerLink.Latency}}{{with .PeerLink.Jitter}} ± {{ms .}}{{end}} ms to zone {{.PeerZone}}'s nodes{{else}}store {{ms .Link.Latency}}{{with .Link.Jitter}} ± {{ms .}}{{end}} ms{{end}}</td><td class="n">{{.Requests}}</td><td class="n">{{.Accepted}}</td><td class="n">{{.Rejected}}</td><td class="n">{{f3 .Overshoot}}{{with .OvershootClient}} ({{.}}){{end}}</td><td class="n">{{.FalseRejects}}</td><td class="n">{{if .SteadyClients}}{{.LockedOut}} / {{.SteadyClients}}{{else}}not measured{{end}}</td><td class="n">{{.Errors.Total}} ({{.ErrorsInFault}})</td><td class="n">{{ms .Latency.P50}}</td><td class="n">{{ms .Latency.P99}}</td><td class="n">{{ms .Latency.Max}}</td></tr>
{{end}}</table>
{{end}}{{with .Named}}<h3>Clients the promises name</h3>
<div class="side">{{range .}}<div class="chart named" id="{{.ID}}"><p>Named by {{.Title}}.</p>{{.SVG}}</div>{{end}}</div>
{{end}}{{if $.NoModel}}<p class="nomodel">This run saved no model figures (it was written before runs saved them), so the document's model is not shown beside it. Run <code>harness model ratelimit</code> for today's model.</p>
{{else}}<h3>Window algorithms: the document's model beside the fleet</h3>
{{if .Windows}}<table class="windows"><tr><th rowspan="2">pattern</th><th colspan="4">model ({{.Algorithm}}, one node)</th><th colspan="4">measured (fleet)</th><th rowspan="2">same verdict</th></tr>
<tr><th>requests</th><th>accepted</th><th>busiest window</th><th>x limit</th><th>offered</th><th>accepted</th><th>busiest window</th><th>x limit</th></tr>
{{range .Windows}}<tr class="window"><td>{{.Pattern}}</td><td class="n">{{.Model.Requests}}</td><td class="n">{{.Model.Accepted}}</td><td class="n">{{.Model.Busiest}}</td><td class="n">{{f3 .Model.Ratio}}</td>
{{if .Measured}}<td class="n">{{.Offered}}</td><td class="n">{{.Accepted}}</td><td class="n">{{.Busiest}}</td><td class="n">{{f3 .Overshoot}}</td><td>{{if .Agree}}<span class="pass">yes</span>{{else if .LockedOut}}<span class="fail">no: the fleet locked the client out (x{{f3 .LockedShare}} of its limit in a window)</span>{{else}}<span class="fail">no</span>{{end}}</td>{{else}}<td colspan="5">no probe measured</td>{{end}}</tr>
{{end}}</table>
{{else}}<p class="nowindows">The document models no {{with .Algorithm}}{{.}} window: nothing of its model to set beside this fleet{{else}}window for this system: its target file names no algorithm{{end}}.</p>{{end}}
{{if .Mode}}<h3>Distributed counter ({{.Mode}}): the document's model beside the fleet{{with .Design}} (the model is the document's design; the fleet ran the {{.}} design){{end}}</h3>
{{else}}<h3>Distributed counter: the fleet{{with .Target}} ({{.}}){{end}} beside no model (the document models none of its designs)</h3>
{{end}}
<table class="dist">{{if .Dist}}<tr><th>client rate</th><th>model accepted</th><th>model x limit</th><th>model false rejects</th><th>model store touches/s</th></tr>{{else}}<tr><th></th><th>accepted</th><th>x limit</th><th>false rejects</th><th>store</th></tr>{{end}}
{{range .Dist}}<tr class="distrow"><td class="n">{{.Model.ClientRate}}/s</td><td class="n">{{.Model.Accepted}}</td><td class="n">{{f3 .Model.Ratio}}</td><td class="n">{{.Model.FalseRejects}}</td><td class="n">{{f .Model.TouchesPerSec}}</td></tr>
{{end}}<tr class="measured"><td>measured</td><td class="n">{{with .Sync90}}{{.Accepted}} (sync90 probe){{end}}</td><td class="n">{{f3 .MaxOvershoot}} (worst client)</td><td class="n">{{.FalseRejects}}</td><td class="n">{{if .NoStore}}no store{{else}}{{f .StoreCmdPerSec}} (whole fleet){{end}}</td></tr></table>{{end}}
<h3>The document's claims</h3>
{{if .Claims}}<table class="claims"><tr><th>claim</th><th>figure</th><th>run</th></tr>
{{range .Claims}}<tr class="claim"><td>{{.Text}}</td><td>{{.Figure}}</td><td>{{claim .}}</td></tr>
{{end}}</table>{{else}}<p class="noclaims">The document makes no claim about this scenario{{with .Fault}} (its {{.}} fault is judged by the checks below){{end}}{{if .Target}}: it ran a target file's limiter, not one of the document's designs{{end}}.</p>{{end}}
<h3>Checks</h3>
<table class="checks"><tr><th>check</th><th>figure</th><th>threshold</th><th>result</th><th>detail</th></tr>
{{range .Checks}}<tr><td>{{.Name}}</td><td class="n">{{f .Figure}}</td><td class="n">{{.Op}} {{f .Threshold}}</td><td>{{checkresult .Pass .NotMeasured}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>
{{with .Cluster}}<h3>Redis Cluster through the fault: {{.Member}} ({{.Node}}), slot map polled every {{ms .Every}} ms ({{.Polls}} polls)</h3>
<table class="cluster"><tr><th>slots</th><th>master before</th><th>master after</th><th>without a master (ms)</th><th>from (ms)</th><th>back (ms)</th></tr>
{{range .Ranges}}<tr class="slotrange"><td>{{.Slots}}</td><td>{{.MasterFrom}}</td><td>{{.MasterTo}}</td><td class="n">{{ms .Down}}</td><td class="n">{{if ge .FirstDown 0}}{{ms .FirstDown}}{{else}}-{{end}}</td><td class="n">{{if ge .Back 0}}{{ms .Back}}{{else}}-{{end}}</td></tr>
{{end}}</table>
<table class="cluster-events"><tr><th>at (ms)</th><th>node</th><th>was</th><th>became</th></tr>
{{range .Events}}<tr class="node-event"><td class="n">{{ms .At}}</td><td>{{.Node}}</td><td>{{.From}}</td><td>{{.To}}</td></tr>
{{end}}</table>{{end}}
<h3>Sync health</h3>
{{with .Sync}}<table class="sync"><tr><th>figure</th><th>measured</th></tr>
{{range .Rows}}<tr class="syncrow"><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
<div class="side">{{range .Charts}}<div class="chart sync-chart">{{.}}</div>{{end}}</div>{{end}}
<h3>Store cost</h3>
{{if .NoStore}}<p class="storecost">No store: the system keeps its counters among its own nodes, so there was no store to read (its peer traffic is not measured).</p>
{{else}}<p class="storecost">{{f .StoreCmdPerSec}} commands/s; per request {{f3 .RoundTripsPerRequest}} round trips and {{f3 .ScriptCmdPerRequest}} commands run inside scripts;
{{with .StoreCPU}}Redis CPU {{printf "%.1f" .Percent}} % of a core ({{printf "%.2f" .MsPerKiloRequest}} ms per 1,000 requests){{else}}Redis CPU not measured{{with .StoreCPUWhy}}: {{.}}{{end}}{{end}}.</p>{{end}}
{{with .Outcomes}}<p>{{.}}</p>{{end}}
<div class="side">{{range .Charts}}<div class="chart"{{with .ID}} id="{{.}}"{{end}}>{{.SVG}}</div>{{end}}</div>
</section>
{{end}}
</body></html>
`))
