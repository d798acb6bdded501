// Package autoscale is the horizontal scaling controller of document 003: a replica count
// driven by a measured utilisation, desired = ⌈current × utilisation / target⌉, bounded by a
// minimum and a maximum, with the document's two dampers (a stabilization window on
// scale-down and a step limit) and a metric that may arrive late.
//
// Rounds are passed in, as time is everywhere in this project: the same Controller decides on
// the document's model rounds and on a real run's wall-clock rounds. The package imports
// nothing of ours, so the model and the real replicas call one code path.
package autoscale

import (
	"fmt"
	"math"
)

// Document 003's controller settings and the M19 inputs it takes as given.
const (
	// DefaultTarget is the target utilisation (M19's capacity margin; an input in 003).
	DefaultTarget = 0.70
	// DefaultMin is the fewest replicas the controller keeps.
	DefaultMin = 1
	// DefaultMax is the replica upper limit. ZO27
	DefaultMax = 12
	// DefaultInitial is the replica count the controller starts at.
	DefaultInitial = 2
)

// Config is one controller setting. The zero values of Window and Step switch the dampers
// off, so Config{Target: 0.7, Min: 1, Max: 12} is the document's untuned controller.
type Config struct {
	// Target is the utilisation the controller steers each replica to, in (0, 1].
	Target float64 `json:"target"`
	// Min and Max bound the replica count; ZO27's Max is 12.
	Min int `json:"min"`
	Max int `json:"max"`
	// Window is the stabilization window: a scale-down is applied only in the Window-th
	// consecutive round that asks for one (ZO29). 0 and 1 apply it at once.
	Window int `json:"window"`
	// Step is the step limit: the replica count changes by at most Step per round (ZO30).
	// 0 is no limit.
	Step int `json:"step"`
}

// Default is the document's untuned controller: target 0.70, 1 to 12 replicas, no dampers.
func Default() Config {
	return Config{Target: DefaultTarget, Min: DefaultMin, Max: DefaultMax}
}

// Validate reports the first setting that cannot be used, and how to fix it.
func (c Config) Validate() error {
	switch {
	case !(c.Target > 0 && c.Target <= 1):
		return fmt.Errorf("target utilisation must be in (0, 1] (got %v); the document uses 0.70", c.Target)
	case c.Min < 1:
		return fmt.Errorf("minimum replicas must be >= 1 (got %d)", c.Min)
	case c.Max < c.Min:
		return fmt.Errorf("maximum replicas %d is below the minimum %d", c.Max, c.Min)
	case c.Window < 0:
		return fmt.Errorf("stabilization window must be >= 0 rounds (got %d); 0 or 1 is no window", c.Window)
	case c.Step < 0:
		return fmt.Errorf("step limit must be >= 0 replicas per round (got %d); 0 is no limit", c.Step)
	}
	return nil
}

// String names the setting as the document's tables do.
func (c Config) String() string {
	w, s := c.Window > 1, c.Step > 0
	switch {
	case w && s:
		return fmt.Sprintf("window %d + step %d", c.Window, c.Step)
	case w:
		return fmt.Sprintf("stabilization window %d", c.Window)
	case s:
		return fmt.Sprintf("step limit %d", c.Step)
	}
	return "untuned"
}

// Decision is what the controller did in one round.
type Decision struct {
	Round       int     `json:"round"`
	Utilisation float64 `json:"utilisation"`       // the measurement decided on
	From        int     `json:"from"`              // replicas before the decision
	Raw         int     `json:"raw"`               // ⌈From × Utilisation / Target⌉ within Min..Max, before the dampers
	To          int     `json:"to"`                // replicas asked for from this round on
	Limited     bool    `json:"limited,omitempty"` // the step limit cut the change
	Held        bool    `json:"held,omitempty"`    // the stabilization window held a scale-down back
}

// Direction is +1 for a scale-up, −1 for a scale-down, 0 when the count stays.
func (d Decision) Direction() int { return sign(d.To - d.From) }

// Controller holds the replica count and the stabilization window's streak. It is not safe
// for concurrent use: one control loop owns it.
type Controller struct {
	cfg      Config
	replicas int
	lowSince int // first round of the current run of scale-down requests; -1 when none
}

// New starts a controller at initial replicas (the document starts at 2).
func New(cfg Config, initial int) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if initial < cfg.Min || initial > cfg.Max {
		return nil, fmt.Errorf("initial replicas %d outside %d..%d", initial, cfg.Min, cfg.Max)
	}
	return &Controller{cfg: cfg, replicas: initial, lowSince: -1}, nil
}

// Replicas is the count asked for by the latest decision (the initial count before any).
func (c *Controller) Replicas() int { return c.replicas }

// Config is the controller's setting.
func (c *Controller) Config() Config { return c.cfg }

// Decide takes round's measured utilisation (busy share of the current replicas; above 1 when
// the offered load exceeds what they can serve) and sets the replica count for the round.
// Rounds must increase; the stabilization window counts rounds, so a round the caller skips
// still counts towards it. The step limit applies before the window, as in the document.
func (c *Controller) Decide(round int, utilisation float64) Decision {
	d := Decision{Round: round, Utilisation: utilisation, From: c.replicas}
	desired := int(math.Ceil(float64(c.replicas) * utilisation / c.cfg.Target))
	d.Raw = min(c.cfg.Max, max(c.cfg.Min, desired))
	to := d.Raw
	if c.cfg.Step > 0 {
		to = min(c.replicas+c.cfg.Step, max(c.replicas-c.cfg.Step, to))
		d.Limited = to != d.Raw
	}
	if to < c.replicas {
		if c.lowSince < 0 {
			c.lowSince = round
		}
		if round-c.lowSince+1 < c.cfg.Window {
			to, d.Held = c.replicas, true
		}
	} else {
		c.lowSince = -1
	}
	d.To = to
	c.replicas = to
	return d
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}
