package limiters

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

// Every limiter says when it decided: the now it was given, on admissions and refusals
// alike, so that a replica can send the limiter's own clock with its answer (the decision
// clock the harness judges on).
func TestDecisionSaysWhenItWasDecided(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	base := time.Unix(0, 0).Add(1000 * DefaultWindow)
	limiters := []struct {
		name string
		new  func() Limiter
	}{
		{"local", func() Limiter { return NewLocal() }},
		{"split", func() Limiter { return NewSplit(1) }},
		{"central memory", func() Limiter { return NewCentral(NewMemoryStore()) }},
		{"central redis", func() Limiter { return NewCentral(NewRedisStore(srv.Client())) }},
		{"delayed", func() Limiter { return NewDelayedSync(NewMemoryStore()) }},
		{"bounded memory", func() Limiter { return NewBoundedSync(NewMemoryStore(), BoundedNode("0", 1)) }},
		{"bounded redis", func() Limiter { return NewBoundedSync(NewRedisStore(srv.Client()), BoundedNode("0", 1)) }},
	}
	rules := []Rule{
		{Name: "f", Algorithm: FixedWindow, Limit: 3, Window: 12 * time.Second},
		{Name: "s", Algorithm: SlidingWindow, Limit: 3, Window: 12 * time.Second, Slices: 12},
		{Name: "b", Algorithm: TokenBucket, Limit: 3, Window: 12 * time.Second, Burst: 3},
	}
	for _, l := range limiters {
		for _, rule := range rules {
			t.Run(l.name+"/"+string(rule.Algorithm), func(t *testing.T) {
				lim := l.new()
				client := fmt.Sprintf("decided-%s-%s", l.name, rule.Algorithm)
				refused := 0
				for i := range 5 {
					now := base.Add(time.Duration(i) * 7 * time.Millisecond)
					d, err := lim.Allow(ctx, client, &rule, now)
					if err != nil {
						t.Fatal(err)
					}
					if !d.At.Equal(now) {
						t.Errorf("request %d (allowed %v): decided at %v, want the now it was given, %v", i, d.Allowed, d.At, now)
					}
					if !d.Allowed {
						refused++
					}
				}
				if refused != 2 {
					t.Errorf("%d of 5 refused at limit 3, want 2: the refusals' times were not checked", refused)
				}
			})
		}
	}
}
