package reports

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/edgeproof/rlharness/harness/result"
)

// The limiter's promises, as the report's first screen states them: one line each, judged over
// the run's gated scenarios from the checks in summary.json.
const (
	PromiseOvershoot    = "overshoot"
	PromiseFalseRejects = "false-rejects"
	PromiseFailOpen     = "fail-open"
	PromiseNoLockout    = "no-lockout"
)

// promiseOf is the one place a check is given to the promise it gates. A check the harness
// adds slots in here; a check not named here is one of the run's other gates (the generator's
// schedule, errors outside fault windows, a killed node's answers, the cluster's store).
var promiseOf = map[string]string{
	"max overshoot":                     PromiseOvershoot,
	"max overshoot (arrival bounds)":    PromiseOvershoot,
	"overshoot after recovery":          PromiseOvershoot,
	"overshoot across the restart":      PromiseOvershoot,
	"overshoot while the store is slow": PromiseOvershoot,

	"false rejects":                  PromiseFalseRejects,
	"false rejects (client clock)":   PromiseFalseRejects,
	"false rejects (arrival bounds)": PromiseFalseRejects,

	"overshoot during the outage":              PromiseFailOpen,
	"5xx responses":                            PromiseFailOpen,
	"errors while the store is away":           PromiseFailOpen,
	"answer time while the store is slow (ms)": PromiseFailOpen,

	"locked-out clients": PromiseNoLockout,
}

// PromiseOf is the promise a check gates, or "" for the run's other gates.
func PromiseOf(check string) string { return promiseOf[check] }

// promiseName is a promise's name as the first screen heads its line ("No overshoot").
func promiseName(id string) string {
	for _, p := range promises {
		if p.ID == id {
			return p.Name
		}
	}
	return id
}

// promise is one promise: what it says, and why a run may hold no check of it.
type promise struct {
	ID, Name, Says string
	// absent says why the gated scenarios hold no check of the promise.
	absent func(gated []result.ScenarioResult) string
}

// beforeJudged is why a promise has no check in a run whose scenarios could have had one.
const beforeJudged = "this summary holds no check of it: it was written before the harness judged it"

var promises = []promise{
	{ID: PromiseOvershoot, Name: "No overshoot", Says: "no client gets more than 1.1x its limit in any window-long interval",
		absent: func([]result.ScenarioResult) string { return beforeJudged }},
	{ID: PromiseFalseRejects, Name: "No false rejects", Says: "a client under its limit is never refused",
		absent: func([]result.ScenarioResult) string { return beforeJudged }},
	{ID: PromiseFailOpen, Name: "Fail open", Says: "with the store away: no 5xx, every request answered, at most one limit per node",
		absent: func(gated []result.ScenarioResult) string {
			stored := false
			for _, sc := range gated {
				if storeFault(sc.Fault) {
					return beforeJudged
				}
				stored = stored || !sc.NoStore
			}
			if !stored {
				return "the system has no store to take away (it keeps its counters among its own nodes)"
			}
			return "this run has no store fault scenario (harness loadtest --faults store-stop,...; --fail-open=false leaves them out)"
		}},
	{ID: PromiseNoLockout, Name: "No lock-out", Says: "a client over its limit still gets its limit",
		absent: func([]result.ScenarioResult) string { return beforeJudged }},
}

// storeFault says whether a fault takes the counter store away (a killed node does not).
func storeFault(f string) bool {
	switch f {
	case result.FaultStop, result.FaultPause, result.FaultSlow, result.FaultRestart:
		return true
	}
	return false
}

// Results of a promise line.
const (
	promisePass         = "pass"
	promiseFail         = "FAIL"
	promiseInconclusive = "inconclusive"
	promiseNotMeasured  = "not measured"
)

// promiseLine is one promise judged over the run's gated scenarios.
type promiseLine struct {
	promise
	Result, Class string
	// Why says why the promise was not measured or is inconclusive.
	Why string
	// Scenarios are the gated scenarios with a check of the promise; Failed those where one
	// failed; Bound those that were generator-bound.
	Scenarios, Failed, Bound, Checks int
	Worst                            *namedCheck
}

// namedCheck is the worst check of a promise: where it was, and the client it names.
type namedCheck struct {
	Scenario string
	result.Check
	// Tie says every check of the promise was at its best figure (no false reject anywhere):
	// no scenario or client is worse than another.
	Tie bool
	// Client is the client the check names (empty when it names none); Probe says it is one of
	// the scenario's probes, charted on its own; Anchor is where the page shows it.
	Client string
	Probe  bool
	// Anchor is the element the first screen links to, and Shows says what is there.
	Anchor, Shows string
	// Bound says the scenario was generator-bound.
	Bound bool
}

// otherGates is the line under the promises: the gated checks no promise holds.
type otherGates struct {
	Checks, Passed, Failed int
	FailedNames            []string
}

// judgePromises is the first screen: every promise over the gated scenarios, and the other gates.
func judgePromises(sum result.Summary) ([]promiseLine, otherGates) {
	var gated []result.ScenarioResult
	for _, sc := range sum.Scenarios {
		if sc.Gated {
			gated = append(gated, sc)
		}
	}
	var other otherGates
	for _, sc := range gated {
		for _, c := range sc.Checks {
			if promiseOf[c.Name] == "" {
				other.Checks++
				if c.Pass {
					other.Passed++
				} else {
					other.Failed++
					other.FailedNames = append(other.FailedNames, sc.Name+": "+c.Name)
				}
			}
		}
	}
	out := make([]promiseLine, 0, len(promises))
	for _, p := range promises {
		out = append(out, judgePromise(p, gated))
	}
	return out, other
}

func judgePromise(p promise, gated []result.ScenarioResult) promiseLine {
	l := promiseLine{promise: p}
	var ran []result.ScenarioResult
	var boundFailed int
	notMeasured := "" // why a check of the promise said it was not measured
	perfect := true   // every check at its best figure: no scenario or client to point at
	for _, sc := range gated {
		if sc.Error == "" {
			ran = append(ran, sc)
		}
		held, failed := 0, false
		for _, c := range sc.Checks {
			if promiseOf[c.Name] != p.ID {
				continue
			}
			if c.NotMeasured {
				notMeasured = strings.TrimPrefix(c.Detail, "not measured: ")
				continue
			}
			held++
			failed = failed || !c.Pass
			perfect = perfect && c.Pass && pressure(c) == 0
			w := namedCheck{Scenario: sc.Name, Check: c, Bound: sc.GeneratorBound}
			if l.Worst == nil || worse(w, *l.Worst) {
				l.Worst = &w
			}
		}
		if held == 0 {
			continue
		}
		l.Checks += held
		l.Scenarios++
		if sc.GeneratorBound {
			l.Bound++
		}
		switch {
		case failed && sc.GeneratorBound:
			boundFailed++
		case failed:
			l.Failed++
		}
	}
	switch {
	case len(gated) == 0:
		l.Result, l.Why = promiseNotMeasured, "this run has no gated scenario"
	case l.Checks == 0 && len(ran) == 0:
		l.Result, l.Why = promiseNotMeasured, "no gated scenario ran: each failed to run (see Failed)"
	case l.Checks == 0 && notMeasured != "":
		l.Result, l.Why = promiseNotMeasured, notMeasured
	case l.Checks == 0:
		l.Result, l.Why = promiseNotMeasured, p.absent(ran)
	case l.Failed > 0:
		l.Result = promiseFail
	case l.Bound > 0:
		l.Result = promiseInconclusive
		l.Why = fmt.Sprintf("generator-bound in %d of %d: not evidence either way", l.Bound, l.Scenarios)
		if boundFailed > 0 {
			l.Why += fmt.Sprintf(" (a check failed in %d of them)", boundFailed)
		}
	default:
		l.Result = promisePass
	}
	l.Class = map[string]string{promisePass: "pass", promiseFail: "fail", promiseInconclusive: "bound", promiseNotMeasured: "bound"}[l.Result]
	if l.Worst == nil {
		return l
	}
	l.Worst.Tie = perfect
	if !l.Worst.Tie {
		for _, sc := range gated {
			if sc.Name == l.Worst.Scenario {
				l.Worst.Client, l.Worst.Probe = namedClient(sc, l.Worst.Check)
				l.Worst.Anchor, l.Worst.Shows = clientAnchor(sc, l.Worst.Client, l.Worst.Probe)
			}
		}
	}
	return l
}

// worse orders two checks of one promise: a failure where the generator kept its schedule, then
// one where it did not, then the figure nearest its threshold (or furthest past it).
func worse(a, b namedCheck) bool {
	rank := func(c namedCheck) int {
		switch {
		case !c.Pass && !c.Bound:
			return 2
		case !c.Pass:
			return 1
		}
		return 0
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra > rb
	}
	return pressure(a.Check) > pressure(b.Check)
}

// pressure is how close a check's figure came to its threshold, 1 at the threshold and more
// past it; for an equality, how far the figure is from it.
func pressure(c result.Check) float64 {
	switch c.Op {
	case "<=":
		if c.Threshold > 0 {
			return c.Figure / c.Threshold
		}
		return c.Figure
	case ">=":
		if c.Figure > 0 {
			return c.Threshold / c.Figure
		}
		return math.Inf(1)
	}
	return math.Abs(c.Figure - c.Threshold)
}

// namedID reads a client's ID where a check's detail names one: "client ID: ...",
// "first: ID, ..." (false rejects) or "ID: ..." at its start.
var namedID = regexp.MustCompile(`(?:\bclient |\bfirst: |^)([A-Za-z0-9][A-Za-z0-9_.-]*)[:,]`)

// namedClient is the client a check's detail names: one of the scenario's probes where it names
// one (the longest ID that occurs, so that probe-sync90 is not taken for probe-sync9), else the
// background client it names, else none.
func namedClient(sc result.ScenarioResult, c result.Check) (id string, probe bool) {
	for _, p := range sc.Probes {
		if len(p.ID) > len(id) && containsWord(c.Detail, p.ID) {
			id = p.ID
		}
	}
	if id != "" {
		return id, true
	}
	if m := namedID.FindStringSubmatch(c.Detail); m != nil {
		return m[1], false
	}
	return "", false
}

// containsWord says whether s holds id not inside a longer name.
func containsWord(s, id string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], id)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(id)
		before := j == 0 || !idByte(s[j-1])
		after := end == len(s) || !idByte(s[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func idByte(b byte) bool {
	return b == '-' || b == '_' || b == '.' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z'
}

// clientAnchor is where the page shows a named client, and what is there: a probe's own chart
// in its scenario's section; a background client has none of its own, so its scenario's chart
// of every background client's peak, or its scenario's section without one.
func clientAnchor(sc result.ScenarioResult, client string, probe bool) (anchor, shows string) {
	switch {
	case probe:
		return clientChartID(sc.Name, client), "its chart"
	case client != "" && len(sc.PeakRatios) > 0:
		return peakChartID(sc.Name), "background clients' peaks"
	}
	return scenarioID(sc.Name), "the scenario"
}

// scenarioID is the anchor of a scenario's section.
func scenarioID(scenario string) string {
	return "scenario-" + anchorUnsafe.ReplaceAllString(scenario, "_")
}

var anchorUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func clientChartID(scenario, client string) string {
	return "client-" + anchorUnsafe.ReplaceAllString(scenario, "_") + "--" + anchorUnsafe.ReplaceAllString(client, "_")
}

func peakChartID(scenario string) string {
	return "peaks-" + anchorUnsafe.ReplaceAllString(scenario, "_")
}
