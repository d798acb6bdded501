package hunt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Variant is one point of a family's parameter space, to be sent as its own client.
type Variant struct {
	Family int // index into the search's families
	Values []float64
	// Level is 0 for the coarse sweep, k for the k-th refinement.
	Level int
	// Pressure, when set, is the pressure ladder's level the variant is sent at (its
	// values' burst rates already the level's).
	Pressure *PressureLevel
}

func (v Variant) key() string {
	var b strings.Builder
	for _, x := range v.Values {
		b.WriteString(strconv.FormatFloat(x, 'g', 12, 64))
		b.WriteByte(',')
	}
	return b.String()
}

// Measured is what a variant did: its score (higher is worse for the limiter: the
// overshoot, false rejects, or the fault's figures against their bounds) and whether the
// generator kept its schedule.
type Measured struct {
	Score          float64
	GeneratorBound bool
}

// better says whether a beats b as the family's worst case: a variant the generator sent
// faithfully beats any it did not, then the higher score.
func (a Measured) better(b Measured) bool {
	if a.GeneratorBound != b.GeneratorBound {
		return !a.GeneratorBound
	}
	return a.Score > b.Score
}

// Search is the per-family search: a coarse sweep of each family's space, then Levels
// rounds of refinement, each trying the best point's neighbours at half the previous step
// along every parameter. It decides what to try from what was measured; it sends nothing.
type Search struct {
	fams []*famSearch
	// Levels of refinement after the coarse sweep.
	Levels int
}

type famSearch struct {
	f       Family
	space   []ParamSpec
	queue   []Variant
	tried   map[string]bool
	out     int // variants handed out and not yet recorded
	level   int
	best    *Variant
	bestM   Measured
	stopped string // why the family stopped early ("" while it goes on)
}

// NewSearch starts a search of fams in env: each family's coarse sweep, at most maxCoarse
// points of the grid (a seeded sample when the grid is larger).
func NewSearch(fams []Family, env Env, maxCoarse, levels int, rng *rand.Rand) *Search {
	s := &Search{Levels: levels}
	for fi, f := range fams {
		fs := &famSearch{f: f, space: f.Space(env), tried: map[string]bool{}}
		grid := [][]float64{nil}
		for _, p := range fs.space {
			var next [][]float64
			for _, g := range grid {
				for _, v := range p.coarse() {
					next = append(next, append(slices.Clone(g), v))
				}
			}
			grid = next
		}
		if maxCoarse > 0 && len(grid) > maxCoarse {
			rng.Shuffle(len(grid), func(i, j int) { grid[i], grid[j] = grid[j], grid[i] })
			grid = grid[:maxCoarse]
		}
		for _, g := range grid {
			fs.add(Variant{Family: fi, Values: g})
		}
		s.fams = append(s.fams, fs)
	}
	return s
}

func (fs *famSearch) add(v Variant) {
	if k := v.key(); !fs.tried[k] {
		fs.tried[k] = true
		fs.queue = append(fs.queue, v)
	}
}

// Family is family i as the search was given it, and its parameter space.
func (s *Search) Family(i int) (Family, []ParamSpec) { return s.fams[i].f, s.fams[i].space }

// Families is how many families the search holds.
func (s *Search) Families() int { return len(s.fams) }

// Next hands out every queued variant of the families ok accepts (nil: all).
func (s *Search) Next(ok func(Family) bool) []Variant {
	var out []Variant
	for _, fs := range s.fams {
		if fs.stopped != "" || ok != nil && !ok(fs.f) {
			continue
		}
		out = append(out, fs.queue...)
		fs.out += len(fs.queue)
		fs.queue = nil
	}
	return out
}

// Return gives back variants that were handed out but not sent (they did not fit a round):
// the next Next hands them out again first.
func (s *Search) Return(vs []Variant) {
	for i := len(vs) - 1; i >= 0; i-- {
		fs := s.fams[vs[i].Family]
		fs.queue = append([]Variant{vs[i]}, fs.queue...)
		fs.out--
	}
}

// Record takes a sent variant's measurement. Once a family has every variant of its level
// back, its next level's variants are queued: the best point's neighbours.
func (s *Search) Record(v Variant, m Measured) {
	fs := s.fams[v.Family]
	fs.out--
	if fs.best == nil || m.better(fs.bestM) {
		vv := v
		fs.best, fs.bestM = &vv, m
	}
	if fs.out > 0 || len(fs.queue) > 0 || fs.stopped != "" {
		return
	}
	for fs.level < s.Levels && len(fs.queue) == 0 {
		fs.level++
		for i, p := range fs.space {
			d := p.step() / float64(uint(1)<<fs.level)
			for _, x := range []float64{fs.best.Values[i] - d, fs.best.Values[i] + d} {
				vals := slices.Clone(fs.best.Values)
				vals[i] = p.clamp(x)
				fs.add(Variant{Family: v.Family, Values: vals, Level: fs.level})
			}
		}
	}
}

// Stop ends family i's search, saying why.
func (s *Search) Stop(i int, why string) {
	s.fams[i].stopped = why
	s.fams[i].queue = nil
}

// Stopped is why family i stopped early, "" if it did not.
func (s *Search) Stopped(i int) string { return s.fams[i].stopped }

// Pending says whether any family the filter accepts still has variants to try.
func (s *Search) Pending(ok func(Family) bool) bool {
	for _, fs := range s.fams {
		if fs.stopped == "" && len(fs.queue) > 0 && (ok == nil || ok(fs.f)) {
			return true
		}
	}
	return false
}

// Best is family i's worst case found so far, and whether there is one.
func (s *Search) Best(i int) (Variant, Measured, bool) {
	fs := s.fams[i]
	if fs.best == nil {
		return Variant{}, Measured{}, false
	}
	return *fs.best, fs.bestM, true
}

// describe is a variant's parameters in words: "rate=2000 req/s gap=0 ms".
func describe(space []ParamSpec, values []float64) string {
	var parts []string
	for i, p := range space {
		u := ""
		if p.Unit != "" {
			u = " " + p.Unit
		}
		parts = append(parts, fmt.Sprintf("%s=%s%s", p.Name, strconv.FormatFloat(values[i], 'g', 5, 64), u))
	}
	return strings.Join(parts, " ")
}
