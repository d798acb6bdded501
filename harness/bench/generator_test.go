package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// Plain Vegeta's step sends rate × d requests round-robin over the replicas at the path and
// with the client header the harness uses, and counts every answer.
func TestVegetaStepSendsTheRateAskedToEveryReplica(t *testing.T) {
	var hits [2]atomic.Int64
	var bad atomic.Int64
	srv := func(k int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != traffic.DefaultPath || r.Header.Get(traffic.DefaultClientHeader) == "" {
				bad.Add(1)
			}
			hits[k].Add(1)
		}))
	}
	a, b := srv(0), srv(1)
	defer a.Close()
	defer b.Close()
	v := &vegetaStepper{urls: []string{a.URL, b.URL + "/"}, d: time.Second, gates: accounting.DefaultGates(), timeout: time.Second}
	st, err := v.send(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 200 || st.Answered != 200 || st.Errors != 0 || st.Latency.Count != 200 || st.Lateness.Count != 200 {
		t.Errorf("step %+v: want 200 asked, 200 answered, no errors", st)
	}
	if hits[0].Load() != 100 || hits[1].Load() != 100 || bad.Load() != 0 {
		t.Errorf("replicas got %d and %d (%d malformed), want 100 each", hits[0].Load(), hits[1].Load(), bad.Load())
	}
	if st.Achieved < 190 || st.Achieved > 201 {
		t.Errorf("achieved %.1f req/s, want about 200", st.Achieved)
	}
	// A replica that is gone: every request to it is an error, and the step is not sustained.
	b.Close()
	st, err = v.send(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if st.Errors != 50 || st.Answered != 50 || st.Sustained || !strings.Contains(st.Why, "50 errors") {
		t.Errorf("with one replica down: %+v, want 50 errors, not sustained", st)
	}
}

// top ranks functions by their own share and counts a function once per sample for cum.
func TestTopSharesOfAProfile(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) *profile.Location {
		l := &profile.Location{}
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{Name: n}
			}
			l.Line = append(l.Line, profile.Line{Function: fn[n]})
		}
		return l
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			// leaf first; an inlined function sits before its caller in one location
			{Location: []*profile.Location{loc("github.com/edgeproof/rlharness/harness/traffic.seqURL"), loc("b")}, Value: []int64{3, 30}},
			{Location: []*profile.Location{loc("b")}, Value: []int64{5, 50}},
			{Location: []*profile.Location{loc("c", "b"), loc("b")}, Value: []int64{2, 20}},
			{Location: []*profile.Location{loc("d")}, Value: []int64{1, 0}},
		},
	}
	got, total, cum := top(p, "cpu", 2)
	if total != 100 || len(got) != 2 || cum["b"] != 100 {
		t.Fatalf("top = %+v, total %d, cum b %d; want 2 functions of 100 ns, b on every stack once", got, total, cum["b"])
	}
	want := []struct {
		name      string
		flat, cum float64
	}{{"b", 0.5, 1}, {"harness/traffic.seqURL", 0.3, 0.3}}
	for i, w := range want {
		if got[i].Function != w.name || !near(got[i].Flat, w.flat) || !near(got[i].Cum, w.cum) {
			t.Errorf("top[%d] = %+v, want %s flat %v cum %v", i, got[i], w.name, w.flat, w.cum)
		}
	}
	if got, _, _ := top(p, "alloc_space", 5); got != nil {
		t.Errorf("a sample type the profile lacks: %+v, want none", got)
	}
}

// profiled counts what its function allocated per request sent.
func TestProfiledCountsAllocationsPerRequest(t *testing.T) {
	var keep [][]byte
	p, err := profiled(t.TempDir(), "test", func() (int, error) {
		for range 1000 {
			keep = append(keep, make([]byte, 1024))
		}
		return 100, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Requests != 100 || p.AllocsPerRequest < 10 || p.AllocBytesPerRequest < 10*1024 {
		t.Errorf("profile %+v: want 100 requests, at least 10 allocations and 10 KiB each", p)
	}
	if len(keep) != 1000 {
		t.Fatal(len(keep))
	}
}
