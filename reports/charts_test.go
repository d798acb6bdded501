package reports

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A chart's title fits its chart: a long scenario goes to a second line, the font shrinks, and
// a line still too long loses its middle; every line of text in the SVG is held to the width
// the layout measured, whatever font the viewer draws it with.
func TestChartTitlesFitTheirChart(t *testing.T) {
	tests := []struct {
		title string
		width vg.Length
		lines int
		size  vg.Length // the title's font size after fitting
	}{
		{"Latency percentiles (ms): x", chartW / 2, 1, 12},
		{"Latency percentiles (ms): sliding_window/delayed/store-restart", chartW / 2, 2, 12},
		{"Background clients by peak/limit: haproxy-peers-deny-not-counted/store-stop", chartW / 2, 2, 12},
		{"Background clients by peak/limit: " + strings.Repeat("a-very-long-target-name/", 6), chartW / 2, 2, minTitleSize},
		{"Accepted per sliding window, probe clients: " + strings.Repeat("x", 300), chartW, 2, minTitleSize},
	}
	for _, tt := range tests {
		p := plot.New()
		p.Title.Text = tt.title
		fitTitle(p, tt.width)
		lines := strings.Split(p.Title.Text, "\n")
		if len(lines) != tt.lines {
			t.Errorf("%q: %d lines %q, want %d", tt.title, len(lines), lines, tt.lines)
		}
		if got := p.Title.TextStyle.Font.Size; got != tt.size {
			t.Errorf("%q: font size %v, want %v", tt.title, got, tt.size)
		}
		for _, l := range lines {
			if w := p.Title.TextStyle.Width(l); w > tt.width-2*titleMargin {
				t.Errorf("%q: line %q is %.1f pt wide in a %.1f pt chart with %.1f pt margins", tt.title, l, w.Points(), tt.width.Points(), titleMargin.Points())
			}
		}
		if what, _, _ := strings.Cut(tt.title, ": "); len(lines) == 2 && lines[0] != what {
			t.Errorf("%q: first line %q, want %q", tt.title, lines[0], what)
		}
	}
}

func TestChartTextHasItsMeasuredWidth(t *testing.T) {
	p := plot.New()
	p.Title.Text = "Store commands per second"
	b, err := plotter.NewBarChart(plotter.Values{1, 2}, vg.Points(10))
	if err != nil {
		t.Fatal(err)
	}
	b.Horizontal = true
	p.Add(b)
	p.NominalY("sliding_window/delayed/store-stop", "sliding_window/delayed")
	s, err := svg(p, chartW, chartH)
	if err != nil {
		t.Fatal(err)
	}
	texts := regexp.MustCompile(`<text [^>]*>([^<]*)</text>`).FindAllStringSubmatch(s, -1)
	if len(texts) < 3 {
		t.Fatalf("%d text elements in the chart, want the title and both names at least", len(texts))
	}
	length := regexp.MustCompile(`textLength="([0-9.]+)" lengthAdjust="spacingAndGlyphs"`)
	for _, m := range texts {
		l := length.FindStringSubmatch(m[0])
		if l == nil {
			t.Errorf("text %q has no textLength: a viewer's wider font would overrun the layout", m[1])
			continue
		}
		w, _ := strconv.ParseFloat(l[1], 64)
		if m[1] == "sliding_window/delayed/store-stop" {
			want := p.Y.Tick.Label.Width(m[1]).Points()
			if w < want-0.01 || w > want+0.01 {
				t.Errorf("%q: textLength %.2f, the layout measured %.2f", m[1], w, want)
			}
		}
	}
}
