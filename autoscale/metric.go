package autoscale

// DelayLine is a metric that arrives late: at round t the controller reads the measurement
// of round t − Delay (round 0's before there is one that old). The document's delay sweep
// is this line with Delay 0..6; a real run puts its added delay here, on top of what its
// collection pipeline already costs.
type DelayLine struct {
	delay   int
	samples []float64
}

// NewDelayLine returns a line that delays measurements by delay rounds (negative is 0).
func NewDelayLine(delay int) *DelayLine { return &DelayLine{delay: max(0, delay)} }

// Delay is the line's delay in rounds.
func (l *DelayLine) Delay() int { return l.delay }

// Record stores the measurement of the next round; rounds are recorded in order from 0.
func (l *DelayLine) Record(v float64) { l.samples = append(l.samples, v) }

// At is what the controller sees at round: the measurement of max(0, round − Delay), or
// false when that round has not been recorded.
func (l *DelayLine) At(round int) (float64, bool) {
	i := max(0, round-l.delay)
	if i >= len(l.samples) {
		return 0, false
	}
	return l.samples[i], true
}
