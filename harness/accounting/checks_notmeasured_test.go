package accounting

import (
	"strings"
	"testing"
)

// A check without its evidence neither passes nor fails whatever its comparison: it does not
// fail the run, says it was not measured, and says why.
func TestNotMeasuredCheck(t *testing.T) {
	for _, tc := range []struct {
		op        string
		threshold float64
	}{{OpAtMost, 1.1}, {OpAtLeast, 0.9}, {OpEqual, 0}, {OpEqual, 3}} {
		c := NotMeasuredCheck("x", tc.op, tc.threshold, "no probe sent")
		if !c.Pass || !c.NotMeasured || c.Detail != "not measured: no probe sent" || c.Threshold != tc.threshold || !strings.HasPrefix(c.String(), "not measured x") {
			t.Errorf("%s %v: %+v", tc.op, tc.threshold, c)
		}
	}
}
