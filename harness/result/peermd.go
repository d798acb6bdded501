package result

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/verdict/outcome"
)

// PeerTableHeader is the first line of PeerTableMarkdown: docs/results/peers.md's table
// starts with it, so a test can tell that the table there was made by the generator.
const PeerTableHeader = "| system | window | boundary burst | worst client | false rejects | errors | p99 | store commands / request | store stopped | store paused | store slow | store restarted | node killed | far zone | partition | verdict |"

// peerTableHeaderBeforeZones is the header the generator wrote before the far-zone and
// partition columns: a page's row with its columns is kept with those two cells saying it
// was not run through zones.
const peerTableHeaderBeforeZones = "| system | window | boundary burst | worst client | false rejects | errors | p99 | store commands / request | store stopped | store paused | store slow | store restarted | node killed | verdict |"

// PeerTableMarkdown is a run's systems side by side as a Markdown table (harness report
// --peer-table-md): docs/results/peers.md's table is this output for the peers',
// Traefik's and the gateways' summary.json (make results). A system without a store says so in the store columns instead of a zero
// that would read as a measurement.
func PeerTableMarkdown(rows []PeerRow) string {
	var b strings.Builder
	b.WriteString(PeerTableHeader + "\n")
	b.WriteString("|" + strings.Repeat(" --- |", strings.Count(PeerTableHeader, "|")-1) + "\n")
	for _, r := range rows {
		b.WriteString(joinCells(r.cells()))
	}
	return b.String()
}

// cells are the row's cells in the header's order. A row that ran only on a topology says
// so in the columns of a run without one, instead of zeros that would read as measurements.
func (r PeerRow) cells() []string {
	system := r.System
	if r.Gated {
		system += " (gated)"
	}
	out := []string{system}
	if r.Zoned && !r.Unzoned {
		for range 7 {
			out = append(out, "not run: only through zones")
		}
	} else {
		store := fmt.Sprintf("%.3f (%.3f ops)", r.StorePerRequest, r.StoreOpsPerRequest)
		if r.NoStore {
			store = "no store (peer traffic not measured)"
		}
		out = append(out, r.Window.String(), fmt.Sprintf("x%.3f", r.BoundaryOvershoot), fmt.Sprintf("%s x%.3f", r.WorstClient, r.MaxOvershoot),
			fmt.Sprint(r.FalseRejects), fmt.Sprint(r.Errors), r.P99.Round(10*time.Microsecond).String(), store)
	}
	for _, c := range r.FaultColumns() {
		out = append(out, c.Cell(r))
	}
	for _, c := range r.ZoneColumns() {
		out = append(out, c.Cell(r))
	}
	return append(out, r.Verdict())
}

// joinCells is one Markdown row of cells.
func joinCells(cells []string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// PeerZoneColumn is one zone column of the systems' table.
type PeerZoneColumn struct {
	Name string    // the column's head: "far zone"
	Zone *PeerZone // nil: not run
}

// ZoneColumns are the row's zone columns, in the table's order.
func (r PeerRow) ZoneColumns() []PeerZoneColumn {
	return []PeerZoneColumn{{"far zone", r.FarZone}, {"partition", r.Partition}}
}

// Cell is what the scenario on a topology showed, in one line: its outcome's word, the far
// zone and its link, the gate's worst client over every zone, and the far zone's own
// admissions, answer times and errors. One not run says why.
func (c PeerZoneColumn) Cell(r PeerRow) string {
	z := c.Zone
	switch {
	case z != nil:
		link := z.Link.String() + " each way"
		if z.PeerZone != "" { // no store: what the zone waits is its link to the other zones' nodes
			link = peerLinkText(z.PeerZone, z.PeerLink)
		}
		return fmt.Sprintf("%s: zone %s %s (%s): worst client x%.3f, %d false rejects, %d errors (%d timeouts); far zone admitted x%.3f, p99 %v, max %v, %d errors",
			z.Outcome.Word(), z.Zone, link, z.Zones, z.Overshoot, z.FalseRejects, z.Errors, z.Timeouts, z.FarOvershoot,
			Significant(z.FarP99, 3), Significant(z.FarMax, 3), z.FarErrors)
	case r.Zoned: // its run had a topology, a store or not: the fault was not asked for
		return notRunNotAmongFaults
	case r.NoStore:
		return notRunNoStoreZones
	}
	return notRunNoTopology
}

// The reasons a zone column gives for a system not run through zones.
const (
	notRunNoTopology     = "not run: its run had no topology"
	notRunNotAmongFaults = "not run: not among its run's faults on the topology"
	notRunNoStoreZones   = "not run: no store, and no zones given to its nodes (docs/zones.md#links-between-the-nodes-of-a-limiter-without-a-store)"
)

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

// KeepPeerRows is the table of rows (PeerTableMarkdown's) with the rows of the table on page
// (between PeerTableBegin and PeerTableEnd) whose system rows has no row for: a run made
// again replaces its own systems' rows, in their place, and leaves the others' as they were;
// a system the page lacks comes after them, in rows' order. A run made only on a topology
// replaces the page's zone columns of its systems and keeps their other columns, and one made
// only without a topology keeps their zone columns (make results of the peers' runs and of
// their zones' run). A kept row must have the generator's columns, or those of the generator
// before the zone columns (its zone cells then say it was not run through zones); one written
// by an older generator is refused, its run to be made again.
func KeepPeerRows(page string, rows []PeerRow) (string, error) {
	i, j := strings.Index(page, PeerTableBegin), strings.Index(page, PeerTableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %s ... %s block to keep rows from", PeerTableBegin, PeerTableEnd)
	}
	cols := strings.Count(PeerTableHeader, "|") - 1
	fresh := map[string][]PeerRow{} // a system two runs ran has two rows
	for _, r := range rows {
		fresh[r.System] = append(fresh[r.System], r)
	}
	var out []string
	placed := map[string]bool{}
	old := strings.Split(strings.TrimSpace(page[i+len(PeerTableBegin):j]), "\n")
	for k, line := range old {
		if k < 2 || !strings.HasPrefix(line, "|") { // the page's header and separator: the new ones stand
			continue
		}
		cells := splitCells(line)
		s := strings.TrimSuffix(cells[0], " (gated)")
		if len(cells) == strings.Count(peerTableHeaderBeforeZones, "|")-1 { // the generator's before the zone columns
			reason := notRunNoTopology
			if strings.HasPrefix(cells[7], "no store") {
				reason = notRunNoStoreZones
			}
			cells = append(cells[:len(cells)-1:len(cells)-1], reason, reason, cells[len(cells)-1])
		}
		if len(cells) != cols {
			return "", fmt.Errorf("the page's row for %s has %d column bars, the generator's %d: make its run again", s, strings.Count(line, "|"), cols+1)
		}
		n, ok := fresh[s]
		switch {
		case !ok:
			out = append(out, joinCells(cells))
		case !placed[s]:
			for _, r := range n {
				out = append(out, joinCells(keepPart(cells, r)))
			}
			placed[s] = true
		}
	}
	for _, r := range rows {
		if !placed[r.System] {
			out = append(out, joinCells(r.cells()))
		}
	}
	sep := "|" + strings.Repeat(" --- |", cols) + "\n"
	return PeerTableHeader + "\n" + sep + strings.Join(out, ""), nil
}

// keepPart is r's cells where r ran only one part of its system (on a topology, or without
// one) and the page's row has the other: the page's cells for the part r did not run, r's for
// the part it ran, and the verdict over both. Where r ran on a topology only, the page's
// verdict is combined in whole: it may be its old zone cells' as well as its other
// scenarios' (a row's verdict covers its scenario without a fault, which no cell shows), and
// a verdict never reads better than what was written.
func keepPart(page []string, r PeerRow) []string {
	cells := r.cells()
	zone := len(cells) - 1 - len(r.ZoneColumns()) // the first zone column
	switch {
	case r.Zoned && !r.Unzoned:
		// The page's system cell too: whether the zones' run gated it is not what its row says.
		cells = append(append(append([]string{}, page[:zone]...), cells[zone:len(cells)-1]...), "")
	case r.Unzoned && !r.Zoned:
		cells = append(append(append([]string{}, cells[:zone]...), page[zone:len(page)-1]...), "")
	default:
		return cells
	}
	v := r.Outcome
	if r.Unzoned {
		// The zone cells kept are the page's own: their outcomes, not the page's whole verdict.
		for _, c := range cells[zone : len(cells)-1] {
			v = outcome.Combine(v, cellOutcome(c))
		}
	} else {
		v = outcome.Combine(v, wordOutcome(page[len(page)-1]))
	}
	cells[len(cells)-1] = v.Word()
	return cells
}

// splitCells are a Markdown row's cells, trimmed.
func splitCells(row string) []string {
	parts := strings.Split(strings.TrimSpace(row), "|")
	if len(parts) < 3 {
		return nil
	}
	parts = parts[1 : len(parts)-1]
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// cellOutcome is the outcome a cell begins with ("FAIL: ..."); "" for one not run.
func cellOutcome(cell string) outcome.Outcome {
	word, _, ok := strings.Cut(cell, ":")
	if !ok {
		return ""
	}
	return wordOutcome(word)
}

// wordOutcome is the outcome whose Word is w; "" for none.
func wordOutcome(w string) outcome.Outcome {
	for _, o := range outcome.All {
		if o.Word() == w {
			return o
		}
	}
	return ""
}
