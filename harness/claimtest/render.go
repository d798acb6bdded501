package claimtest

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/harness/result"
)

// ResultFile is the name of a claim-check run's results in a run directory; the report
// gives it a section when it is there.
const ResultFile = result.ClaimCheckFile

// Write writes the results as dir/claimcheck.json.
func Write(dir string, rs []result.ClaimRun) error {
	return result.Write(dir, ResultFile, rs)
}

// Render prints a run's measured figures beside the model's for the same events, and its checks.
func Render(w io.Writer, r result.ClaimRun) error {
	name := r.Setting()
	fmt.Fprintf(w, "\n%s: %d events (a real run kept small for this machine; the document's model runs 100,000), %g events/s asked, seed %d,\n",
		name, r.Events, r.Rate, r.Seed)
	fmt.Fprintf(w, "  crashes p=%g producer / %g consumer, TTL %s, visibility %s, %s provider, %d consumers, %.1f s\n",
		r.Model.ProducerCrash, r.Model.ConsumerCrash, r.TTL, r.Visibility, r.Conditions.Provider, r.Conditions.Replicas-1, r.Measured.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\tmodel (document)\tmodel + ledger\tmeasured in Redis\t\n")
	for _, f := range r.Figures() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", f.Name, f.Model, f.Ledger, f.Measured)
	}
	tw.Flush()
	for _, c := range r.Checks {
		mark := "PASS"
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, c.Name, c.Detail)
	}
	return nil
}
