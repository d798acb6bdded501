package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// Exit codes of every command, the same for `harness loadtest`, `harness judge`, `harness
// hunt`, `harness bench` and `harness report` (docs/verdict.md, "Exit codes"): a judged run's are its
// outcome's (outcome.Outcome.ExitCode).
const (
	exitPass           = outcome.ExitPass
	exitGateFailed     = outcome.ExitFail
	exitNotMade        = outcome.ExitNotMade
	exitGeneratorBound = outcome.ExitGeneratorBound
)

// gateError is a run that completed but failed a check outside a judged run's outcome (a
// regression against the baseline, a claimcheck run): exit 1, unlike a run that could not be
// made (any other error: exit 2).
type gateError struct{ msg string }

func (e *gateError) Error() string { return e.msg }

// outcomeError is a judged run that did not pass: it exits with its outcome's code.
type outcomeError struct {
	outcome outcome.Outcome
	msg     string
}

func (e *outcomeError) Error() string { return e.msg }

// exitCode maps a command's error to the process's exit code.
func exitCode(err error) int {
	var gate *gateError
	var judged *outcomeError
	switch {
	case err == nil:
		return exitPass
	case errors.As(err, &judged):
		return judged.outcome.ExitCode()
	case errors.As(err, &gate):
		return exitGateFailed
	}
	return exitNotMade
}

// judged is what a judged run's exit rests on: its outcome and what to say of it.
type judged struct {
	outcome outcome.Outcome
	what    string   // "run", "hunt"
	file    string   // the file that holds it: summary.json, hunt.json
	failed  int      // gated failures
	notMade []string // why gated parts could not be made
}

// judgedError is the error a judged run exits with, by its outcome: nil when it passed
// (repErr, the report's, when it was not written: exit 2). A regression against the baseline
// (repErr a gate error) is a broken promise: it is combined with the run's outcome as one.
func judgedError(j judged, dir string, repErr error) error {
	var gate *gateError
	o := j.outcome
	if errors.As(repErr, &gate) {
		o = outcome.Combine(o, outcome.Fail)
	}
	report := dir + "/report.html"
	switch o {
	case outcome.Pass:
		return repErr
	case outcome.Fail:
		if j.outcome != outcome.Fail {
			return repErr // the baseline's regression
		}
		return &outcomeError{o, fmt.Sprintf("the %s failed its gates (%d failed); see %s", j.what, j.failed, report)}
	case outcome.NotMade:
		return &outcomeError{o, fmt.Sprintf("NOT MADE: %s; see %s", strings.Join(j.notMade, "; "), report)}
	case outcome.GeneratorBound:
		return &outcomeError{o, fmt.Sprintf("the %s is generator-bound: the generator did not keep its schedule, so its figures are not evidence either way (exit 3); lower --rate, use more cores or shards; see %s", j.what, report)}
	case outcome.Interrupted:
		return &outcomeError{o, fmt.Sprintf("the %s was interrupted: %s holds what was measured so far, marked interrupted; see %s", j.what, j.file, report)}
	case outcome.Incomplete:
		return &outcomeError{o, fmt.Sprintf("the %s was killed before it finished: %s holds what it had written, judged, marked incomplete; see %s", j.what, j.file, report)}
	}
	return &outcomeError{o, fmt.Sprintf("the %s's outcome is %q; see %s", j.what, o, report)}
}

// summaryJudged is a load test's or a judge's summary as its exit rests on it.
func summaryJudged(s result.Summary) judged {
	return judged{outcome: s.Outcome, what: "run", file: result.SummaryFile, failed: len(s.Failed), notMade: s.NotMade}
}

// huntJudged is a hunt as its exit rests on it.
func huntJudged(h result.Hunt) judged {
	return judged{outcome: h.Outcome, what: "hunt", file: result.HuntFile, failed: len(h.Failed), notMade: h.NotMade}
}
