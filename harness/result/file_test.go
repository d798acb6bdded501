package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run") // Write creates it
	want := Summary{StartedAt: time.Date(2026, 7, 30, 10, 0, 0, 0, time.UTC), Pass: true, Interrupted: true,
		Scenarios: []ScenarioResult{{Scenario: Scenario{Name: "sliding_window/delayed"}, Requests: 1200,
			Latency: Percentiles{Count: 1200, P99: 17 * time.Millisecond}}},
		Model: &RateLimitModel{Gate: 1.1, Windows: []WindowRow{{Pattern: "boundary-burst", Algorithm: "sliding_window", Accepted: 1200}}}}
	for range 2 { // the second write replaces the first
		if err := Write(dir, SummaryFile, want); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read[Summary](dir, SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenarios[0].Latency.P99 != 17*time.Millisecond || got.Model.Windows[0].Accepted != 1200 || !got.Interrupted || !got.StartedAt.Equal(want.StartedAt) {
		t.Errorf("read back %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != SummaryFile {
		t.Errorf("run directory holds %v, want only %s (no temporary file left)", entries, SummaryFile)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, content, want string
	}{
		{"missing summary", SummaryFile, "", "written by harness loadtest"},
		{"missing bench", BenchFile, "", "written by harness bench"},
		{"not JSON", AutoscaleFile, "{", "not a valid autoscale.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.content != "" {
				if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Read[map[string]any](dir, tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// A client's lock-out figures are written when 0, so summary.json tells a client locked out
// wholly (steady windows, 0 admitted) from one never measured (no steady window, so none
// written): 0 is a figure, and SteadyWindows says whether it was measured.
func TestSteadyAdmittedWrittenWhenZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    ClientReport
		want []string
		not  []string
	}{
		{"locked out wholly", ClientReport{ID: "probe-uniform2x", SteadyWindows: 3, SteadyAt: 12 * time.Second},
			[]string{`"SteadyWindows":3`, `"SteadyAdmitted":0`, `"SteadyShare":0`, `"SteadyAdmittedArrival":0`, `"SteadyShareArrival":0`}, nil},
		{"not measured", ClientReport{ID: "probe-intermittent"},
			[]string{`"SteadyAdmitted":0`, `"SteadyShare":0`}, []string{`"SteadyWindows"`}},
		{"admitted its limit", ClientReport{ID: "probe-uniform2x", SteadyWindows: 2, SteadyAdmitted: 600, SteadyShare: 1},
			[]string{`"SteadyWindows":2`, `"SteadyAdmitted":600`, `"SteadyShare":1`}, nil},
	} {
		dir := t.TempDir()
		if err := Write(dir, SummaryFile, Summary{Scenarios: []ScenarioResult{{Probes: []ProbeResult{{ClientReport: tc.c}}}}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		js := strings.Join(strings.Fields(string(b)), "")
		for _, w := range tc.want {
			if !strings.Contains(js, w) {
				t.Errorf("%s: summary.json lacks %s", tc.name, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(js, n) {
				t.Errorf("%s: summary.json holds %s", tc.name, n)
			}
		}
		got, err := Read[Summary](dir, SummaryFile)
		if err != nil {
			t.Fatal(err)
		}
		if p := got.Scenarios[0].Probes[0]; p.ClientReport != tc.c {
			t.Errorf("%s: read back %+v, wrote %+v", tc.name, p.ClientReport, tc.c)
		}
	}
}
