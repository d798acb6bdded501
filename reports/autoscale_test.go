package reports

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/autoscale"
	"github.com/edgeproof/rlharness/harness/result"
)

// An autoscale run directory gets its own section through the ordinary Generate.
func TestGenerateAutoscaleSection(t *testing.T) {
	dir := t.TempDir()
	a := result.Autoscale{
		Settings: result.AutoscaleConfig{Controller: autoscale.Config{Target: 0.7, Min: 1, Max: 12, Window: 3, Step: 1},
			AddedDelay: 3, Round: time.Second, RateScale: 0.1, Saturation: 117.647, ScrapesPerRound: 4},
		Rounds: []result.AutoscaleRound{
			{Round: 0, Load: 800, Offered: 80, Required: 1, Asked: 2, Ready: 2, Measured: 0.34, Seen: 0.34, Sent: 80, OK: 80},
			{Round: 1, Load: 3200, Offered: 320, Required: 4, Asked: 3, Ready: 2, Measured: 1.36, Seen: 0.34, Sent: 320, OK: 300, Shed: 20},
		},
		Startups: []result.Startup{{Member: "replica-2", Round: 1, Took: 640 * time.Millisecond}},
		Asked:    autoscale.Score{Changes: 1, Total: 5, Peak: 3, Response: -1},
		Model:    autoscale.Score{Changes: 59, Oscillation: 13, Over: 122, Under: 32, UnderInStep: 11, Total: 385, Peak: 8},
	}
	if err := result.Write(dir, result.AutoscaleFile, a); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.HTML)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`<section id="autoscale">`, "window 3 &#43; step 1", "Replicas over time", "Utilisation",
		"replica-2", "640ms", "<td class=\"n\">385</td>", "<svg"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
