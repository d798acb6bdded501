package target

import (
	"path/filepath"
	"testing"
)

// Every target file the project ships parses, and each names itself uniquely: make
// loadtest-peers puts them in one run.
func TestShippedTargetFilesParse(t *testing.T) {
	files, err := filepath.Glob("../../targets/peers/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	parsed := 0
	for _, f := range files {
		tg, err := Load(f)
		if err != nil {
			if filepath.Base(f) == "envoy-ratelimit-config.yaml" {
				continue // envoy's own rule file, not a target file
			}
			t.Errorf("%v", err)
			continue
		}
		if other, dup := names[tg.Name]; dup {
			t.Errorf("%s and %s are both named %q", f, other, tg.Name)
		}
		names[tg.Name] = f
		parsed++
	}
	if parsed < 6 {
		t.Errorf("%d target files parsed, want at least 6 (envoy, redis_rate, fixedwindow, gubernator x2, ulule): %v", parsed, names)
	}
}
