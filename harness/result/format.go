package result

import (
	"fmt"
	"math"
	"strconv"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// english groups digits by thousands with commas, as the documents' figures are written.
var english = message.NewPrinter(language.English)

// Rate is a rate as every report and printout gives it: a whole number with its thousands
// grouped, "40,000" (never "4e+04"); a rate under 10 keeps one decimal ("2.5").
func Rate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if math.Abs(v) < 10 && v != math.Trunc(v) {
		return english.Sprintf("%.1f", v)
	}
	return english.Sprintf("%.0f", v)
}

// Number is a figure of any size without an exponent for the large ones: from 1,000 up a
// whole number with its thousands grouped (1,234,567), below it four significant digits
// (866.7, 12.35, 0.001234).
func Number(v float64) string {
	if math.Abs(v) >= 999.5 && !math.IsInf(v, 0) {
		return english.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}
