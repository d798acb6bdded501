package claimtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/harness/model"
)

// ResultFile is the name of a claim-check run's results in a run directory; the report
// gives it a section when it is there.
const ResultFile = "claimcheck.json"

// Write writes the results as dir/claimcheck.json.
func Write(dir string, rs []Result) error {
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the run directory: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ResultFile), b, 0o644)
}

// Render prints a run's measured figures beside the model's for the same events, and its checks.
func Render(w io.Writer, r Result) error {
	name := model.ClaimSetting{Placement: r.Placement, Deletion: r.Deletion}.Name()
	fmt.Fprintf(w, "\n%s: %d events (a real run kept small for this machine; the document's model runs 100,000), %g events/s asked, seed %d,\n",
		name, r.Events, r.Rate, r.Seed)
	fmt.Fprintf(w, "  crashes p=%g producer / %g consumer, TTL %s, visibility %s, %s provider, %d consumers, %.1f s\n",
		r.Model.ProducerCrash, r.Model.ConsumerCrash, r.TTL, r.Visibility, r.Conditions.Provider, r.Conditions.Replicas-1, r.Measured.Seconds)
	m, doc, led := r.Measured, r.Model, r.Predicted
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\tmodel (document)\tmodel + ledger\tmeasured in Redis\t\n")
	row := func(name string, a, b, c any) { fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t\n", name, a, b, c) }
	row("message bytes", doc.MessageBytes, led.MessageBytes, avg(m.EntryBytes, m.StreamEntries))
	row("deliveries", doc.Deliveries, led.Deliveries, m.Deliveries)
	row("carried MB", mb(doc.CarriedBytes), mb(led.CarriedBytes), mb(m.QueueBytes))
	row("lost events", doc.Lost, led.Lost, m.Lost)
	row("orphan payloads", doc.Orphans, led.Orphans, m.Orphans)
	row("dangling claims", doc.Dangling, led.Dangling, m.Dangling)
	row("processed", doc.Processed, led.Processed, m.Effects)
	row("duplicates prevented", "-", led.Duplicates, m.Duplicates)
	row("left in store", doc.LeftInStore, led.LeftInStore, m.StorePayloads)
	row("store MB", "-", "-", mb(m.StoreBytes))
	row("producer crashes", doc.ProducerDied, led.ProducerDied, m.ProducerCrashes)
	row("consumer crashes", doc.ConsumerDied, led.ConsumerDied, m.ConsumerCrashes)
	row("acknowledged to the sender", "-", "-", m.Acknowledged)
	row("resent after a refused connection", "-", "-", m.Resent)
	row("redeliveries (XAUTOCLAIM)", "-", "-", m.Redeliveries)
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

func mb(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1e6) }

func avg(b int64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(b)/float64(n))
}
