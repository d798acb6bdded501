package plan

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// referenceCheck splits the reference runs as docs/bench.md's check does: each
// population's highest rate the bounded design sustained (its steady run used) is checked
// against the costs fitted to every other run.
func referenceCheck(t *testing.T) (fitted []Input, tops []Input) {
	t.Helper()
	ins, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	c, err := FitCosts(ins, DefaultSystem, true)
	if err != nil {
		t.Fatalf("the reference costs do not fit: %v", err)
	}
	top := map[int]Point{}
	for _, p := range c.Points {
		if q, ok := top[p.Clients]; !ok || p.Load.Rate > q.Load.Rate {
			top[p.Clients] = p
		}
	}
	for _, in := range ins {
		if p, ok := top[in.Bench.Slice.Traffic.Clients]; ok && p.File == in.File {
			tops = append(tops, in)
		} else {
			fitted = append(fitted, in)
		}
	}
	return fitted, tops
}

// checkRows are a check as docs/bench.md's tables have it: the run checked (its directory
// below harness/plan), the part, busy cores predicted and measured, the error and the verdict.
func checkRows(ch Check) []string {
	var rows []string
	o := ch.Other
	for _, k := range ch.Parts {
		verdict := "within 15 %"
		if !k.Within() {
			verdict = "OUTSIDE 15 %"
		}
		rows = append(rows, fmt.Sprintf("| %s (%s req/s from %s clients) | %s | %.3f | %.3f | %+.0f %% | %s |",
			path.Dir(strings.TrimPrefix(o.File, path.Dir(ReferenceDir)+"/")), result.Rate(o.Load.Rate), result.Rate(float64(o.Clients)), k.Part, k.Predicted, k.Measure, 100*k.Error, verdict))
	}
	return rows
}

// The reference costs built into the harness load and fit (every run fitted or named as
// left out, with the commit and machine it ran on), and docs/bench.md's check table is what
// they give: each population's highest sustained rate planned from the costs of the other
// runs, part by part, "within 15 %" or "OUTSIDE 15 %" as the check says; a measure a third
// off turns its row to "OUTSIDE 15 %".
func TestReferenceCostsLoadAndTheCheckTableIsTheirs(t *testing.T) {
	ins, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	c, err := FitCosts(ins, DefaultSystem, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Points)+len(c.Skipped) != len(ins) || !c.HasRedis {
		t.Errorf("%d runs, %d fitted, %d left out, Redis measured %v", len(ins), len(c.Points), len(c.Skipped), c.HasRedis)
	}
	for _, in := range ins {
		if in.Bench.Commit == "" || in.Bench.Cores < 1 {
			t.Errorf("%s names no commit or cores (%q, %d): make plan-reference from make build's binary", in.File, in.Bench.Commit, in.Bench.Cores)
		}
	}
	if !strings.Contains(c.source(), "the reference costs built in") {
		t.Errorf("the costs do not say they are the reference: %s", c.source())
	}

	fitted, tops := referenceCheck(t)
	if len(tops) != 2 {
		t.Fatalf("checked runs %d, want one for each of the two populations", len(tops))
	}
	low, err := FitCosts(fitted, DefaultSystem, false)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, top := range tops {
		ch, err := CheckAgainst(low, top)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Parts) != 3 {
			t.Errorf("%s: %d parts checked, want the generator, the replica and Redis", top.File, len(ch.Parts))
		}
		for _, row := range checkRows(ch) {
			if !strings.Contains(string(doc), row+"\n") {
				t.Errorf("docs/bench.md's check table lacks\n%s", row)
			}
		}
		// The same run with its replica measured a third under the prediction is outside.
		top.Bench.StartedAt = top.Bench.StartedAt.Add(1)
		sl := *top.Bench.Slice
		sl.Systems = append([]result.FleetBench(nil), sl.Systems...)
		for i := range sl.Systems {
			if f := &sl.Systems[i]; f.Name == DefaultSystem {
				rep := *f.Replica
				rep.Cores = ch.Parts[1].Predicted / 1.33
				f.Replica = &rep
			}
		}
		top.Bench.Slice = &sl
		off, err := CheckAgainst(low, top)
		if err != nil {
			t.Fatal(err)
		}
		if rows := checkRows(off); !slices.Contains(off.Outside, "replica") || !strings.HasSuffix(rows[1], "| replica | "+fmt.Sprintf("%.3f", ch.Parts[1].Predicted)+" | "+fmt.Sprintf("%.3f", ch.Parts[1].Predicted/1.33)+" | +33 % | OUTSIDE 15 % |") {
			t.Errorf("a replica a third off: %v %s", off.Outside, rows[1])
		}
	}

	// The runs of a second hold of the lock (testdata/second-batch: the same commands, the
	// same binaries) checked against the same costs, as docs/bench.md's second table has them.
	again, err := Read([]string{"testdata/second-batch"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 3 {
		t.Fatalf("%d runs in testdata/second-batch, want 3", len(again))
	}
	for _, in := range again {
		ch, err := CheckAgainst(low, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range checkRows(ch) {
			if !strings.Contains(string(doc), row+"\n") {
				t.Errorf("docs/bench.md's second check table lacks\n%s", row)
			}
		}
	}
}
