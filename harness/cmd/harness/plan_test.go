package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// refDir is make plan-reference's directory, from this package's.
const refDir = "../../plan/reference"

// harness plan answers on a fresh clone from the reference costs built in, naming them,
// for either balancer; a check against a run the costs were fitted to, or a run that is not
// there, is not made.
func TestPlanExits(t *testing.T) {
	fitted := filepath.Join(refDir, "clients25000-rate1000", result.BenchFile)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a fresh clone", []string{"plan", "--rate", "40000", "--replicas", "8"}, exitPass, "fitted to the reference costs built in (make plan-reference): 10 runs in harness/plan/reference (commit "},
		{"sticky", []string{"plan", "--clients", "25000", "--sticky"}, exitPass, "3,125 clients each"},
		{"checked against a fitted run", []string{"plan", "--check", fitted}, exitNotMade, "one of the runs the costs were fitted to"},
		{"no such run", []string{"plan", "--from", "nowhere/bench.json"}, exitNotMade, "read nowhere/bench.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := execute(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d; want %q in:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}
