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
