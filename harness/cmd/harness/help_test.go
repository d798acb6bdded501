package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// loadtest --help names the promises the README lists, as many and by the same names: a user
// who reads one reads the other.
func TestLoadtestHelpNamesTheREADMEsPromises(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The README's list: "1. **No overshoot.** ...".
	var promises []string
	for _, m := range regexp.MustCompile(`(?m)^\d\. \*\*([^*]+)\.\*\*`).FindAllStringSubmatch(string(readme), -1) {
		promises = append(promises, strings.ToLower(m[1]))
	}
	if len(promises) != 4 {
		t.Fatalf("the README lists %d promises %q, want the four", len(promises), promises)
	}
	help := strings.Join(strings.Fields(newLoadtestCmd().Long), " ")
	if !strings.Contains(help, "checks the four promises:") {
		t.Errorf("loadtest --help does not say it checks the four promises:\n%s", help)
	}
	for _, p := range promises {
		if !strings.Contains(help, "("+p+")") {
			t.Errorf("loadtest --help does not name the README's promise %q", p)
		}
	}
}
