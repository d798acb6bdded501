package model

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/result"
)

// WriteClaimCheck prints the claim-check document's tables as aligned text, one per
// document table, with English column names. Counts are grouped with commas where
// bedel.mjs groups them with dots (tr-TR).
func WriteClaimCheck(w io.Writer, m ClaimModel) error {
	fmt.Fprintf(w, "Message bytes (olc.mjs): attach %d, claim check %d (K01 V6 = %d B event, DD8 = %d B proof, DD9 = %d B claim)\n",
		m.AttachBytes, m.ClaimBytes, claimcheck.EventBytes, claimcheck.ProofBytes, claimcheck.ClaimBytes)
	for _, d := range m.Days {
		n := 0
		if len(d.Rows) > 0 {
			n = d.Rows[0].N
		}
		fmt.Fprintf(w, "\n%s: %d delivery events, producer crash %g, consumer crash %g, seed %d\n",
			d.Name, n, d.ProducerCrash, d.ConsumerCrash, ClaimSeed)
		if err := WriteClaimRows(w, d.Rows); err != nil {
			return err
		}
	}
	c := m.Cost
	fmt.Fprintf(w, "\nCost at K01 scale (bedel.mjs): peak %.4f delivery events/s (%s shipments/day, peak factor %d)\n",
		c.PeakEvents, Group(K01Shipments), K01PeakFactor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "placement\tmessage bytes\tqueue Mbit/s\tx K01 write ingress\tMB in backlog\t\n")
	for _, p := range c.Placements {
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.2fx\t%.1f\t\n", p.Placement, p.MessageBytes, p.QueueMbit, p.TimesIngress, p.BacklogMB)
	}
	tw.Flush()
	fmt.Fprintf(w, "queue byte ratio %.1fx; backlog %s proof-carrying messages (M19/K03: %s events / %d)\n\n",
		c.QueueRatio, Group(c.BacklogProofs), Group(K03Backlog), K03ProofShare)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "DD11 time-to-live\tproofs in store\tGB in store\t%% of K01 storage\tx daily growth\t\n")
	for _, t := range c.TTL {
		fmt.Fprintf(tw, "%d day%s\t%s\t%.2f\t%.2f %%\t%.2fx\t\n", t.Days, plural(t.Days), Group(t.Proofs), t.GB, t.PctStorage, t.TimesGrowthMB)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nFault window at K01 scale (%s delivery events/day):\n", Group(K01Shipments))
	fmt.Fprintf(w, "dangling claims %.0f/day, orphan payloads %.0f/day\n", c.DanglingPerDay, c.OrphansPerDay)
	fmt.Fprintf(w, "orphan payload bytes %.1f MB/day, %.2f GB/year without a time-to-live\n", c.OrphanMBPerDay, c.OrphanGBPerYear)
	_, err := fmt.Fprintf(w, "with the proof attached the same crashes drop %.0f events outright\n", c.LostPerDayAttach)
	return err
}

// WriteClaimRows prints olc.mjs's table for some runs.
func WriteClaimRows(w io.Writer, rows []result.ClaimCounts) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "placement\tdeliveries\tcarried MB\tlost events\torphan payloads\tdangling claims\tprocessed\tleft in store\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%d\t%d\t%d\t%d\t%d\t\n", ClaimSetting{r.Placement, r.Deletion}.Name(),
			r.Deliveries, r.CarriedMB(), r.Lost, r.Orphans, r.Dangling, r.Processed, r.LeftInStore)
	}
	return tw.Flush()
}

// Group writes n with thousands separated by commas: 2,800,000.
func Group(n int) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
