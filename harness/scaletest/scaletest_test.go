package scaletest

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/reports"
)

func TestParseGauge(t *testing.T) {
	text := "# HELP worker_utilisation x\n# TYPE worker_utilisation gauge\nworker_utilisation_other 3\nworker_utilisation 1.25\n"
	v, err := parseGauge(bufio.NewScanner(strings.NewReader(text)), "worker_utilisation")
	if err != nil || v != 1.25 {
		t.Errorf("parseGauge = %v, %v; want 1.25", v, err)
	}
	if _, err := parseGauge(bufio.NewScanner(strings.NewReader("x 1\n")), "worker_utilisation"); err == nil {
		t.Error("a missing metric parsed")
	}
}

func TestPipelineLag(t *testing.T) {
	// Replicas that report the load one round late.
	var rows []result.AutoscaleRound
	loads := []float64{100, 300, 100, 300, 200, 100, 300, 100}
	for i, l := range loads {
		prev := loads[max(0, i-1)]
		rows = append(rows, result.AutoscaleRound{Offered: l, Ready: 2, Measured: prev / (2 * 100)})
	}
	if lag := pipelineLag(rows, 100, 1); lag != 1 {
		t.Errorf("lag %v, want 1", lag)
	}
}

// A quick real run on local worker processes: 12 half-second rounds of the step test
// (800 then 3200 req/s, ×0.05). The controller must scale 2 → 4 for real, the start-ups
// must be measured, and the report written.
func TestQuickRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 12 worker processes and sends traffic for 6 s")
	}
	series := []float64{800, 800, 800, 3200, 3200, 3200, 3200, 3200, 3200, 3200, 3200, 3200}
	dir := t.TempDir()
	c := DefaultConfig()
	c.Provider, c.Series, c.Round, c.RateScale, c.OutDir = "local", series, 500*time.Millisecond, 0.05, dir
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != len(series) || res.Traffic.Sent != res.Traffic.Scheduled || res.Traffic.Scheduled != 3*20+9*80 {
		t.Fatalf("%d rounds, traffic %+v; want 12 rounds, 780 requests all sent", len(res.Rounds), res.Traffic)
	}
	last := res.Rounds[len(res.Rounds)-1]
	if last.Required != 4 || last.Asked < 4 || last.Ready < 4 || res.Asked.Peak < 4 {
		t.Errorf("last round %+v, peak %d; want 4 replicas asked and ready", last, res.Asked.Peak)
	}
	if len(res.Startups) < 2 {
		t.Errorf("startups %+v; want at least the two replicas added", res.Startups)
	}
	for _, st := range res.Startups {
		if (st.Error != "" && !st.Unfinished) || st.Took <= 0 {
			t.Errorf("start-up %+v", st)
		}
	}
	// Before the step the two initial replicas are scraped at about 800×0.05 / (2 × 58.8).
	if u := res.Rounds[1].Measured; u < 0.25 || u > 0.45 {
		t.Errorf("round 1 utilisation %v, want about 0.34", u)
	}
	if res.Model.Total == 0 || res.Ready.Total == 0 {
		t.Errorf("scores missing: model %+v ready %+v", res.Model, res.Ready)
	}
	if _, err := os.Stat(filepath.Join(dir, result.AutoscaleFile)); err != nil {
		t.Fatal(err)
	}
	page, err := reports.GenerateAutoscale(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(page)
	for _, want := range []string{`id="autoscale"`, "Replicas over time", "replica-3", "model, same settings"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	t.Logf("asked %+v, ready %+v, model %+v", res.Asked, res.Ready, res.Model)
}

func TestConfigCheck(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Round = time.Millisecond },
		func(c *Config) { c.RateScale = 2 },
		func(c *Config) { c.ScrapesPerRound = 0 },
		func(c *Config) { c.Delay = -1 },
		func(c *Config) { c.Window = -2 },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.check(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// The start-up line counts a start the run's end cut short apart from a failed one and leaves
// it out of the times.
func TestWriteResultStartups(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		startups []result.Startup
		want     string
	}{
		{"all started", []result.Startup{{Took: 100 * ms}, {Took: 300 * ms}},
			"replica start-up (asked -> ready): 2 starts, min 100ms, mean 200ms, max 300ms (0.40 rounds mean)\n"},
		{"one failed", []result.Startup{{Took: 100 * ms}, {Took: 50 * ms, Error: "exit 1"}},
			"replica start-up (asked -> ready): 1 starts, min 100ms, mean 100ms, max 100ms (0.20 rounds mean); 1 failed\n"},
		{"one cut short", []result.Startup{{Took: 100 * ms}, {Took: 2 * time.Second, Error: "context canceled", Unfinished: true}},
			"replica start-up (asked -> ready): 1 starts, min 100ms, mean 100ms, max 100ms (0.20 rounds mean); 1 cut short by the run's end\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := result.Autoscale{Startups: tt.startups}
			a.Settings.Round = 500 * ms
			var b strings.Builder
			if err := WriteResult(&b, a); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("got:\n%s\nwant a line:\n%s", b.String(), tt.want)
			}
		})
	}
}
