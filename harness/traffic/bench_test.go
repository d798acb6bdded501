package traffic

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// benchSchedule is a bench step's schedule: 200,000 clients at 4,000 req/s for 5 s over 8
// replicas.
func benchSchedule(b *testing.B) (*schedule.Schedule, []string) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := schedule.NewBackground(schedule.DefaultBackground(schedule.DefaultParams(), 4000, 5*time.Second), rng)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.AssignReplicas(8, rng); err != nil {
		b.Fatal(err)
	}
	urls := make([]string, 8)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", 18080+i)
	}
	return &s, urls
}

// BenchmarkTargeter is the per-request cost of naming a target (URL with its schedule index,
// client header) and of Vegeta turning it into a request, the two halves of what a worker
// does before it sends.
func BenchmarkTargeter(b *testing.B) {
	s, urls := benchSchedule(b)
	for _, request := range []bool{false, true} {
		name := "target"
		if request {
			name += "+request"
		}
		b.Run(name, func(b *testing.B) {
			tr := NewTargeter(s, urls, DefaultPath, DefaultClientHeader)
			b.ReportAllocs()
			var t vegeta.Target
			for i := range b.N {
				if i%len(s.Requests) == 0 {
					tr = NewTargeter(s, urls, DefaultPath, DefaultClientHeader)
				}
				if err := tr(&t); err != nil {
					b.Fatal(err)
				}
				if !request {
					continue
				}
				if _, err := t.Request(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAttribution is the per-result cost of finding a response's schedule entry.
func BenchmarkAttribution(b *testing.B) {
	url := "http://127.0.0.1:18080/check?seq=1234567"
	b.ReportAllocs()
	for range b.N {
		if i, ok := ParseSeq(url); !ok || i != 1234567 {
			b.Fatal(i, ok)
		}
	}
}
