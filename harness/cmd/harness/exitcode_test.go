package main

import (
	"errors"
	"testing"
)

func TestExitCodes(t *testing.T) {
	regression := &gateError{msg: "1 regression(s) against the baseline"}
	tests := []struct {
		name           string
		pass, genBound bool
		repErr         error
		want           int
	}{
		{"every gate passed", true, false, nil, exitPass},
		{"a promise broken", false, false, nil, exitGateFailed},
		// Generator-bound wins over the gates it failed with: the figures are not evidence.
		{"generator-bound", false, true, nil, exitGeneratorBound},
		{"a limiter regression on a generator-bound run is the limiter's", false, true, regression, exitGateFailed},
		{"passed, but regressed against the baseline", true, false, regression, exitGateFailed},
		{"passed, the report could not be written", true, false, errors.New("write report.html: disk full"), exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verdictError(tc.pass, tc.genBound, 1, "runs/x", tc.repErr)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit %d (%v), want %d", got, err, tc.want)
			}
		})
	}
	// The numbers themselves are the contract CI scripts and the README rely on.
	if exitPass != 0 || exitGateFailed != 1 || exitUsage != 2 || exitGeneratorBound != 3 {
		t.Errorf("exit codes %d %d %d %d, want 0 1 2 3 as documented", exitPass, exitGateFailed, exitUsage, exitGeneratorBound)
	}
	if got := exitCode(errors.New("unknown flag --rat")); got != exitUsage {
		t.Errorf("a usage error exits %d, want %d", got, exitUsage)
	}
}
