package model

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/result"
)

func TestClaimMessageBytesMatchDocument(t *testing.T) {
	m, err := RunClaimCheck()
	if err != nil {
		t.Fatal(err)
	}
	if m.AttachBytes != 40220 || m.ClaimBytes != 284 {
		t.Errorf("message bytes = %d, %d; want 40220, 284", m.AttachBytes, m.ClaimBytes)
	}
}

func TestClaimTablesMatchDocument(t *testing.T) {
	m, err := RunClaimCheck()
	if err != nil {
		t.Fatal(err)
	}
	// olc.out.txt: deliveries, carried MB, lost, orphans, dangling, processed, left in store.
	type row struct {
		deliveries                         int
		mb                                 string
		lost, orphans, dangling, processed int
		left                               int
	}
	want := [][]row{
		{
			{100000, "4022.00", 0, 0, 0, 100000, 0},
			{100000, "28.40", 0, 0, 0, 100000, 0},
			{100000, "28.40", 0, 0, 0, 100000, 100000},
		},
		{
			{100495, "4041.91", 492, 0, 0, 100495, 0},
			{100495, "28.54", 0, 492, 987, 99508, 492},
			{100495, "28.54", 0, 492, 0, 100495, 100000},
		},
	}
	if len(m.Days) != 2 {
		t.Fatalf("%d tables, want 2", len(m.Days))
	}
	for d, day := range m.Days {
		for i, w := range want[d] {
			r := day.Rows[i]
			got := row{r.Deliveries, fmt.Sprintf("%.2f", r.CarriedMB()), r.Lost, r.Orphans, r.Dangling, r.Processed, r.LeftInStore}
			if got != w {
				t.Errorf("%s / %s = %+v; want %+v", day.Name, ClaimSetting{r.Placement, r.Deletion}.Name(), got, w)
			}
		}
	}
	if p, c := m.Days[1].ProducerCrash, m.Days[1].ConsumerCrash; p != 0.005 || c != 0.01 {
		t.Errorf("fault window = %g, %g; want DD10's 0.005, 0.01", p, c)
	}
}

func TestClaimCostMatchesDocument(t *testing.T) {
	m, err := RunClaimCheck()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cost
	f := func(format string, v float64) string { return fmt.Sprintf(format, v) }
	// bedel.out.txt, figure by figure.
	checks := []struct{ got, want string }{
		{f("%.4f", c.PeakEvents), "13.8889"},
		{fmt.Sprint(c.Placements[0].MessageBytes), "40220"},
		{f("%.4f", c.Placements[0].QueueMbit), "4.4689"},
		{f("%.2f", c.Placements[0].TimesIngress), "26.29"},
		{f("%.1f", c.Placements[0].BacklogMB), "3016.5"},
		{fmt.Sprint(c.Placements[1].MessageBytes), "284"},
		{f("%.4f", c.Placements[1].QueueMbit), "0.0316"},
		{f("%.2f", c.Placements[1].TimesIngress), "0.19"},
		{f("%.1f", c.Placements[1].BacklogMB), "21.3"},
		{f("%.1f", c.QueueRatio), "141.6"},
		{fmt.Sprint(c.BacklogProofs), "75000"},
		{fmt.Sprint(c.TTL[0].Proofs), "400000"}, {f("%.2f", c.TTL[0].GB), "16.00"},
		{f("%.2f", c.TTL[0].PctStorage), "2.25"}, {f("%.2f", c.TTL[0].TimesGrowthMB), "16.39"},
		{fmt.Sprint(c.TTL[1].Proofs), "2800000"}, {f("%.2f", c.TTL[1].GB), "112.00"},
		{f("%.2f", c.TTL[1].PctStorage), "15.72"}, {f("%.2f", c.TTL[1].TimesGrowthMB), "114.75"},
		{fmt.Sprint(c.TTL[2].Proofs), "12000000"}, {f("%.2f", c.TTL[2].GB), "480.00"},
		{f("%.2f", c.TTL[2].PctStorage), "67.37"}, {f("%.2f", c.TTL[2].TimesGrowthMB), "491.80"},
		{f("%.0f", c.DanglingPerDay), "3948"},
		{f("%.0f", c.OrphansPerDay), "1968"},
		{f("%.1f", c.OrphanMBPerDay), "78.7"},
		{f("%.2f", c.OrphanGBPerYear), "28.73"},
		{f("%.0f", c.LostPerDayAttach), "1968"},
	}
	for i, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("figure %d = %s, want %s", i, ch.got, ch.want)
		}
	}
}

// TestWriteClaimCheckPrintsEveryTable prints the document's tables to the digit: every figure in its place, as
// testdata/claimcheck.txt (the output of `harness model claimcheck`) holds them.
// Each per-day figure is its own rate at K01 scale, lost events included (not the orphans'
// count, which happens to equal it in the document's run).
func TestCostPerDayFromRates(t *testing.T) {
	c := RunCost(40220, 284, FaultRates{Dangling: 0.01, Orphans: 0.002, Lost: 0.003})
	if c.DanglingPerDay != 4000 || c.OrphansPerDay != 800 || c.LostPerDayAttach != 1200 {
		t.Errorf("per day: dangling %g, orphans %g, lost %g; want 4000, 800, 1200", c.DanglingPerDay, c.OrphansPerDay, c.LostPerDayAttach)
	}
}

func TestWriteClaimCheckPrintsEveryTable(t *testing.T) {
	m, err := RunClaimCheck()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteClaimCheck(&b, m); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "testdata/claimcheck.txt", b.String())
}

// The ledger is the real pipeline's deduplication: with it every redelivery is a
// prevented duplicate, under either deletion policy, and nothing dangles.
func TestClaimLedgerPreventsDuplicates(t *testing.T) {
	for _, del := range []claimcheck.Deletion{claimcheck.Immediate, claimcheck.TTL} {
		c, err := RunClaim(result.ClaimSettings{N: ClaimEvents, Placement: claimcheck.Claim, Deletion: del,
			ProducerCrash: claimcheck.ProducerCrashP, ConsumerCrash: claimcheck.ConsumerCrashP, Seed: ClaimSeed, Ledger: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.Deliveries != 100495 || c.Processed != 99508 || c.Duplicates != 987 || c.Dangling != 0 || c.Orphans != 492 {
			t.Errorf("%s with a ledger = %+v; want 100495 deliveries, 99508 processed, 987 duplicates, 0 dangling, 492 orphans", del, c)
		}
	}
}

// The crash plan a real run injects is the model's own draws.
func TestClaimCrashPlanIsTheModelsDraws(t *testing.T) {
	p := NewClaimCrashPlan(ClaimEvents, claimcheck.ProducerCrashP, claimcheck.ConsumerCrashP, ClaimSeed)
	var prod, cons int
	for i := range p.Producer {
		if p.Producer[i] {
			prod++
		}
		if p.Consumer[i] {
			cons++
		}
	}
	if prod != 492 || cons != 987 {
		t.Errorf("plan = %d producer, %d consumer crashes; want 492, 987", prod, cons)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int]string{0: "0", 75000: "75,000", 12000000: "12,000,000", -1234: "-1,234", 999: "999"} {
		if got := Group(n); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
}
