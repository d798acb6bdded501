package scaletest

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/edgeproof/rlharness/autoscale"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
)

// WriteResult prints a real run's scores beside the model's, the replicas' start-up times
// and the generator's side.
func WriteResult(w io.Writer, a result.Autoscale) error {
	s := a.Settings
	fmt.Fprintf(w, "\n%s, metric delay %d added round(s); %d rounds of %v; rates x%g (a replica saturates at %.2f req/s = %g x %g)\n",
		autoscale.Config(s.Controller), s.AddedDelay, len(a.Rounds), s.Round, s.RateScale, s.Saturation, model.Saturation, s.RateScale)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tchanges\toscillation\tover-prov. replica-rounds\tunder-prov. rounds\tunder-prov. in step\ttotal replica-rounds\tpeak\tstep response\t\n")
	row := func(name string, sc autoscale.Score) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, sc.Changes, sc.Oscillation, sc.Over, sc.Under, sc.UnderInStep, sc.Total, sc.Peak, sc.Response)
	}
	row("real: asked", a.Asked)
	row("real: ready", a.Ready)
	row("model, same settings", a.Model)
	row("model, one round later", a.ModelNextRound)
	tw.Flush()

	var took []time.Duration
	failed, unfinished := 0, 0
	for _, st := range a.Startups {
		if st.Unfinished {
			unfinished++
			continue
		}
		if st.Error != "" {
			failed++
			continue
		}
		took = append(took, st.Took)
	}
	if len(took) > 0 {
		slices.Sort(took)
		mean := time.Duration(0)
		for _, d := range took {
			mean += d / time.Duration(len(took))
		}
		fmt.Fprintf(w, "replica start-up (asked -> ready): %d starts, min %v, mean %v, max %v (%.2f rounds mean)",
			len(took), took[0].Round(time.Millisecond), mean.Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond),
			float64(mean)/float64(s.Round))
		if failed > 0 {
			fmt.Fprintf(w, "; %d failed", failed)
		}
		if unfinished > 0 {
			fmt.Fprintf(w, "; %d cut short by the run's end", unfinished)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "metric pipeline: utilisation scraped %d times a round, averaged; best-fit lag of the reported load %.1f round(s); decisions apply from the next round\n",
		s.ScrapesPerRound, a.PipelineLag)
	var ok, shed, errs int
	for _, r := range a.Rounds {
		ok, shed, errs = ok+r.OK, shed+r.Shed, errs+r.Errors
	}
	_, err := fmt.Fprintf(w, "traffic: %d scheduled, %d sent (asked %.1f req/s, achieved %.1f req/s, max lateness %.0f ms%s); %d served, %d shed (503), %d errors\n",
		a.Traffic.Scheduled, a.Traffic.Sent, a.Traffic.AskedRate, a.Traffic.AchievedRate, a.Traffic.MaxLateness,
		map[bool]string{true: ", TRUNCATED", false: ""}[a.Traffic.Truncated], ok, shed, errs)
	return err
}
