package reports

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
)

// Chart sizes: wide enough for a window's worth of detail, small enough for a page.
const (
	chartW = 18 * vg.Centimeter
	chartH = 8 * vg.Centimeter
	// windowSteps is how many points a sliding window is sampled at per window length.
	windowSteps = 20
)

var (
	faultShade = color.NRGBA{R: 230, G: 80, B: 60, A: 50}
	palette    = []color.Color{
		color.NRGBA{R: 31, G: 119, B: 180, A: 255}, color.NRGBA{R: 255, G: 127, B: 14, A: 255},
		color.NRGBA{R: 44, G: 160, B: 44, A: 255}, color.NRGBA{R: 148, G: 103, B: 189, A: 255},
		color.NRGBA{R: 140, G: 86, B: 75, A: 255}, color.NRGBA{R: 127, G: 127, B: 127, A: 255},
	}
	red  = color.NRGBA{R: 200, G: 30, B: 30, A: 255}
	gray = color.NRGBA{R: 90, G: 90, B: 90, A: 255}
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// svg renders p as an SVG element to inline in the page (no XML prolog, no fonts fetched:
// text is drawn with the viewer's own fonts, held to the widths the layout measured).
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	fitTitle(p, w)
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render chart %q: %w", p.Title.Text, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return measuredText(s), nil
}

// Title fitting: a chart's title is "what: scenario", and a long scenario name in a half-width
// chart made it wider than the chart, so that its start and end were drawn off the canvas
// ("ency percentiles"). titleMargin is kept free on each side; minTitleSize is the least the
// title's font shrinks to before a line is shortened.
const (
	titleMargin  = 4 * vg.Millimeter
	minTitleSize = vg.Length(8)
)

// fitTitle makes p's title fit a chart w wide: the scenario goes to a second line, then the
// font shrinks, then the longest line loses its middle to an ellipsis.
func fitTitle(p *plot.Plot, w vg.Length) {
	room := w - 2*titleMargin
	st := &p.Title.TextStyle
	if p.Title.Text == "" || st.Width(p.Title.Text) <= room {
		return
	}
	if what, scenario, ok := strings.Cut(p.Title.Text, ": "); ok && !strings.Contains(p.Title.Text, "\n") {
		p.Title.Text = what + "\n" + scenario
	}
	for st.Width(p.Title.Text) > room && st.Font.Size > minTitleSize {
		st.Font.Size = max(minTitleSize, st.Font.Size*0.9)
	}
	lines := strings.Split(p.Title.Text, "\n")
	for i, l := range lines {
		for r := []rune(l); st.Width(string(r)) > room && len(r) > 8; {
			mid := len(r) / 2
			r = append(r[:mid-1:mid-1], append([]rune{'…'}, r[mid+1:]...)...)
			lines[i] = string(r)
		}
	}
	p.Title.Text = strings.Join(lines, "\n")
}

// svgText is one line of text as vgsvg writes it: its attributes, its style, its text.
var svgText = regexp.MustCompile(`(?s)<text ([^>]*?)style="([^"]*)">([^<]*)</text>`)

// svgFontSize reads the font size out of a text's style.
var svgFontSize = regexp.MustCompile(`font-size:([0-9.]+)px`)

// measuredText gives every line of text of the default font the width the layout measured it
// at (textLength), so that a viewer without that font draws it in its own, squeezed or
// stretched to the same width: the axis names of the across-scenarios charts ran under their
// bars in a browser whose fallback font is wider than Liberation Serif.
func measuredText(s string) string {
	family := "font-family:" + string(plot.DefaultFont.Typeface) + " " + string(plot.DefaultFont.Variant) + ";"
	return svgText.ReplaceAllStringFunc(s, func(m string) string {
		g := svgText.FindStringSubmatch(m)
		attrs, style, text := g[1], g[2], html.UnescapeString(g[3])
		size := svgFontSize.FindStringSubmatch(style)
		if !strings.Contains(style, family) || size == nil || text == "" || strings.Contains(attrs, "textLength") {
			return m
		}
		pt, err := strconv.ParseFloat(size[1], 64)
		if err != nil {
			return m
		}
		face := plot.DefaultTextHandler.Cache().Lookup(plot.DefaultFont, vg.Length(pt))
		w := face.Width(text).Points()
		return fmt.Sprintf(`<text %stextLength="%.2f" lengthAdjust="spacingAndGlyphs" style="%s">%s</text>`, attrs, w, style, g[3])
	})
}

// shadeFaults draws the fault windows behind a time chart whose x axis is seconds.
func shadeFaults(p *plot.Plot, faults []result.Interval, ymax float64) error {
	for _, f := range faults {
		x0, x1 := f.From.Seconds(), f.To.Seconds()
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color = faultShade
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	if len(faults) > 0 {
		p.Legend.Add("fault window", &plotter.Polygon{Color: faultShade})
	}
	return nil
}

func hline(p *plot.Plot, y, x0, x1 float64, c color.Color, dashed bool, label string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return err
	}
	l.Color = c
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// slidingCounts samples, every step, how many of the sorted times fall in the window
// ending there: what a client got through in the last window at each instant.
func slidingCounts(times []time.Duration, window, end time.Duration) plotter.XYs {
	step := max(window/windowSteps, time.Millisecond)
	var xys plotter.XYs
	lo, hi := 0, 0
	for t := time.Duration(0); t <= end; t += step {
		for hi < len(times) && times[hi] <= t {
			hi++
		}
		for lo < hi && times[lo] <= t-window {
			lo++
		}
		xys = append(xys, plotter.XY{X: t.Seconds(), Y: float64(hi - lo)})
	}
	return xys
}

// probeChart is accepted requests per sliding window for each probe client, against the
// limit and the 1.1× line, fault windows shaded.
func probeChart(sc result.ScenarioResult, window time.Duration) (string, error) {
	p := plot.New()
	p.Title.Text = "Accepted per sliding window, probe clients: " + sc.Name
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "accepted in the last window"
	p.Legend.Top = true
	end := sc.Duration
	limit := 0
	ymax := 1.0
	for _, pr := range sc.Probes {
		if n := len(pr.AcceptedAt); n > 0 {
			end = max(end, pr.AcceptedAt[n-1])
		}
		limit = max(limit, pr.Limit)
		if pr.Window > 0 {
			window = pr.Window
		}
	}
	ymax = max(ymax, float64(limit)*1.25)
	var lines []*plotter.Line
	for i, pr := range sc.Probes {
		times := slices.Clone(pr.AcceptedAt)
		slices.Sort(times)
		xys := slidingCounts(times, window, end)
		for _, xy := range xys {
			ymax = max(ymax, xy.Y*1.05)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return "", err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.2)
		lines = append(lines, l)
		p.Legend.Add(strings.TrimPrefix(pr.ID, "probe-"), l)
	}
	if err := shadeFaults(p, sc.Faults, ymax); err != nil {
		return "", err
	}
	for _, l := range lines {
		p.Add(l)
	}
	if limit > 0 {
		if err := hline(p, float64(limit), 0, end.Seconds(), gray, false, fmt.Sprintf("limit %d", limit)); err != nil {
			return "", err
		}
		if err := hline(p, float64(limit)*accounting.OvershootLimit, 0, end.Seconds(), red, true, "1.1x limit"); err != nil {
			return "", err
		}
	}
	p.Y.Min, p.Y.Max = 0, ymax
	return svg(p, chartW, chartH)
}

// outcomeSeries is responses per second by kind, from outcomes.csv.
type outcomeSeries struct {
	Bucket                      time.Duration
	Accepted, Rejected, Errored []float64
}

// trafficChart is responses per second over the run by kind, fault windows shaded.
func trafficChart(name string, o outcomeSeries, faults []result.Interval) (string, error) {
	p := plot.New()
	p.Title.Text = "Responses per second: " + name
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "responses/s"
	p.Legend.Top = true
	per := o.Bucket.Seconds()
	ymax := 1.0
	series := []struct {
		name string
		v    []float64
		c    color.Color
	}{{"accepted", o.Accepted, palette[2]}, {"rejected (429)", o.Rejected, palette[1]}, {"errors", o.Errored, red}}
	var lines []*plotter.Line
	for _, s := range series {
		xys := make(plotter.XYs, len(s.v))
		for i, v := range s.v {
			xys[i] = plotter.XY{X: float64(i) * per, Y: v / per}
			ymax = max(ymax, v/per*1.05)
		}
		if len(xys) == 0 {
			xys = plotter.XYs{{}}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return "", err
		}
		l.Color = s.c
		lines = append(lines, l)
		p.Legend.Add(s.name, l)
	}
	if err := shadeFaults(p, faults, ymax); err != nil {
		return "", err
	}
	for _, l := range lines {
		p.Add(l)
	}
	p.Y.Min, p.Y.Max = 0, ymax
	return svg(p, chartW, chartH)
}

// latencyChart is one scenario's latency percentiles as bars.
func latencyChart(sc result.ScenarioResult) (string, error) {
	p := plot.New()
	p.Title.Text = "Latency percentiles (ms): " + sc.Name
	p.Y.Label.Text = "ms"
	l := sc.Latency
	bars, err := plotter.NewBarChart(plotter.Values{ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)}, vg.Points(30))
	if err != nil {
		return "", err
	}
	bars.Color = palette[0]
	p.Add(bars)
	p.NominalX("p50", "p90", "p99", "p99.9", "max")
	p.Y.Min = 0
	return svg(p, chartW/2, chartH)
}

// scenarioBars is one horizontal bar chart over the scenarios, one or more series.
func scenarioBars(title, unit string, names []string, series []string, values [][]float64) (string, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit
	p.Legend.Top = true
	n := len(series)
	h := vg.Points(float64(24 / n))
	for i, s := range series {
		b, err := plotter.NewBarChart(plotter.Values(values[i]), h)
		if err != nil {
			return "", err
		}
		b.Horizontal = true
		b.Color = palette[i%len(palette)]
		b.Offset = h * vg.Length(float64(i)-float64(n-1)/2)
		b.LineStyle.Width = 0
		p.Add(b)
		if n > 1 {
			p.Legend.Add(s, b)
		}
	}
	p.NominalY(names...)
	p.X.Min = 0
	height := max(chartH, vg.Length(len(names))*vg.Points(30)+vg.Centimeter*2)
	return svg(p, chartW, height)
}

// peakChart is the distribution of the background clients' busiest window over their limit,
// with the 1.1× gate marked: every bar must stand left of it.
func peakChart(sc result.ScenarioResult) (string, error) {
	p := plot.New()
	p.Title.Text = "Background clients by peak/limit: " + sc.Name
	p.X.Label.Text = "busiest window of acceptances / limit"
	p.Y.Label.Text = "clients"
	xys := make(plotter.XYs, 0, len(sc.PeakRatios))
	ymax := 1.0
	for i, n := range sc.PeakRatios {
		xys = append(xys, plotter.XY{X: float64(i) * result.PeakRatioBin, Y: float64(n)})
		ymax = max(ymax, float64(n))
	}
	h, err := plotter.NewHistogram(xys, len(xys))
	if err != nil {
		return "", err
	}
	h.FillColor = palette[0]
	p.Add(h)
	x0 := accounting.OvershootLimit
	if err := vline(p, x0, ymax, palette[1]); err != nil {
		return "", err
	}
	p.Y.Min = 0
	return svg(p, chartW/2, chartH)
}

// vline marks x with a dashed vertical line labelled as the 1.1× gate.
func vline(p *plot.Plot, x, ymax float64, c color.Color) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
	if err != nil {
		return err
	}
	l.Color = c
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(l)
	p.Legend.Add("1.1x limit", l)
	return nil
}

// LockoutFloor is the share of its limit the report marks on the chart of a client named by the
// no lock-out promise: a client that sends steadily over its limit is admitted at least this
// much of it in a window.
const LockoutFloor = 0.9

// namedCharts are the charts of the probes the first screen names in a scenario: each probe's
// accepted requests per sliding window against its limit, once per probe whatever the promises
// that name it.
func namedCharts(sc result.ScenarioResult, window time.Duration, named []namedCheck) ([]chart, error) {
	var order []string
	by := map[string][]string{}
	floor := map[string]bool{}
	for _, n := range named {
		if _, ok := by[n.Client]; !ok {
			order = append(order, n.Client)
		}
		by[n.Client] = append(by[n.Client], promiseName(PromiseOf(n.Name))+" ("+n.Name+")")
		floor[n.Client] = floor[n.Client] || PromiseOf(n.Name) == PromiseNoLockout
	}
	var out []chart
	for _, id := range order {
		for _, pr := range sc.Probes {
			if pr.ID != id {
				continue
			}
			s, err := clientChart(sc, pr, window, floor[id])
			if err != nil {
				return nil, err
			}
			out = append(out, chart{ID: clientChartID(sc.Name, id), Title: strings.Join(by[id], ", "), SVG: template.HTML(s)})
		}
	}
	return out, nil
}

// clientChart is one probe's accepted requests per sliding window over the scenario, with its
// limit, the 1.1x line and, for a client the no lock-out promise names, the floor beneath it.
func clientChart(sc result.ScenarioResult, pr result.ProbeResult, window time.Duration, floor bool) (string, error) {
	if pr.Window > 0 {
		window = pr.Window
	}
	p := plot.New()
	p.Title.Text = "Client " + pr.ID + ", accepted per sliding window: " + sc.Name
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "accepted in the last window"
	p.Legend.Top = true
	times := slices.Clone(pr.AcceptedAt)
	slices.Sort(times)
	end := sc.Duration
	if n := len(times); n > 0 {
		end = max(end, times[n-1])
	}
	xys := slidingCounts(times, window, end)
	ymax := max(1, float64(pr.Limit)*1.5) // the legend above the 1.1x line
	for _, xy := range xys {
		ymax = max(ymax, xy.Y*1.05)
	}
	if err := shadeFaults(p, sc.Faults, ymax); err != nil {
		return "", err
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return "", err
	}
	l.Color, l.Width = palette[0], vg.Points(1.5)
	p.Add(l)
	p.Legend.Add("accepted", l)
	if pr.Limit > 0 {
		lim := float64(pr.Limit)
		if err := hline(p, lim, 0, end.Seconds(), gray, false, fmt.Sprintf("limit %d", pr.Limit)); err != nil {
			return "", err
		}
		if err := hline(p, lim*accounting.OvershootLimit, 0, end.Seconds(), red, true, "1.1x limit"); err != nil {
			return "", err
		}
		if floor {
			if err := hline(p, lim*LockoutFloor, 0, end.Seconds(), palette[1], true, "0.9x limit (floor)"); err != nil {
				return "", err
			}
		}
	}
	p.Y.Min, p.Y.Max = 0, ymax
	return svg(p, chartW, chartH)
}

// marks are points drawn with one glyph and named in the legend.
type marks struct {
	name  string
	xys   plotter.XYs
	color color.Color
	shape draw.GlyphDrawer
}

// addMarks draws every set of marks that has points at radius, each named in the legend.
func addMarks(p *plot.Plot, radius vg.Length, sets ...marks) error {
	for _, m := range sets {
		if len(m.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = m.color, m.shape, radius
		p.Add(sc)
		p.Legend.Add(m.name, sc)
	}
	return nil
}
