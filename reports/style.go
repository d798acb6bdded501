package reports

import "html/template"

// styleSheet is the one style of every report page (load test, bench, autoscale, claim check).
const styleSheet = `
body{font-family:sans-serif;margin:2em;max-width:90em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-size:90%;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass,.PASS{color:#197a19;font-weight:bold}.fail,.FAIL{color:#b11;font-weight:bold}.bound{color:#b60;font-weight:bold}
.verdict{font-size:140%;padding:.4em .8em;border:2px solid;display:inline-block}
.side{display:flex;gap:2em;flex-wrap:wrap}
svg{max-width:100%;height:auto}
`

// newTemplate is a report page's template, with the style sheet ({{styleSheet}} in its
// <style> element).
func newTemplate(name string) *template.Template {
	return template.New(name).Funcs(template.FuncMap{"styleSheet": func() template.CSS { return styleSheet }})
}
