package result

import "testing"

func TestRateAndNumberGroupThousands(t *testing.T) {
	for _, tt := range []struct {
		v         float64
		rate, num string
	}{
		{40000, "40,000", "40,000"},
		{40000.4, "40,000", "40,000"},
		{866.67, "867", "866.7"},
		{1234567, "1,234,567", "1,234,567"},
		{2.5, "2.5", "2.5"},
		{0.001234, "0.0", "0.001234"},
		{0, "0", "0"},
		{-12500, "-12,500", "-12,500"},
		{9999.5, "10,000", "10,000"},
		{999.96, "1,000", "1,000"},
		{12.345, "12", "12.35"},
	} {
		if got := Rate(tt.v); got != tt.rate {
			t.Errorf("Rate(%v) = %q, want %q", tt.v, got, tt.rate)
		}
		if got := Number(tt.v); got != tt.num {
			t.Errorf("Number(%v) = %q, want %q", tt.v, got, tt.num)
		}
	}
}

// A check on one line prints its figures as the verdict table does and no empty "()".
func TestCheckString(t *testing.T) {
	for _, tc := range []struct {
		c    Check
		want string
	}{
		{Check{Name: "overshoot after recovery", Figure: 700.0 / 600, Op: "<=", Threshold: 1.1, Detail: "probe-boundary-burst: 700 accepted"},
			"FAIL overshoot after recovery: 1.167 <= 1.1 (probe-boundary-burst: 700 accepted)"},
		{Check{Name: "5xx responses", Figure: 3615, Op: "==", Pass: false}, "FAIL 5xx responses: 3,615 == 0"},
		{Check{Name: "false rejects", Op: "==", Pass: true, Detail: "none"}, "pass false rejects: 0 == 0 (none)"},
		{Check{Name: "locked-out clients", Op: "==", Pass: true, NotMeasured: true, Detail: "no client sent steadily"},
			"not measured locked-out clients: 0 == 0 (no client sent steadily)"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
