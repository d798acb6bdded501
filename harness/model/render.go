package model

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/limiters"
)

// WriteRateLimit prints the rate-limiter document's tables as aligned text, one per
// document table, with English column names.
func WriteRateLimit(w io.Writer, m RateLimit) error {
	s := m.Sizing
	fmt.Fprintf(w, "Sizing (olcek.mjs, HS1-HS8)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "peak requests/s per node\t%g\t\n", s.PerNodePeak)
	fmt.Fprintf(tw, "counter touches/s with a central counter\t%g\t\n", s.CentralTouches)
	fmt.Fprintf(tw, "client limit per second\t%g\t\n", s.ClientRate)
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "counter layout\trecords per client\ttotal MB\t\n")
	for _, l := range s.Layouts {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t\n", l.Algorithm, l.PerClient, l.TotalMB)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nrequests one node does not see within %gs sync: %g (all clients)\n", SyncInterval.Seconds(), s.UnseenPerNode)
	fmt.Fprintf(w, "blind ceiling for one client = (limit/s) x sync x nodes = %g requests\n", s.BlindCeiling)
	fmt.Fprintf(w, "threshold: 1.1 x limit = %g; with the blind ceiling %g -> %s\n", s.Threshold, s.LimitPlusBlind, passWord(s.Passes))

	fmt.Fprintf(w, "\nWindow algorithms (pencere.mjs): 180 s, limit %d/%gs, bucket %d tokens, refill %g/s\n",
		Limit, Window.Seconds(), Burst, s.ClientRate)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "pattern\trequests\talgorithm\taccepted\trejected\tbusiest 60 s\tovershoot\tratio\t\n")
	for _, r := range m.Windows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\tx%.3f\t\n", r.Pattern, r.Requests, r.Algorithm,
			r.Accepted, r.Rejected, r.Busiest, r.Overshoot, r.Ratio)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nDistributed counter (dagitik.mjs): limit %d, %d nodes, seed %d\n", Limit, Nodes, DistSeed)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "client rate\trequests\tmode\taccepted\trejected\tovershoot\tfalse rejects\tcounter touches\t\n")
	for _, r := range m.Distributed {
		fmt.Fprintf(tw, "%d/s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t\n", r.ClientRate, r.Requests, r.Mode,
			r.Accepted, r.Rejected, r.Overshoot, r.FalseRejects, r.Touches)
	}
	tw.Flush()
	writeTimerNote(w, m.Distributed, func(r result.DistRow) string { return fmt.Sprintf("%d/s", r.ClientRate) })

	fmt.Fprintf(w, "\nDelayed sync, client rate 90/s (burst): sync interval sweep\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "sync interval\taccepted\tovershoot\tratio\ttouches/s\tthreshold %g\t\n", Limit*OvershootGate)
	for _, r := range m.SyncSweep {
		fmt.Fprintf(tw, "%g s\t%d\t%d\tx%.3f\t%.1f\t%s\t\n", r.SyncInterval, r.Accepted, r.Overshoot, r.Ratio,
			r.TouchesPerSec, passWord(r.Passes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeTimerNote(w, m.SyncSweep, func(r result.DistRow) string { return fmt.Sprintf("%g s", r.SyncInterval) })
	return nil
}

// writeTimerNote says where delayed sync's touches come from, and what the rows' own runs
// made, the nodes syncing on requests rather than on a timer.
func writeTimerNote(w io.Writer, rows []result.DistRow, label func(result.DistRow) string) {
	var runs []string
	for _, r := range rows {
		if r.Mode == string(limiters.ModeDelayed) {
			runs = append(runs, fmt.Sprintf("%d (%s)", r.RunExchanges, label(r)))
		}
	}
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(w, "delayed sync's touches: %d nodes' sync timers over one window, each node counting its exchanges;\n", Nodes)
	fmt.Fprintf(w, "  the runs above synced on requests and made %s\n", strings.Join(runs, ", "))
}

func passWord(ok bool) string {
	if ok {
		return "passes"
	}
	return "fails"
}

// WriteAutoscale prints the horizontal-scaling document's tables as aligned text, one per
// document table, with English column names.
func WriteAutoscale(w io.Writer, m Autoscale) error {
	fmt.Fprintf(w, "Controller (olcekleme.mjs): %d rounds, load %g-%g req/s (seed %d); %g req/s per replica, target utilisation %g%%\n",
		len(m.Series), m.MinLoad, m.MaxLoad, SeriesSeed, Saturation, TargetUtil*100)
	fmt.Fprintf(w, "required replicas %d-%d, ideal total %d replica-rounds\n\n", m.MinRequired, m.MaxRequired, m.IdealTotal)
	fmt.Fprintf(w, "Metric delay sweep (no stabilization window, no step limit)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "delay\tchanges\toscillation\tover-prov. replica-rounds\tunder-prov. rounds\ttotal replica-rounds\tpeak replicas\t\n")
	for _, r := range m.DelaySweep {
		s := r.Score
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.Setting.Delay, s.Changes, s.Oscillation, s.Over, s.Under, s.Total, s.Peak)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nDampers (denge.mjs): metric delay %d rounds unless the row says otherwise\n", MetricDelay)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "setting\tchanges\toscillation\tover-prov. replica-rounds\tunder-prov. rounds\tunder-prov. in step\ttotal replica-rounds\t\n")
	for _, r := range m.Dampers {
		s := r.Score
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.Name, s.Changes, s.Oscillation, s.Over, s.Under, s.UnderInStep, s.Total)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nStep test: load %d -> %d req/s at round %d; response rounds until replicas >= required\n",
		StepTestBefore, StepTestAfter, StepRounds.From)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "setting\t")
	for _, d := range StepTestDelays {
		fmt.Fprintf(tw, "delay %d\t", d)
	}
	fmt.Fprintln(tw)
	for _, r := range m.StepTest {
		fmt.Fprintf(tw, "%s\t", r.Name)
		for _, v := range r.Response {
			fmt.Fprintf(tw, "%d\t", v)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	s := m.Summary
	fmt.Fprintf(w, "\noscillation %d -> %d (%.0f%% drop), under-provisioned rounds in the step %d -> %d\n",
		s.OscillationFrom, s.OscillationTo, s.OscillationDrop, s.UnderInStepFrom, s.UnderInStepTo)
	_, err := fmt.Fprintf(w, "resources %d -> %d replica-rounds (ideal %d); the controller read %d measurements, each %d rounds late\n",
		s.TotalFrom, s.TotalTo, s.Ideal, s.MeasurementsRead, s.Delay)
	return err
}
