// Package model reproduces the documents' deterministic models with the project's own code,
// on a model clock: the printed tables of the seed documents are the oracle.
package model

// LCG is the documents' 32-bit linear congruential generator
// (s = s·1103515245 + 12345 mod 2³², value s/2³²), so node assignment and faults come out
// as in the documents' JavaScript.
type LCG struct{ s uint32 }

// NewLCG seeds the generator.
func NewLCG(seed uint32) *LCG { return &LCG{s: seed} }

// Float64 advances the generator and returns a value in [0, 1).
func (g *LCG) Float64() float64 {
	g.s = g.s*1103515245 + 12345
	return float64(g.s) / 4294967296
}

// Intn returns ⌊Float64()·n⌋, the documents' Math.floor(rnd() * n).
func (g *LCG) Intn(n int) int { return int(g.Float64() * float64(n)) }

// MinStd is document 003's generator, Park and Miller's minimal standard
// (s = s·48271 mod 2³¹−1, value s/(2³¹−1)), so the load series' noise comes out as in
// olcekleme.mjs. The products stay below 2⁵³, so integers give the JavaScript's doubles.
type MinStd struct{ s int64 }

// minStdModulus is 2³¹−1.
const minStdModulus = 2147483647

// NewMinStd seeds the generator with seed mod 2³¹−1, as olcekleme.mjs does.
func NewMinStd(seed int64) *MinStd { return &MinStd{s: seed % minStdModulus} }

// Float64 advances the generator and returns a value in (0, 1).
func (g *MinStd) Float64() float64 {
	g.s = g.s * 48271 % minStdModulus
	return float64(g.s) / minStdModulus
}
