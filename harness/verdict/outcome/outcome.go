// Package outcome is what a judged run says, as one value: every scenario, hunt variant and
// family, peer row, history point and whole run stores one in its JSON, and every command,
// the terminal, the report, the JUnit file, the peer table and the history page read its
// word and its exit code from here. It imports nothing, so that harness/result can hold it.
package outcome

// Outcome is a verdict: a scenario's, a system's, a run's or a hunt's.
type Outcome string

// The outcomes, in the order Combine ranks them (the last says most).
const (
	// Pass: every gated check passed on traffic the generator sent on schedule.
	Pass Outcome = "pass"
	// GeneratorBound: the generator did not send the schedule faithfully (late, slow, or its
	// shards' clocks too far apart); the limiter's figures are not evidence either way.
	GeneratorBound Outcome = "generator-bound"
	// NotMade: the run (or a gated part of it) could not be made: flags, files, Docker, the
	// fleet, a target the provider cannot start. No evidence about the limiter either way.
	NotMade Outcome = "not-made"
	// Interrupted: the run was stopped (SIGINT, SIGTERM) before every part ran; what was
	// measured until then is kept.
	Interrupted Outcome = "interrupted"
	// Incomplete: the run was killed (SIGKILL, a crash) and judged afterwards on what it had
	// written.
	Incomplete Outcome = "incomplete"
	// Fail: a promise broken or a gate failed on traffic the generator sent on schedule.
	Fail Outcome = "fail"
)

// All are the outcomes in rank order.
var All = []Outcome{Pass, GeneratorBound, NotMade, Interrupted, Incomplete, Fail}

// rank orders the outcomes by what they say of the whole: a promise broken on traffic sent
// on schedule is evidence whatever else happened, so it outranks everything; a run cut short
// (killed, then interrupted) says more than one whose parts could not be made, which says
// more than one whose generator fell behind (the figures exist but are no evidence), which
// says more than a pass. An unknown value ranks as Fail: a verdict never reads better than
// what was written.
func (o Outcome) rank() int {
	for i, a := range All {
		if a == o {
			return i
		}
	}
	return len(All) - 1
}

// Of is a judged part's outcome from its checks: GeneratorBound when the generator's own
// checks failed (whatever the others said: they judged other traffic than the schedule),
// Fail when another check failed, Pass otherwise.
func Of(checksPassed, generatorBound bool) Outcome {
	switch {
	case generatorBound:
		return GeneratorBound
	case !checksPassed:
		return Fail
	}
	return Pass
}

// Combine is the outcome of a whole made of parts (scenarios of a run, scenarios of a
// system, families and systems of a hunt): the part that says most, by rank. Empty outcomes
// (parts not judged) are left out; "" when none is left.
func Combine(parts ...Outcome) Outcome {
	var worst Outcome
	for _, o := range parts {
		if o != "" && (worst == "" || o.rank() > worst.rank()) {
			worst = o
		}
	}
	return worst
}

// Word is the outcome as the terminal, the report and the tables print it: PASS, FAIL,
// GENERATOR-BOUND, NOT MADE, INTERRUPTED, INCOMPLETE.
func (o Outcome) Word() string {
	switch o {
	case Pass:
		return "PASS"
	case GeneratorBound:
		return "GENERATOR-BOUND"
	case NotMade:
		return "NOT MADE"
	case Interrupted:
		return "INTERRUPTED"
	case Incomplete:
		return "INCOMPLETE"
	case "":
		return "NOT RUN"
	}
	return "FAIL"
}

// Exit codes of every command that judges (docs/verdict.md, "Exit codes"). A generator-bound run has
// its own code, as k6 gives failed thresholds 99: CI can tell a small runner from a broken
// promise, and both from a run that could not be made.
const (
	ExitPass = 0
	// ExitFail: a promise broken or a gate failed (or a regression against a baseline), and
	// a run interrupted or killed: what it measured is cut short.
	ExitFail = 1
	// ExitNotMade: the run could not be made; no evidence about the limiter either way.
	ExitNotMade = 2
	// ExitGeneratorBound: the generator fell behind; the figures are not evidence either way.
	ExitGeneratorBound = 3
)

// ExitCode is the process's exit code for the outcome.
func (o Outcome) ExitCode() int {
	switch o {
	case Pass:
		return ExitPass
	case GeneratorBound:
		return ExitGeneratorBound
	case NotMade, "":
		return ExitNotMade
	}
	return ExitFail
}

// Line is the RESULT line every judging command ends its terminal output with: the word,
// and why where there is one to say.
func (o Outcome) Line(why string) string {
	if why == "" {
		return "RESULT: " + o.Word()
	}
	return "RESULT: " + o.Word() + ": " + why
}
