package reports

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/edgeproof/rlharness/harness/result"
)

// JUnitFile is the name of the JUnit report in a run directory.
const JUnitFile = "junit.xml"

// JUnitSuites is a JUnit XML document: the shape CI systems (Jenkins, GitLab, GitHub
// actions that publish test results) read.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one scenario.
type JUnitSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Time     float64 `xml:"time,attr"`
	// Properties hold the scenario's outcome and the run's (outcome.Outcome), so that a CI
	// step can tell a failure on schedule from one on late traffic without re-judging.
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name and a value of a suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one gated check.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *JUnitProblem `xml:"failure,omitempty"`
	Error     *JUnitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitProblem is a failure (a gate missed) or an error (the scenario did not run).
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit turns the gated scenarios' checks into test cases, one per check (a generator-bound
// run shows as its failed lateness or rate check); a gated scenario
// that failed to run is one errored case. Comparisons are not gates and are left out.
func JUnit(s result.Summary) JUnitSuites {
	doc := JUnitSuites{Name: "harness loadtest"}
	for _, sc := range s.Scenarios {
		if !sc.Gated {
			continue
		}
		suite := JUnitSuite{Name: sc.Name, Time: sc.Duration.Seconds(),
			Properties: []JUnitProperty{{"outcome", string(sc.Outcome)}, {"run outcome", string(s.Outcome)}}}
		for _, c := range sc.Checks {
			tc := JUnitCase{Name: c.Name, ClassName: "loadtest." + sc.Name, SystemOut: c.Detail}
			if !c.Pass {
				tc.Failure = &JUnitProblem{Type: "gate",
					Message: fmt.Sprintf("%s: figure %g, want %s %g", c.Name, c.Figure, c.Op, c.Threshold), Text: c.Detail}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, tc)
		}
		if sc.Error != "" {
			suite.Cases = append(suite.Cases, JUnitCase{Name: "scenario ran", ClassName: "loadtest." + sc.Name,
				Error: &JUnitProblem{Type: "error", Message: sc.Error}})
			suite.Errors++
		}
		suite.Tests = len(suite.Cases)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}
	return doc
}

// WriteJUnit writes the JUnit document of s.
func WriteJUnit(w io.Writer, s result.Summary) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(s)); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
