package hunt

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// WriteSummary prints what the hunt found: per system, per family, the worst case, its
// parameters and the schedule file that replays it, then the result. dir is the run
// directory the schedule paths are relative to.
func WriteSummary(w io.Writer, h result.Hunt, dir string) {
	for _, s := range h.Systems {
		fmt.Fprintf(w, "\nHunt of %s: %d replicas, window %v, limit %d, time scale %g; %d rounds, %d requests in %v (%s)\n",
			systemName(s), s.Replicas, s.Window, s.Limit, s.TimeScale, len(s.Rounds), s.Requests, s.Elapsed.Round(time.Second), s.Stopped)
		if s.Error != "" {
			fmt.Fprintf(w, "  ERROR: %s\n", s.Error)
		}
		if s.Ceiling > 0 {
			fmt.Fprintf(w, "  the generator's ceiling: %.0f req/s at its peak, on a burst sent at once before the pressure rounds\n", s.Ceiling)
		}
		if s.Learned.Edge != "" {
			fmt.Fprintf(w, "  learned: %s\n  learned: %s\n", s.Learned.Edge, s.Learned.Ticks)
		}
		fmt.Fprintf(w, "  %-16s %-9s %8s %9s %6s  %s\n", "family", "kind", "variants", "worst", "false", "verdict")
		for _, f := range s.Families {
			worst, falseRej := "-", "-"
			if f.Worst != nil {
				worst = fmt.Sprintf("x%.3f", f.Worst.Overshoot)
				falseRej = fmt.Sprint(f.Worst.FalseRejects)
			}
			fmt.Fprintf(w, "  %-16s %-9s %8d %9s %6s  %s\n", f.Name, f.Kind, len(f.Tried), worst, falseRej, f.Verdict())
			if f.Worst != nil {
				fmt.Fprintf(w, "  %-16s worst: %s (round %d, client %s)%s\n", "", f.Worst.ParamString(), f.Worst.Round, f.Worst.Client, herdWords(*f.Worst))
				if f.Worst.Clocks != nil {
					fmt.Fprintf(w, "  %-16s %s\n", "", f.Worst.Clocks)
				}
			}
			if f.Schedule != "" {
				fmt.Fprintf(w, "  %-16s replay: harness loadtest %s--schedule %s\n", "", replayFlags(s), filepath.Join(dir, f.Schedule))
			}
			if f.PressureVerdict != "" {
				fmt.Fprintf(w, "  %-16s pressure: %s\n", "", f.PressureVerdict)
				for _, p := range f.PressureRounds {
					fmt.Fprintf(w, "  %-16s   level %d: herd %d, %d per replica per ms, share x%.3g, %s: x%.3f, %d false rejects; peak %.0f of %.0f req/s asked%s\n",
						"", p.Level, p.Herd, p.Conns, p.Share, Passes(p.Repeat), p.Variant.Overshoot, p.Variant.FalseRejects, p.AchievedPeak, p.AskedPeak, storeWords(p))
				}
			}
			if f.PressureSchedule != "" {
				fmt.Fprintf(w, "  %-16s replay (pressure): harness loadtest %s--schedule %s\n", "", replayFlags(s), filepath.Join(dir, f.PressureSchedule))
			}
			if f.Note != "" {
				fmt.Fprintf(w, "  %-16s note: %s\n", "", f.Note)
			}
		}
	}
	fmt.Fprintln(w, h.Outcome.Line(huntWhy(h)))
}

// huntWhy is what the RESULT line says beside the hunt's outcome.
func huntWhy(h result.Hunt) string {
	switch h.Outcome {
	case outcome.NotMade:
		return strings.Join(h.NotMade, "; ")
	case outcome.GeneratorBound:
		return "nothing broke, and some family's every variant was sent late or slow; lower --max-rate"
	case outcome.Pass:
		return "no family broke 1.1x or rejected a client within its limit"
	}
	return strings.Join(h.Failed, "; ")
}

// replayFlags are the flags a replay of a system's schedule needs besides the file: the
// target file, or the built-in replica's design.
func replayFlags(s result.HuntSystem) string {
	// A hunt on a topology replays on it: a partition round's schedule cuts its far zone.
	zones := ""
	if len(s.Conditions.Zones) > 0 {
		zones = "--zones '" + topology.Topology{Zones: s.Conditions.Zones}.String() + "' "
	}
	switch {
	case s.System != "replica" && s.TargetFile != "":
		return "--target " + s.TargetFile + " " + zones
	case s.System != "replica":
		return "--target <" + s.System + "'s target file> " + zones
	case s.Design != "":
		return "--design " + s.Design + " " + zones
	}
	return zones
}

// storeWords is a pressure round's store load in words, empty when it was not read.
func storeWords(p result.HuntPressureRound) string {
	if !p.StoreRead {
		return ""
	}
	return fmt.Sprintf("; %.0f store timeouts, %.0f decisions without the store", p.StoreTimeouts, p.Degraded)
}

// herdWords says how many of a herd's clients got more than 1.1x, empty for one client.
func herdWords(v result.HuntVariant) string {
	if v.Clients < 2 {
		return ""
	}
	return fmt.Sprintf("; %d of its %d clients over 1.1x", v.ClientsOver, v.Clients)
}
