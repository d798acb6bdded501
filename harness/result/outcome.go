package result

import (
	"encoding/json"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// ScenarioOutcome is a judged scenario's outcome: not made when it could not run (its
// Error), else its checks' (outcome.Of), and incomplete where the run was killed during it,
// unless a promise was broken on what it had written.
func ScenarioOutcome(r ScenarioResult) outcome.Outcome {
	if r.Error != "" {
		return outcome.NotMade
	}
	o := outcome.Of(r.Pass, r.GeneratorBound)
	if r.Incomplete != "" {
		o = outcome.Combine(o, outcome.Incomplete)
	}
	return o
}

// Settle sets the run's outcome from its gated scenarios' (outcome.Combine) and how it ended
// (interrupted, incomplete), and Pass and GeneratorBound to agree with it. Comparison
// scenarios test the document's claims about other designs: they do not decide it.
func (s *Summary) Settle() {
	o := outcome.Pass
	for _, r := range s.Scenarios {
		if r.Gated {
			o = outcome.Combine(o, r.Outcome)
		}
	}
	if s.Interrupted {
		o = outcome.Combine(o, outcome.Interrupted)
	}
	if s.Incomplete {
		o = outcome.Combine(o, outcome.Incomplete)
	}
	s.Outcome, s.Pass, s.GeneratorBound = o, o == outcome.Pass, o == outcome.GeneratorBound
}

// UnmarshalJSON reads a scenario, giving one written before scenarios stored their outcome
// the outcome its fields say.
func (r *ScenarioResult) UnmarshalJSON(b []byte) error {
	type plain ScenarioResult
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.Outcome == "" {
		r.Outcome = ScenarioOutcome(*r)
	}
	return nil
}

// UnmarshalJSON reads a summary, settling one written before runs stored their outcome by
// the same rule a run is settled by now.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	if s.Outcome == "" {
		s.Settle()
	}
	return nil
}

// FamilyOutcome is a hunt family's outcome: its worst variant's (the search keeps a variant
// that broke a promise on schedule as the worst), fail when a pressure level broke a
// promise; "" when the family did not run or no variant was sent.
func FamilyOutcome(f HuntFamily) outcome.Outcome {
	if f.NotRun != "" || f.Worst == nil {
		return ""
	}
	o := f.Worst.Outcome
	if f.BrokeUnderPressure {
		o = outcome.Combine(o, outcome.Fail)
	}
	return o
}

// Settle sets the hunt's outcome from its systems' (not made where one could not be hunted)
// and their families' (outcome.Combine), interrupted where it was stopped; and Failed,
// NotMade, Pass and GeneratorBound to agree with it.
func (h *Hunt) Settle() {
	o := outcome.Pass
	h.Failed, h.NotMade = nil, nil
	for _, s := range h.Systems {
		name := s.Label()
		if s.Error != "" {
			o = outcome.Combine(o, outcome.NotMade)
			h.Failed = append(h.Failed, name+": "+s.Error)
			h.NotMade = append(h.NotMade, name+": "+s.Error)
		}
		for _, f := range s.Families {
			o = outcome.Combine(o, f.Outcome)
			if f.Breaks {
				h.Failed = append(h.Failed, name+" "+f.Name+": "+f.Verdict())
			}
			if f.BrokeUnderPressure {
				h.Failed = append(h.Failed, name+" "+f.Name+" under pressure: "+f.PressureVerdict)
			}
		}
	}
	if h.Interrupted {
		o = outcome.Combine(o, outcome.Interrupted)
		h.Failed = append(h.Failed, "interrupted")
	}
	h.Outcome, h.Pass, h.GeneratorBound = o, o == outcome.Pass, o == outcome.GeneratorBound
}

// Label is the system and, for the built-in replica, its design.
func (s HuntSystem) Label() string {
	if s.Design != "" {
		return s.System + " (design " + s.Design + ")"
	}
	return s.System
}

// UnmarshalJSON reads a hunt, settling one written before hunts stored their outcome: its
// variants' from their checks, its families' and its own by the rules a hunt is settled by.
func (h *Hunt) UnmarshalJSON(b []byte) error {
	type plain Hunt
	if err := json.Unmarshal(b, (*plain)(h)); err != nil {
		return err
	}
	if h.Outcome != "" {
		return nil
	}
	for i := range h.Systems {
		for k := range h.Systems[i].Families {
			f := &h.Systems[i].Families[k]
			if f.Worst != nil && f.Worst.Outcome == "" {
				f.Worst.Outcome = variantOutcome(*f.Worst)
			}
			for t := range f.Tried {
				if f.Tried[t].Outcome == "" {
					f.Tried[t].Outcome = variantOutcome(f.Tried[t])
				}
			}
			f.Outcome = FamilyOutcome(*f)
			if f.Breaks && f.Outcome != "" {
				f.Outcome = outcome.Fail // a family that broke by the rule of its time
			}
		}
	}
	h.Settle()
	return nil
}

// variantOutcome is a variant's outcome from its checks, for a hunt written before variants
// stored it.
func variantOutcome(v HuntVariant) outcome.Outcome {
	passed := true
	for _, c := range v.Checks {
		passed = passed && c.Pass
	}
	return outcome.Of(passed, v.GeneratorBound)
}
