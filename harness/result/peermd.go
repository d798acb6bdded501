package result

import (
	"fmt"
	"strings"
	"time"
)

// PeerTableHeader is the first line of PeerTableMarkdown: the README's peer table starts
// with it, so a test can tell that the table there was made by the generator.
const PeerTableHeader = "| system | window | boundary burst | worst client | false rejects | errors | p99 | store commands / request | store stopped | store paused | verdict |"

// PeerTableMarkdown is a run's systems side by side as a Markdown table (harness report
// --peer-table-md): the README's peer table is this output for make loadtest-peers's
// summary.json. A system without a store says so in the store columns instead of a zero
// that would read as a measurement.
func PeerTableMarkdown(rows []PeerRow) string {
	var b strings.Builder
	b.WriteString(PeerTableHeader + "\n")
	b.WriteString("|" + strings.Repeat(" --- |", strings.Count(PeerTableHeader, "|")-1) + "\n")
	for _, r := range rows {
		system := r.System
		if r.Gated {
			system += " (gated)"
		}
		store := fmt.Sprintf("%.3f (%.3f ops)", r.StorePerRequest, r.StoreOpsPerRequest)
		if r.NoStore {
			store = "no store (peer traffic not measured)"
		}
		fmt.Fprintf(&b, "| %s | %v | x%.3f | %s x%.3f | %d | %d | %v | %s | %s | %s | %s |\n", system, r.Window, r.BoundaryOvershoot,
			r.WorstClient, r.MaxOvershoot, r.FalseRejects, r.Errors, r.P99.Round(10*time.Microsecond), store,
			faultCell(r.Stop, r.NoStore), faultCell(r.Pause, r.NoStore), r.Verdict)
	}
	return b.String()
}

func faultCell(f *PeerFault, noStore bool) string {
	switch {
	case f != nil:
		return fmt.Sprintf("%s: %d ok, %d rejected, %d errors (%d timeouts), p99 %v, x%.3f", f.Verdict, f.Accepted, f.Rejected, f.Errors, f.Timeouts,
			f.P99.Round(time.Millisecond), f.Overshoot)
	case noStore:
		return "no store: its fault is a node"
	}
	return "not run"
}
