package main

import (
	"errors"
	"fmt"
)

// Exit codes of every command, the same for `harness loadtest`, `harness judge` and
// `harness report --baseline` (README, "Exit codes"). A generator-bound run has its own code,
// as k6 gives failed thresholds 99: CI can tell a small runner from a broken promise.
const (
	exitPass = 0
	// exitGateFailed: a promise broken, a gate failed, or a regression against the baseline.
	exitGateFailed = 1
	// exitUsage: the command could not run (flags, files, Docker, the fleet).
	exitUsage = 2
	// exitGeneratorBound: the generator did not send the schedule faithfully (late, slow, or
	// its shards' clocks too far apart); the limiter's figures are not evidence either way.
	exitGeneratorBound = 3
)

// gateError is a run that completed but failed a check: exit 1, unlike a usage or
// infrastructure error (exit 2).
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
	return exitUsage
}

// verdictError is the error a judged run exits with: nil when it passed, the generator-bound
// code when the generator fell behind (it wins: the figures are not evidence), 1 when a gate
// failed. A baseline regression (repErr a gate error) is the limiter's and exits 1 too.
func verdictError(pass, generatorBound bool, failed int, dir string, repErr error) error {
	var gate *gateError
	switch {
	case !pass && !generatorBound:
		return &gateError{msg: fmt.Sprintf("the run failed its gates (%d failed); see %s/report.html", failed, dir)}
	case errors.As(repErr, &gate):
		return repErr
	case generatorBound:
		return &inconclusiveError{msg: fmt.Sprintf("the run is generator-bound: the generator did not keep its schedule, so its figures are not evidence either way (exit 3); lower --rate, use more cores or shards; see %s/report.html", dir)}
	}
	return repErr
}
