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
