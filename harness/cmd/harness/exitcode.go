package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/edgeproof/rlharness/harness/result"
)

// Exit codes of every command, the same for `harness loadtest`, `harness judge`, `harness
// hunt`, `harness bench` and `harness report` (docs/verdict.md, "Exit codes"). A generator-bound run
// has its own code, as k6 gives failed thresholds 99: CI can tell a small runner from a
// broken promise, and both from a run that could not be made.
const (
	exitPass = 0
	// exitGateFailed: a promise broken, a gate failed, or a regression against the baseline.
	exitGateFailed = 1
	// exitNotMade: the run could not be made (flags, files, Docker, the fleet, a target the
	// provider cannot start): no evidence about the limiter either way.
	exitNotMade = 2
	// exitGeneratorBound: the generator did not send the schedule faithfully (late, slow, or
	// its shards' clocks too far apart); the limiter's figures are not evidence either way.
	exitGeneratorBound = 3
)

// gateError is a run that completed but failed a check: exit 1, unlike a run that could not
// be made (any other error: exit 2).
type gateError struct{ msg string }

func (e *gateError) Error() string { return e.msg }

// inconclusiveError is a run whose generator fell behind: exit 3.
type inconclusiveError struct{ msg string }

func (e *inconclusiveError) Error() string { return e.msg }

// exitCode maps a command's error to the process's exit code.
func exitCode(err error) int {
	var gate *gateError
	var inconclusive *inconclusiveError
	switch {
	case err == nil:
		return exitPass
	case errors.As(err, &gate):
		return exitGateFailed
	case errors.As(err, &inconclusive):
		return exitGeneratorBound
	}
	return exitNotMade
}

// verdict is what a judged run's exit code rests on.
type verdict struct {
	pass           bool
	generatorBound bool
	// broken: a gated check failed on a run that was made.
	broken bool
	// notMade: why gated parts could not be made, when nothing made broke a promise.
	notMade []string
	failed  int // gated failures, for the message
}

// verdictError is the error a judged run exits with: nil when it passed; 1 when a promise
// was broken on traffic sent faithfully; 2 when a gated part could not be made and nothing
// made broke a promise; 3 when the generator fell behind (the figures are not evidence). A
// baseline regression (repErr a gate error) is the limiter's and exits 1 whatever the rest.
func verdictError(v verdict, dir string, repErr error) error {
	var gate *gateError
	switch {
	case len(v.notMade) > 0 && !(v.broken && !v.generatorBound) && !errors.As(repErr, &gate):
		return fmt.Errorf("NOT MADE: %s; see %s/report.html", strings.Join(v.notMade, "; "), dir)
	case !v.pass && !v.generatorBound:
		return &gateError{msg: fmt.Sprintf("the run failed its gates (%d failed); see %s/report.html", v.failed, dir)}
	case errors.As(repErr, &gate):
		return repErr
	case v.generatorBound:
		return &inconclusiveError{msg: fmt.Sprintf("the run is generator-bound: the generator did not keep its schedule, so its figures are not evidence either way (exit 3); lower --rate, use more cores or shards; see %s/report.html", dir)}
	}
	return repErr
}

// summaryVerdict is a load test's or a judge's summary as a verdict.
func summaryVerdict(s result.Summary) verdict {
	return verdict{pass: s.Pass, generatorBound: s.GeneratorBound, broken: s.Broken(), notMade: s.NotMade, failed: len(s.Failed)}
}
