package plan

import (
	"fmt"
	"math"
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
		// The same run with its generator measured a third over the prediction, or its
		// replica a third under it, is outside.
		for _, off := range []struct {
			part  int
			by    float64 // measured = predicted × by
			error string
		}{{0, 1.33, "-25 %"}, {1, 1 / 1.33, "+33 %"}} {
			k := ch.Parts[off.part]
			again := top
			again.Bench.StartedAt = top.Bench.StartedAt.Add(1)
			sl := *top.Bench.Slice
			sl.Systems = append([]result.FleetBench(nil), sl.Systems...)
			for i := range sl.Systems {
				if f := &sl.Systems[i]; f.Name == DefaultSystem {
					gen, rep := *f.Generator, *f.Replica
					switch k.Part {
					case "generator":
						gen.Cores = k.Predicted * off.by
					case "replica":
						rep.Cores = k.Predicted * off.by
					}
					f.Generator, f.Replica = &gen, &rep
				}
			}
			again.Bench.Slice = &sl
			outside, err := CheckAgainst(low, again)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("| %s | %.3f | %.3f | %s | OUTSIDE 15 %% |", k.Part, k.Predicted, k.Predicted*off.by, off.error)
			if rows := checkRows(outside); !slices.Equal(outside.Outside, []string{k.Part}) || !strings.HasSuffix(rows[off.part], want) {
				t.Errorf("the %s measured ×%.2f: outside %v, %s; want %s", k.Part, off.by, outside.Outside, rows[off.part], want)
			}
		}
	}
	// What docs/bench.md says of the fit: from the lower runs the generator's cost a request
	// is one for each busy core of the replica and Redis beside it (the constant cost a
	// request comes out negative and is left out), the replica's and Redis's as before.
	for _, tc := range []struct {
		name string
		f    Fit
		want []Term
	}{
		{"generator", low.Generator, []Term{Fixed, PerRequestBeside}},
		{"replica", low.Replica, []Term{Fixed, PerRequest, PerPastBudget}},
		{"Redis", low.Redis, []Term{Fixed, PerPastBudget}},
	} {
		if !slices.Equal(tc.f.Terms, tc.want) || tc.f.Points != 8 {
			t.Errorf("the %s fitted to the lower runs: %v over %d runs, want %v over 8", tc.name, tc.f.Terms, tc.f.Points, tc.want)
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

// The generator's third term is the one the lower runs support and the check bears out:
// fitted to the eight lower reference runs beside a fixed part and a cost a request, with
// the fit's own rules, each candidate is read at each population's 5,000 req/s, as
// docs/bench.md's table of them has it. A term for each client sent (the generator's
// per-client state and accounting) comes out negative and is left out; one a request past a
// budget, or one that grows with the rate itself, leaves the 25,000 clients' generator
// outside 15 %; one for each busy core of the replica and Redis beside it holds both.
func TestTheGeneratorsTermIsTheOneTheLowerRunsSupport(t *testing.T) {
	fitted, tops := referenceCheck(t)
	low, err := FitCosts(fitted, DefaultSystem, false)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]float64{} // distinct clients of each run's steady run
	for _, in := range append(slices.Clone(fitted), tops...) {
		f, err := system(in.Bench, in.File, DefaultSystem)
		if err != nil {
			t.Fatal(err)
		}
		sent[in.File] = float64(f.Steady.Clients)
	}
	// A candidate's load x is put in the column of a request past a budget (Past = x /
	// Rate), so that fit judges it by its own rules.
	type candidate struct {
		name string
		x    func(file string, l Load) float64
	}
	doc, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string][]float64{}
	for _, cand := range []candidate{
		{"none (the fit before)", nil},
		{"a client sent (per-client state and accounting)", func(file string, _ Load) float64 { return sent[file] }},
		{"a request past a budget (the store's share)", func(_ string, l Load) float64 { return l.Rate * l.Past }},
		{"a request for each req/s (the rate's own)", func(_ string, l Load) float64 { return l.Rate * l.Rate }},
		{"a request for each busy core beside it", nil},
	} {
		terms := []Term{Fixed, PerRequest}
		load := func(file string, l Load) Load { return Load{Rate: l.Rate} }
		switch {
		case cand.x != nil:
			terms = append(terms, PerPastBudget)
			load = func(file string, l Load) Load { return Load{Rate: l.Rate, Past: cand.x(file, l) / l.Rate} }
		case cand.name == "a request for each busy core beside it":
			terms = append(terms, PerRequestBeside)
			load = func(_ string, l Load) Load { return Load{Rate: l.Rate, Beside: l.Beside} }
		}
		var loads []Load
		var cores []float64
		for _, p := range low.Points {
			loads, cores = append(loads, load(p.File, p.Load)), append(cores, p.Generator)
		}
		f, err := fit(loads, cores, terms)
		if err != nil {
			t.Fatal(err)
		}
		kept := "-"
		if len(terms) == 3 {
			kept = "no: negative, left out"
			if i := slices.Index(f.Terms, terms[2]); i >= 0 {
				kept = fmt.Sprintf("yes, %.3g us", 1e6*f.Coef[i])
				if !slices.Contains(f.Terms, PerRequest) {
					kept += "; the constant cost a request negative, left out"
				}
			}
		}
		row := fmt.Sprintf("| %s | %s |", cand.name, kept)
		for _, top := range tops {
			ch, err := CheckAgainst(low, top)
			if err != nil {
				t.Fatal(err)
			}
			e := (f.At(load(top.File, ch.Load)) - ch.Other.Generator) / ch.Other.Generator
			errs[cand.name] = append(errs[cand.name], e)
			row += fmt.Sprintf(" %+.0f %% |", 100*e)
		}
		if !strings.Contains(string(doc), row+"\n") {
			t.Errorf("docs/bench.md's table of the generator's terms lacks\n%s", row)
		}
	}
	for name, es := range errs {
		within := !slices.ContainsFunc(es, func(e float64) bool { return math.Abs(e) > CheckTolerance })
		if within != (name == "a request for each busy core beside it") {
			t.Errorf("%s: errors %.3f at 5,000 req/s, within 15 %% %v", name, es, within)
		}
	}
}
