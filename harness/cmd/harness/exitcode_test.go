package main

import (
	"errors"
	"testing"

	"github.com/edgeproof/rlharness/harness/hunt"
	"github.com/edgeproof/rlharness/harness/result"
)

func TestExitCodes(t *testing.T) {
	regression := &gateError{msg: "1 regression(s) against the baseline"}
	notMade := []string{"mylimiter: the local provider cannot start a docker container: use --provider docker"}
	tests := []struct {
		name   string
		v      verdict
		repErr error
		want   int
	}{
		{"every gate passed", verdict{pass: true}, nil, exitPass},
		{"a promise broken", verdict{broken: true}, nil, exitGateFailed},
		// Generator-bound wins over the gates it failed with: the figures are not evidence.
		{"generator-bound", verdict{broken: true, generatorBound: true}, nil, exitGeneratorBound},
		{"a limiter regression on a generator-bound run is the limiter's", verdict{generatorBound: true}, regression, exitGateFailed},
		{"passed, but regressed against the baseline", verdict{pass: true}, regression, exitGateFailed},
		{"passed, the report could not be written", verdict{pass: true}, errors.New("write report.html: disk full"), exitNotMade},
		{"a gated scenario not made, nothing broken", verdict{notMade: notMade}, nil, exitNotMade},
		// A promise broken where the run was made is evidence, whatever else could not be made.
		{"not made beside a broken promise", verdict{notMade: notMade, broken: true}, nil, exitGateFailed},
		{"not made beside a generator-bound run", verdict{notMade: notMade, broken: true, generatorBound: true}, nil, exitNotMade},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verdictError(tc.v, "runs/x", tc.repErr)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit %d (%v), want %d", got, err, tc.want)
			}
		})
	}
	// The numbers themselves are the contract CI scripts and the README rely on.
	if exitPass != 0 || exitGateFailed != 1 || exitNotMade != 2 || exitGeneratorBound != 3 {
		t.Errorf("exit codes %d %d %d %d, want 0 1 2 3 as documented", exitPass, exitGateFailed, exitNotMade, exitGeneratorBound)
	}
	if got := exitCode(errors.New("unknown flag --rat")); got != exitNotMade {
		t.Errorf("a usage error exits %d, want %d", got, exitNotMade)
	}
}

// A hunt is not made when a system could not be hunted and no family broke a promise on
// another; a family that broke one makes it a FAIL whatever else could not be hunted.
func TestHuntVerdict(t *testing.T) {
	broke := result.HuntSystem{System: "replica", Families: []result.HuntFamily{{Name: "window-edge", Breaks: true}}}
	held := result.HuntSystem{System: "replica", Families: []result.HuntFamily{{Name: "window-edge"}}}
	notHunted := result.HuntSystem{System: "fixedwindow", Error: "start the fleet: the local provider cannot start a docker target"}
	for _, tc := range []struct {
		name    string
		systems []result.HuntSystem
		want    int
	}{
		{"held", []result.HuntSystem{held}, exitPass},
		{"broke", []result.HuntSystem{broke}, exitGateFailed},
		{"not hunted", []result.HuntSystem{notHunted}, exitNotMade},
		{"not hunted beside one held", []result.HuntSystem{held, notHunted}, exitNotMade},
		{"not hunted beside one broken", []result.HuntSystem{broke, notHunted}, exitGateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := result.Hunt{Systems: tc.systems}
			hunt.Verdict(&h)
			if got := exitCode(verdictError(huntVerdict(h), "runs/x", nil)); got != tc.want {
				t.Errorf("exit %d (pass %v, not made %v), want %d", got, h.Pass, h.NotMade, tc.want)
			}
		})
	}
}
