package recorder

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The backend records, while it records, every request that reached it by the schedule
// index in its URL (-1 for one without), in arrival order; backend.csv gives them back as
// offsets from the origin.
func TestRecorderRecordsWhatReachedIt(t *testing.T) {
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	get := func(query string) {
		t.Helper()
		resp, err := http.Get("http://" + r.Addr() + "/check?" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, want 200", query, resp.StatusCode)
		}
	}
	get("seq=99") // before Record: the warm-up's, not recorded
	origin := time.Now()
	r.Record()
	for _, q := range []string{"seq=3", "seq=1&client=a", "health", "seq=3"} {
		get(q)
	}
	got := r.Take()
	get("seq=7") // after Take: not recorded
	var idx []int
	for i, a := range got {
		idx = append(idx, a.Index)
		if a.At.Before(origin) || (i > 0 && a.At.Before(got[i-1].At)) {
			t.Errorf("arrival %d at %v: before the origin %v or the one before", i, a.At, origin)
		}
	}
	if want := []int{3, 1, -1, 3}; !slices.Equal(idx, want) {
		t.Fatalf("recorded indexes %v, want %v", idx, want)
	}
	if again := r.Take(); len(again) != 0 {
		t.Errorf("a second Take returned %d arrivals, want none", len(again))
	}

	dir := t.TempDir()
	if err := WriteFile(dir, origin, got); err != nil {
		t.Fatal(err)
	}
	var back []string
	if err := ReadFile(filepath.Join(dir, File), func(i int, at time.Duration) { back = append(back, fmt.Sprint(i, at)) }); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range got {
		want = append(want, fmt.Sprint(a.Index, a.At.Sub(origin)))
	}
	if !slices.Equal(back, want) {
		t.Errorf("read back %v, want %v", back, want)
	}
}
