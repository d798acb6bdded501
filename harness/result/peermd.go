package result

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// PeerTableHeader is the first line of PeerTableMarkdown: docs/results/peers.md's table
// starts with it, so a test can tell that the table there was made by the generator.
const PeerTableHeader = "| system | window | boundary burst | worst client | false rejects | errors | p99 | store commands / request | store stopped | store paused | store slow | store restarted | node killed | verdict |"

// PeerTableMarkdown is a run's systems side by side as a Markdown table (harness report
// --peer-table-md): docs/results/peers.md's table is this output for the peers',
// Traefik's and the gateways' summary.json (make results). A system without a store says so in the store columns instead of a zero
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
		fmt.Fprintf(&b, "| %s | %v | x%.3f | %s x%.3f | %d | %d | %v | %s |", system, r.Window, r.BoundaryOvershoot,
			r.WorstClient, r.MaxOvershoot, r.FalseRejects, r.Errors, r.P99.Round(10*time.Microsecond), store)
		for _, c := range r.FaultColumns() {
			fmt.Fprintf(&b, " %s |", c.Cell(r))
		}
		fmt.Fprintf(&b, " %s |\n", r.Verdict())
	}
	return b.String()
}

// Significant is d rounded to its first digits significant digits: 702µs stays 702µs and
// 2.3456ms is 2.35ms, where a round to the millisecond made the first 0s.
func Significant(d time.Duration, digits int) time.Duration {
	if d <= 0 || digits < 1 {
		return d
	}
	unit := time.Duration(1)
	for limit := d / time.Duration(math.Pow10(digits)); unit <= limit; unit *= 10 {
	}
	return d.Round(unit)
}

// Cell is what clients saw in one line: the verdict, the answers, the latency while the
// fault lasted and the worst client's overshoot. A fault the system cannot have says why
// instead of "not run": a store fault on a system without a store, a node killed in a system
// of one node (none is left to take its traffic).
func (c PeerFaultColumn) Cell(r PeerRow) string {
	f := c.Fault
	switch {
	case f != nil:
		errs := fmt.Sprintf("%d timeouts", f.Timeouts)
		if !c.Store {
			errs += fmt.Sprintf(", %d routing errors apart", f.RoutingErrors)
		}
		p99 := "p99 not measured (no request answered during the fault)"
		if f.Timed > 0 {
			p99 = fmt.Sprintf("p99 %v", Significant(f.P99, 3))
		}
		return fmt.Sprintf("%s: %d ok, %d rejected, %d errors (%s), %s, x%.3f", f.Verdict(), f.Accepted, f.Rejected, f.Errors, errs, p99, f.Overshoot)
	case r.NoStore && c.Store && r.Nodes == 1:
		return "no store"
	case r.NoStore && c.Store:
		return "no store: its fault is a node"
	case !c.Store && r.Nodes == 1:
		return "not run: one node, none left to take its traffic"
	}
	return "not run"
}

// The markers around the generated table on a page (docs/results/peers.md): make results
// replaces what lies between them.
const (
	PeerTableBegin = "<!-- peer-table:begin -->"
	PeerTableEnd   = "<!-- peer-table:end -->"
)

// KeepPeerRows is the table fresh (PeerTableMarkdown's) with the rows of the table on page
// (between PeerTableBegin and PeerTableEnd) whose system fresh has no row for: a run made
// again replaces its own systems' rows, in their place, and leaves the others' as they were;
// a system the page lacks comes after them, in fresh's order. A kept row must have the
// generator's columns: one written by an older generator is refused, its run to be made again.
func KeepPeerRows(page, fresh string) (string, error) {
	i, j := strings.Index(page, PeerTableBegin), strings.Index(page, PeerTableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %s ... %s block to keep rows from", PeerTableBegin, PeerTableEnd)
	}
	system := func(row string) string {
		cells := strings.SplitN(row, "|", 3)
		if len(cells) < 3 {
			return ""
		}
		return strings.TrimSuffix(strings.TrimSpace(cells[1]), " (gated)")
	}
	lines := strings.Split(strings.TrimSpace(fresh), "\n")
	if len(lines) < 2 || lines[0] != PeerTableHeader {
		return "", fmt.Errorf("the new table does not start with the generator's header %q", PeerTableHeader)
	}
	head, newRows := lines[:2], lines[2:]
	byNew := map[string][]string{} // a system two runs ran has two rows
	for _, r := range newRows {
		byNew[system(r)] = append(byNew[system(r)], r)
	}
	cols := strings.Count(PeerTableHeader, "|")
	var out []string
	placed := map[string]bool{}
	old := strings.Split(strings.TrimSpace(page[i+len(PeerTableBegin):j]), "\n")
	for k, r := range old {
		if k < 2 || !strings.HasPrefix(r, "|") { // the page's header and separator: the new ones stand
			continue
		}
		s := system(r)
		if n, ok := byNew[s]; ok {
			if !placed[s] {
				out, placed[s] = append(out, n...), true
			}
			continue
		}
		if n := strings.Count(r, "|"); n != cols {
			return "", fmt.Errorf("the page's row for %s has %d column bars, the generator's %d: make its run again", s, n, cols)
		}
		out = append(out, r)
	}
	for _, r := range newRows {
		if !placed[system(r)] {
			out = append(out, r)
		}
	}
	return strings.Join(append(head, out...), "\n") + "\n", nil
}
