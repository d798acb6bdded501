package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestNumberedIDs(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		n      int
		want   []string
	}{
		{"bg-", 1, []string{"bg-0"}},
		{"s1-", 11, []string{"s1-00", "s1-01", "s1-02", "s1-03", "s1-04", "s1-05", "s1-06", "s1-07", "s1-08", "s1-09", "s1-10"}},
		{"", 3, []string{"0", "1", "2"}},
	} {
		if got := numberedIDs(tt.prefix, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("numberedIDs(%q, %d) = %q, want %q", tt.prefix, tt.n, got, tt.want)
		}
	}
	ids := numberedIDs("bg-", 200_000)
	if ids[0] != "bg-000000" || ids[199_999] != "bg-199999" || !slices.IsSorted(ids) {
		t.Errorf("200,000 IDs: first %q, last %q, sorted %v; want bg-000000..bg-199999 in order", ids[0], ids[199_999], slices.IsSorted(ids))
	}
}

// BenchmarkNewBackground is a bench step's schedule: the document's 200,000 clients at
// 4,000 req/s for 5 s.
func BenchmarkNewBackground(b *testing.B) {
	bg := DefaultBackground(DefaultParams(), 4000, 5*time.Second)
	b.ReportAllocs()
	for i := range b.N {
		if _, err := NewBackground(bg, rand.New(rand.NewPCG(1, uint64(i)))); err != nil {
			b.Fatal(err)
		}
	}
}
