package hunt

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
	"github.com/edgeproof/rlharness/limiters"
)

// modelNode is a replica on the model clock; Sync is nil for a node that does not sync.
type modelNode struct {
	limiters.Limiter
	sync func(ctx context.Context, now time.Time) error
}

// modelSender decides every request of a round with the project's limiters on the model
// clock, at the instant the schedule gives it (the generator exactly on time): node i syncs
// every interval, offset by i/n of an interval since the epoch, as the real replicas' timers
// are offset by their starts.
type modelSender struct {
	nodes    []modelNode
	interval time.Duration
	rule     *limiters.Rule
	clock    *fakeClock
	next     []time.Time
	// late is how far behind its offset every request is reported sent (its send time stays
	// the offset): a generator that fails its lateness gate and nothing else.
	late time.Duration
	// rate, when > 0, is the most requests per second the generator sends: a request leaves
	// at its offset or 1/rate after the one before it, whichever is later, and is decided
	// then. busy is how near in time another client's request slows its answer: each such
	// request sent within busy of it adds 1/rate to its latency (the machine's cores shared
	// by the generator and the fleet), its own client's earlier requests the same.
	rate float64
	busy time.Duration
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (m *modelSender) syncUntil(ctx context.Context, now time.Time) error {
	if m.interval <= 0 {
		return nil
	}
	if m.next == nil {
		m.next = make([]time.Time, len(m.nodes))
		for i := range m.nodes {
			m.next[i] = now.Truncate(m.interval).Add(time.Duration(i) * m.interval / time.Duration(len(m.nodes)))
		}
	}
	for {
		i := -1
		for k := range m.nodes {
			if m.nodes[k].sync != nil && !m.next[k].After(now) && (i < 0 || m.next[k].Before(m.next[i])) {
				i = k
			}
		}
		if i < 0 {
			return nil
		}
		if err := m.nodes[i].sync(ctx, m.next[i]); err != nil {
			return err
		}
		m.next[i] = m.next[i].Add(m.interval)
	}
}

func (m *modelSender) Send(ctx context.Context, r *Round, start time.Time, sink func(traffic.Outcome) error) (*result.FaultTiming, error) {
	sent, latency := m.timing(r.Schedule)
	for i, q := range r.Schedule.Requests {
		now := start.Add(sent[i])
		if err := m.syncUntil(ctx, now); err != nil {
			return nil, err
		}
		d, err := m.nodes[q.Replica].Allow(ctx, r.Schedule.Clients[q.Client].ID, m.rule, now)
		if err != nil {
			return nil, err
		}
		code := uint16(429)
		if d.Allowed {
			code = 200
		}
		o := traffic.Outcome{Index: i, Code: code, Sent: sent[i], Latency: latency[i], Lateness: sent[i] - q.At + m.late}
		if err := sink(o); err != nil {
			return nil, err
		}
	}
	m.clock.t = start.Add(r.Schedule.Duration + time.Second)
	return nil, nil
}

// timing is when each request of s leaves the model generator and how long its answer
// takes: at its offset and in a millisecond without a rate, else as rate and busy say.
func (m *modelSender) timing(s schedule.Schedule) (sent, latency []time.Duration) {
	n := len(s.Requests)
	sent, latency = make([]time.Duration, n), make([]time.Duration, n)
	var each time.Duration
	if m.rate > 0 {
		each = time.Duration(float64(time.Second) / m.rate)
	}
	for i, q := range s.Requests {
		sent[i] = q.At
		if i > 0 && m.rate > 0 {
			sent[i] = max(q.At, sent[i-1]+each)
		}
		latency[i] = time.Millisecond
	}
	if m.rate <= 0 || m.busy <= 0 {
		return sent, latency
	}
	// Another client's requests within busy either side, and the client's own earlier ones
	// within busy, each add 1/rate: sent is in order, so two pointers bound the neighbours.
	in := map[int32]int{}
	lo, hi := 0, 0
	for i, q := range s.Requests {
		for hi < n && sent[hi] <= sent[i]+m.busy {
			in[s.Requests[hi].Client]++
			hi++
		}
		for sent[lo] < sent[i]-m.busy {
			in[s.Requests[lo].Client]--
			lo++
		}
		own := 0
		for k := i - 1; k >= lo && s.Requests[k].Client == q.Client; k-- {
			own++
		}
		others := hi - lo - in[q.Client]
		latency[i] += time.Duration(others+own) * each
	}
	return sent, latency
}

// modelEnv is the documents' rule at time scale 0.2 (600 per 12 s in 12 slices, sync every
// 40 ms) against n replicas, bursts at up to 2000 requests a second.
func modelEnv(n int, interval time.Duration) Env {
	return Env{Limit: 600, Window: 12 * time.Second, Slices: 12, Replicas: n, Interval: interval, MaxRate: 2000, Grace: time.Second}
}

func huntModel(t *testing.T, nodes []modelNode, interval time.Duration, rule *limiters.Rule, fams ...string) (result.HuntSystem, string) {
	t.Helper()
	return huntModelWith(t, nodes, interval, rule, nil, fams...)
}

// huntModelWith is huntModel with edit applied to the hunt's configuration.
func huntModelWith(t *testing.T, nodes []modelNode, interval time.Duration, rule *limiters.Rule, edit func(*Config), fams ...string) (result.HuntSystem, string) {
	t.Helper()
	return huntModelLate(t, nodes, interval, rule, edit, 0, fams...)
}

// huntModelLate is huntModelWith with every request reported late by late.
func huntModelLate(t *testing.T, nodes []modelNode, interval time.Duration, rule *limiters.Rule, edit func(*Config), late time.Duration, fams ...string) (result.HuntSystem, string) {
	t.Helper()
	return huntModelOn(t, &modelSender{nodes: nodes, interval: interval, rule: rule, late: late}, edit, fams...)
}

// huntModelOn hunts the model sender m (its clock set here) with the families named.
func huntModelOn(t *testing.T, m *modelSender, edit func(*Config), fams ...string) (result.HuntSystem, string) {
	t.Helper()
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	m.clock = clk
	var picked []Family
	for _, f := range Families() {
		for _, name := range fams {
			if f.Name == name {
				picked = append(picked, f)
			}
		}
	}
	gates := accounting.DefaultGates()
	gates.LatenessP99 = 20 * time.Millisecond
	cfg := Config{System: "model", TimeScale: 0.2, Env: modelEnv(len(m.nodes), m.interval), Families: picked,
		Budget: time.Hour, Requests: 10_000_000, Coarse: 12, Levels: 2, Seed: 7, NoFault: "the model has no store to stop",
		Gates: gates, OutDir: t.TempDir(), Now: clk.now}
	cfg.RunDir = cfg.OutDir
	if edit != nil {
		edit(&cfg)
	}
	h, err := Hunt(context.Background(), cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	return h, cfg.OutDir
}

func family(t *testing.T, h result.HuntSystem, name string) result.HuntFamily {
	t.Helper()
	for _, f := range h.Families {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no family %s in %+v", name, h.Families)
	return result.HuntFamily{}
}

func central(n int, algo limiters.Algorithm) ([]modelNode, *limiters.Rule) {
	store := limiters.NewMemoryStore()
	var nodes []modelNode
	for range n {
		nodes = append(nodes, modelNode{Limiter: limiters.NewCentral(store)})
	}
	return nodes, &limiters.Rule{Name: "m", Algorithm: algo, Limit: 600, Window: 12 * time.Second, Slices: 12, Burst: limiters.DefaultBurst}
}

// The search, against the project's own limiters on the model clock, finds each algorithm's
// weak point: a fixed window's edge (2×), a sliced window's slice drop (2×), a token
// bucket's rejection of an at-limit client, and none of them rejects a paced at-limit client.
func TestHuntFindsEachAlgorithmsWeakPoint(t *testing.T) {
	for _, tc := range []struct {
		algo     limiters.Algorithm
		family   string
		min, max float64 // the worst overshoot's range, or for at-limit the false rejects' range
	}{
		{limiters.FixedWindow, FamilyEdge, 1.99, 2.0},
		{limiters.SlidingWindow, FamilySliceDrop, 1.99, 2.0},
		{limiters.SlidingWindow, FamilyEdge, 0.9, 1.1},
		{limiters.FixedWindow, FamilyAtLimitPaced, 0, 0},
		{limiters.TokenBucket, FamilyAtLimitBursts, 250, 2000}, // fewer where a burst's answers may overlap the next window (accounting.unearned)
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.algo, tc.family), func(t *testing.T) {
			nodes, rule := central(2, tc.algo)
			h, dir := huntModel(t, nodes, 0, rule, tc.family)
			f := family(t, h, tc.family)
			if f.Worst == nil {
				t.Fatalf("no worst case: %+v", f)
			}
			got := f.Worst.Overshoot
			if f.Kind == string(AtLimit) {
				got = float64(f.Worst.FalseRejects)
			}
			t.Logf("%s: %s (%s), %d variants", tc.family, f.Verdict(), f.Worst.ParamString(), len(f.Tried))
			if got < tc.min || got > tc.max {
				t.Errorf("worst %.3f, want %.3f..%.3f", got, tc.min, tc.max)
			}
			if f.Worst.GeneratorBound {
				t.Errorf("the model sends on time, yet the worst case is generator-bound: %+v", f.Worst.Checks)
			}
			if wantBreak := got > 1.1 || f.Kind == string(AtLimit) && got > 0; f.Breaks != wantBreak {
				t.Errorf("breaks = %v, want %v", f.Breaks, wantBreak)
			}
			if len(f.Tried) < 4 || f.Tried[len(f.Tried)-1].Level == 0 {
				t.Errorf("%d variants, the last at level %d: want a coarse sweep and refinements", len(f.Tried), f.Tried[len(f.Tried)-1].Level)
			}
			// The worst schedule replays: the file reads back to the variant's requests.
			file, err := schedule.ReadFile(filepath.Join(dir, f.Schedule))
			if err != nil {
				t.Fatal(err)
			}
			if len(file.Schedule.Requests) != f.Worst.Offered || file.Name != tc.family || file.Align != 12*time.Second {
				t.Errorf("schedule file %s: %d requests (the variant sent %d), name %q, align %v", f.Schedule,
					len(file.Schedule.Requests), f.Worst.Offered, file.Name, file.Align)
			}
		})
	}
}

// The two designs of delayed sync on the model clock, 8 nodes syncing every 40 ms (node i
// offset by i/8 of an interval since the epoch): the learning step finds every node's tick;
// the document's design lets every family aimed at its sync far past 1.1×; the bounded
// design holds them.
func TestHuntDelayedSyncDesigns(t *testing.T) {
	const n, interval = 8, 40 * time.Millisecond
	rule := &limiters.Rule{Name: "m", Algorithm: limiters.SlidingWindow, Limit: 600, Window: 12 * time.Second, Slices: 12}
	fleets := map[string]func() []modelNode{
		"document": func() []modelNode {
			store := limiters.NewMemoryStore()
			var nodes []modelNode
			for i := range n {
				d := limiters.NewDelayedSync(store, limiters.NodeID(fmt.Sprint(i)))
				nodes = append(nodes, modelNode{Limiter: d, sync: d.Sync})
			}
			return nodes
		},
		"bounded": func() []modelNode {
			store := limiters.NewMemoryStore()
			var nodes []modelNode
			for i := range n {
				d := limiters.NewBoundedSync(store, limiters.BoundedNode(fmt.Sprint(i), n))
				nodes = append(nodes, modelNode{Limiter: d, sync: d.Sync})
			}
			return nodes
		},
	}
	attacks := []string{FamilySyncTick, FamilySpread, FamilyFresh, FamilySliceDrop}
	for _, design := range []string{"document", "bounded"} {
		t.Run(design, func(t *testing.T) {
			h, _ := huntModel(t, fleets[design](), interval, rule, append(attacks, FamilyAtLimitPaced, FamilyAtLimitBursts)...)
			t.Logf("learned: %s; %s %v", h.Learned.Edge, h.Learned.Ticks, h.Learned.TickPhases)
			if design == "document" {
				if len(h.Learned.TickPhases) != n {
					t.Fatalf("ticks not learned: %s", h.Learned.Ticks)
				}
				for i, ph := range h.Learned.TickPhases {
					want := time.Duration(i) * interval / n
					if d := circularDistance(ph, want, interval); d > interval/8 {
						t.Errorf("node %d's tick learned at %v into the interval, want %v (within %v)", i, ph, want, interval/8)
					}
				}
			}
			for _, name := range attacks {
				f := family(t, h, name)
				if f.Worst == nil {
					t.Errorf("%s: %s", name, f.Verdict())
					continue
				}
				t.Logf("%s: %s (%s)", name, f.Verdict(), f.Worst.ParamString())
				switch {
				case design == "document" && f.Worst.Overshoot <= 1.1:
					t.Errorf("%s: x%.3f on the document's design: the family is not aimed", name, f.Worst.Overshoot)
				case design == "bounded" && (f.Worst.Overshoot > 1.1 || f.Worst.FalseRejects > 0):
					t.Errorf("%s: x%.3f, %d false rejects on the bounded design", name, f.Worst.Overshoot, f.Worst.FalseRejects)
				}
			}
			for _, name := range []string{FamilyAtLimitPaced, FamilyAtLimitBursts} {
				f := family(t, h, name)
				t.Logf("%s: %s", name, f.Verdict())
				if f.Worst == nil || f.Worst.FalseRejects > 0 {
					t.Errorf("%s: %s", name, f.Verdict())
				}
			}
		})
	}
}

// A hunt stops where its budgets run out and says which: the request budget trims the round
// that would pass it to the variants that fit and ends the hunt after it; the time budget
// sends no round that would end past it.
func TestHuntStopsAtItsBudgets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		stopped  string
		maxSent  int // the most requests all rounds together may have sent
		minRound int // the fewest rounds sent
	}{
		{"requests", func(c *Config) { c.Requests = 12_000 }, "request budget spent", 12_000, 2},
		{"time", func(c *Config) { c.Budget = 2 * time.Minute }, "time budget spent", 10_000_000, 1},
		{"neither", nil, "searched", 10_000_000, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, rule := central(2, limiters.FixedWindow)
			h, _ := huntModelWith(t, nodes, 0, rule, tc.edit, FamilyEdge, FamilyRefill)
			sent := 0
			for _, r := range h.Rounds {
				sent += r.Requests
			}
			t.Logf("%d rounds, %d requests: %s", len(h.Rounds), sent, h.Stopped)
			if !strings.HasPrefix(h.Stopped, tc.stopped) {
				t.Errorf("stopped: %q, want it to start %q", h.Stopped, tc.stopped)
			}
			if sent > tc.maxSent || len(h.Rounds) < tc.minRound {
				t.Errorf("%d rounds sent %d requests, want at least %d rounds and at most %d requests", len(h.Rounds), sent, tc.minRound, tc.maxSent)
			}
		})
	}
}
