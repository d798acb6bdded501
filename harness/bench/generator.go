package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// FleetVegeta names plain Vegeta's constant-rate attack on the no-op fleet in bench.json:
// the reference the harness's own sender is measured against.
const FleetVegeta = "vegeta"

// Targets of the generator: the harness's sender beside plain Vegeta.
const (
	// TargetGeneratorRatio: the harness's schedule-driven sender sustains at least 0.9 ×
	// plain Vegeta's constant rate against the same no-op replicas, in the same run.
	TargetGeneratorRatio = 0.90
)

// vegetaStepper sends plain Vegeta's constant-rate attack (vegeta.Rate, one static target
// per replica taken round-robin) for d: what a generator with no schedule, no per-request
// attribution and no accounting sustains against the same replicas.
type vegetaStepper struct {
	urls    []string
	d       time.Duration
	gates   accounting.Gates
	timeout time.Duration
}

// originPacer is a vegeta.Pacer that remembers the instant the attack's elapsed time counts
// from, so a result's lateness is its timestamp less its tick's due time, and stops after
// hits: the attack then runs on past its duration (the grace the harness's steps have too)
// until every hit of the step is sent, rather than dropping the last one a late tick pushed
// past the end.
type originPacer struct {
	vegeta.Pacer
	hits   uint64
	origin atomic.Pointer[time.Time]
}

func (p *originPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.origin.Load() == nil {
		o := time.Now().Add(-elapsed)
		p.origin.CompareAndSwap(nil, &o)
	}
	if hits >= p.hits {
		return 0, true
	}
	return p.Pacer.Pace(elapsed, hits)
}

func (v *vegetaStepper) send(ctx context.Context, rate float64) (result.Step, error) {
	freq := int(math.Round(rate))
	if freq <= 0 {
		return result.Step{}, fmt.Errorf("vegeta step: rate %v rounds to 0 req/s", rate)
	}
	targets := make([]vegeta.Target, len(v.urls))
	for i, u := range v.urls {
		targets[i] = vegeta.Target{Method: http.MethodGet, URL: strings.TrimSuffix(u, "/") + traffic.DefaultPath,
			Header: http.Header{traffic.DefaultClientHeader: {"vegeta"}}}
	}
	atk := vegeta.NewAttacker(
		vegeta.Timeout(v.timeout),
		vegeta.Workers(traffic.DefaultWorkers),
		vegeta.MaxBody(0),
		vegeta.KeepAlive(true),
	)
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	want := int(v.d.Seconds() * float64(freq))
	pacer := &originPacer{Pacer: vegeta.Rate{Freq: freq, Per: time.Second}, hits: uint64(want)}
	interval := time.Second / time.Duration(freq)
	lat, late := accounting.NewLatency(), accounting.NewLatency()
	var last time.Duration
	var sent, answered, errs int
	var firstErr string
	// Pacing stops a step behind at the latest, as the harness's steps do (Grace = the step).
	for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), pacer, 2*v.d, "") {
		sent++
		at := res.Timestamp.Sub(*pacer.origin.Load())
		last = max(last, at)
		late.Record(at - time.Duration(res.Seq)*interval)
		if res.Code == http.StatusOK || res.Code == http.StatusTooManyRequests {
			answered++
			lat.Record(res.Latency)
		} else {
			if errs++; firstErr == "" {
				firstErr = fmt.Sprintf("status %d %s", res.Code, res.Error)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return result.Step{}, err
	}
	st := result.Step{
		Rate: rate, Achieved: traffic.AchievedRate(sent, v.d, last), Duration: v.d, Requests: want,
		Answered: answered, Errors: errs + max(0, want-sent),
		Latency: lat.Percentiles(), Lateness: late.Percentiles(),
	}
	judge(&st, v.gates)
	if firstErr != "" {
		st.Why += " (first: " + firstErr + ")"
	}
	return st, nil
}

// vegeta is plain Vegeta's stepper on the member's replicas, with the harness's timeout.
func (m *member) vegeta(cfg Config) *vegetaStepper {
	return &vegetaStepper{urls: m.fl.ReplicaURLs(), d: cfg.Step, gates: accounting.DefaultGates(), timeout: 2 * time.Second}
}

// vegetaSender is plain Vegeta's step sender for a ceiling search, printing each step.
func vegetaSender(cfg Config, v *vegetaStepper) Sender {
	return func(ctx context.Context, rate float64) (result.Step, error) {
		st, err := v.send(ctx, rate)
		if err == nil {
			printStep(cfg, FleetVegeta, st)
		}
		return st, err
	}
}

// Names of the generator profiles in bench.json.
const (
	ProfileHarness = "harness sender"
	ProfileVegeta  = "plain vegeta"
)

// profileGenerators profiles one step of each generator against the no-op fleet at the same
// rate, the lower of the two ceilings (both sustain it), so their costs per request compare.
func profileGenerators(ctx context.Context, cfg Config, noop *member, vegetaCeiling float64) ([]result.Profile, error) {
	rate := min(noop.res.Ceiling, vegetaCeiling)
	if rate <= 0 {
		rate = max(noop.res.Ceiling, vegetaCeiling, cfg.Search.Min)
	}
	fmt.Fprintf(cfg.Progress, "== 2. generator profiles: one %s step each at %s req/s against the no-op fleet (CPU and allocations of this process)\n", cfg.Step, result.Rate(rate))
	var out []result.Profile
	for _, g := range []struct {
		name string
		send func(context.Context, float64) (result.Step, error)
	}{{ProfileHarness, noop.stepper(cfg).send}, {ProfileVegeta, noop.vegeta(cfg).send}} {
		p, err := profiled(cfg.ProfileDir, g.name, func() (int, error) {
			st, err := g.send(ctx, rate)
			return st.Answered + st.Errors, err
		})
		p.Rate = rate
		if err != nil {
			return out, fmt.Errorf("profile the %s: %w", g.name, err)
		}
		out = append(out, p)
		fmt.Fprintf(cfg.Progress, "   %-15s %6.1f µs CPU/request  %5.1f allocs/request  %6.0f B/request  GC %4.1f%%  top: %s\n",
			p.Name, p.CPUPerRequestUs, p.AllocsPerRequest, p.AllocBytesPerRequest, 100*p.GCShare, topLine(p.CPU, 4))
	}
	return out, nil
}

// topLine is a profile's first n functions with their flat shares.
func topLine(fs []result.ProfileFunc, n int) string {
	var parts []string
	for _, f := range fs[:min(n, len(fs))] {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", f.Function, 100*f.Flat))
	}
	return strings.Join(parts, ", ")
}
