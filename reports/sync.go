package reports

import (
	"html/template"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/edgeproof/rlharness/harness/result"
)

// syncPanel is a scenario's sync health: its figures in words ("not available" where the
// replicas exposed nothing) and, when there is a series, its charts over time.
type syncPanel struct {
	Rows   []result.SyncRow
	Charts []template.HTML
	// Available says the replicas exposed sync metrics; when false the rows say why.
	Available bool
}

func newSyncPanel(sc result.ScenarioResult) (syncPanel, error) {
	p := syncPanel{Rows: sc.Sync.Rows(), Available: sc.Sync != nil && sc.Sync.Available}
	if !p.Available || len(sc.Sync.Series) == 0 {
		return p, nil
	}
	ex, age, err := syncCharts(sc.Name, sc.Sync, sc.Faults)
	if err != nil {
		return p, err
	}
	p.Charts = append(p.Charts, template.HTML(ex))
	if age != "" {
		p.Charts = append(p.Charts, template.HTML(age))
	}
	return p, nil
}

// syncCharts are the exchanges that succeeded and that did not per second, and the view's
// age, over the scenario, fault windows shaded; age is "" when no age was measured.
func syncCharts(name string, h *result.SyncHealth, faults []result.Interval) (ex, age string, err error) {
	p := plot.New()
	p.Title.Text = "Sync exchanges per second, every node: " + name
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "exchanges/s"
	p.Legend.Top = true
	okXY, failXY, ageXY := plotter.XYs{}, plotter.XYs{}, plotter.XYs{}
	ymax, amax := 1.0, 0.0
	for _, pt := range h.Series {
		x := pt.At.Seconds()
		okXY = append(okXY, plotter.XY{X: x, Y: pt.OKPerSec})
		failXY = append(failXY, plotter.XY{X: x, Y: pt.FailedPerSec})
		ymax = max(ymax, pt.OKPerSec*1.05, pt.FailedPerSec*1.05)
		if pt.Age >= 0 {
			ageXY = append(ageXY, plotter.XY{X: x, Y: pt.Age * 1000})
			amax = max(amax, pt.Age*1000*1.05)
		}
	}
	if err := shadeFaults(p, faults, ymax); err != nil {
		return "", "", err
	}
	for _, s := range []struct {
		label string
		xys   plotter.XYs
		c     int
	}{{"succeeded", okXY, 2}, {"failed or timed out", failXY, -1}} {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return "", "", err
		}
		l.Color = red
		if s.c >= 0 {
			l.Color = palette[s.c]
		}
		p.Add(l)
		p.Legend.Add(s.label, l)
	}
	end := h.Series[len(h.Series)-1].At.Seconds()
	p.X.Min, p.X.Max = 0, end
	p.Y.Min, p.Y.Max = 0, ymax*1.25 // room for the legend above the lines
	if ex, err = svg(p, chartW, chartH); err != nil || len(ageXY) == 0 {
		return ex, "", err
	}

	a := plot.New()
	a.Title.Text = "The view's age (" + h.AgeSeries + "): " + name
	a.X.Label.Text = "time since start (s)"
	a.Y.Label.Text = "ms"
	a.Legend.Top = true
	amax = max(amax, 1)
	if err := shadeFaults(a, faults, amax); err != nil {
		return "", "", err
	}
	l, err := plotter.NewLine(ageXY)
	if err != nil {
		return "", "", err
	}
	l.Color = palette[0]
	a.Add(l)
	a.Legend.Add(h.AgeSeries, l)
	if h.Interval > 0 {
		if err := hline(a, 2*h.Interval.Seconds()*1000, 0, end, gray, true, "two sync intervals"); err != nil {
			return "", "", err
		}
		amax = max(amax, 2*h.Interval.Seconds()*1000*1.1)
	}
	a.X.Min, a.X.Max = 0, end
	a.Y.Min, a.Y.Max = 0, amax*1.25
	age, err = svg(a, chartW, chartH)
	return ex, age, err
}
