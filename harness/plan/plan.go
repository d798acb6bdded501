// Package plan sizes a fleet from what one replica's share of the load was measured to cost
// (harness bench --slice) at several rates: each part's busy cores are fitted as a fixed part
// plus a cost a request (and, for the replica and Redis, a cost a request past a node's
// budget, the bounded design's store calls), and the fit gives the cores the generator, the
// replicas and Redis need at a rate, a population and a balancer, and the machine that holds
// them. Check puts a plan beside what another slice run measured.
package plan

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
)

// Defaults of a plan.
const (
	// DefaultUtilisation is the share of its cores each part is sized to keep busy: the rest
	// is headroom for bursts, the collector and the neighbours.
	DefaultUtilisation = 0.7
	// DefaultSystem is the system whose costs a plan uses: the bounded design.
	DefaultSystem = "bounded"
	// CheckTolerance is how far a part's predicted busy cores may be from a measured run's
	// for the check to hold.
	CheckTolerance = 0.15
	// osCores are the cores a machine keeps for everything but the parts.
	osCores = 1
	// planSeed draws the traffic whose requests past a budget a plan counts.
	planSeed = 1
	// minAchieved is the share of its rate a run must have sent for its costs to be used.
	minAchieved = 0.95
)

// machineSizes are the core counts machines are commonly rented with.
var machineSizes = []int{2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256}

// Ask is what a plan is for.
type Ask struct {
	Rate     float64 // req/s the fleet must carry
	Replicas int
	// Clients are the clients the fleet tracks (HS1: 200,000).
	Clients int
	// Sticky: the balancer keeps each client on one replica, which then sees Clients /
	// Replicas clients, each sending it all its requests; otherwise it spreads every
	// client's requests over the replicas, and each replica sees every client at 1/Replicas
	// of its rate. The bounded design's store calls a request depend on which.
	Sticky bool
	// System names the slice's system whose costs are used.
	System string
	// Utilisation is the share of its cores each part may keep busy, in (0, 1].
	Utilisation float64
}

// Point is one slice run as a point of the fit: what its node was sent and what each part
// kept busy.
type Point struct {
	File    string
	Load    Load
	Clients int // at the node
	Nodes   int
	// StoreCalls is the store's round trips a request the run measured, beside Load.Past.
	StoreCalls float64
	// Busy cores measured; Redis is NaN where its CPU was not.
	Generator, Replica, Redis float64
	// Late is the steady run's generator p99 lateness past the load test's gate, 0 when
	// within it.
	Late time.Duration
	// Memory figures of the run.
	RSSBefore                 int64
	RSSPerClient, RedisClient float64
}

// Costs are a system's costs fitted to slice runs.
type Costs struct {
	System string
	// From says where the runs came from; Builtin that they are the reference costs.
	From    string
	Builtin bool
	Inputs  []Input
	Points  []Point
	Skipped []string // runs left out, and why
	// TimeScale, Nodes and StoreCPU are the runs' own.
	TimeScale float64
	Nodes     int
	StoreCPU  float64
	// Steady is the runs' steady length, the traffic a plan counts past budgets over.
	Steady time.Duration
	// The fits, Redis's only where HasRedis.
	Generator, Replica, Redis Fit
	HasRedis                  bool
}

// FitCosts fits the named system's costs to the slice runs ins. A run whose steady run failed (errors,
// answers without the store, less than 95 % of its rate sent) is left out, as Skipped says;
// one that was sent late but in full is used, as its costs a request are those of the
// requests it sent.
func FitCosts(ins []Input, name string, builtin bool) (Costs, error) {
	c := Costs{System: name, Builtin: builtin, Inputs: ins, From: describe(ins)}
	if len(ins) == 0 {
		return c, errors.New("plan: no slice run to plan from")
	}
	for _, in := range ins {
		b := in.Bench
		if b.Slice == nil {
			return c, fmt.Errorf("%s holds no slice: plan from the bench.json of harness bench --slice (make bench-slice)", in.File)
		}
		tr := b.Slice.Traffic
		if c.TimeScale == 0 {
			c.TimeScale, c.Nodes, c.StoreCPU = tr.TimeScale, tr.Nodes, b.Slice.StoreCPU
		}
		if tr.TimeScale != c.TimeScale || b.Slice.StoreCPU != c.StoreCPU {
			return c, fmt.Errorf("%s ran at time scale %g with Redis held to %g of a core, %s at %g and %g: plan from runs made alike", in.File, tr.TimeScale, b.Slice.StoreCPU, ins[0].File, c.TimeScale, c.StoreCPU)
		}
		f, err := system(b, in.File, name)
		if err != nil {
			c.Skipped = append(c.Skipped, err.Error())
			continue
		}
		st := f.Steady
		tr.Rate, tr.Duration, tr.Prefix = st.Rate, st.Duration, ""
		if st.Seed != 0 {
			tr.Seed = st.Seed
		}
		past, err := PastBudget(tr)
		if err != nil {
			return c, fmt.Errorf("%s: its traffic cannot be built again: %w", in.File, err)
		}
		p := Point{File: in.File, Load: Load{Rate: st.Rate, Past: past}, Clients: tr.Clients, Nodes: tr.Nodes, StoreCalls: f.StoreCmdPerRequest,
			Generator: f.Generator.Cores, Replica: f.Replica.Cores, Redis: math.NaN(),
			RSSBefore: f.Replica.RSSBefore, RSSPerClient: f.Replica.RSSPerClient}
		if f.StoreCPU != nil {
			p.Redis = f.StoreCPU.Percent / 100
		}
		if f.StoreMemory != nil {
			p.RedisClient = f.StoreMemory.PerClient
		}
		if st.Lateness.P99 > accounting.DefaultLatenessP99 {
			p.Late = st.Lateness.P99
		}
		c.Steady = max(c.Steady, st.Duration)
		c.Points = append(c.Points, p)
	}
	if len(c.Points) == 0 {
		return c, fmt.Errorf("no run of %s can be planned from: %s", describe(ins), strings.Join(c.Skipped, "; "))
	}
	var rep, rl []Load
	var r, s []float64
	for _, p := range c.Points {
		rep, r = append(rep, p.Load), append(r, p.Replica)
		if !math.IsNaN(p.Redis) {
			rl, s = append(rl, p.Load), append(s, p.Redis)
		}
	}
	var err error
	if c.Replica, err = fit(rep, r, []Term{Fixed, PerRequest, PerPastBudget}); err != nil {
		return c, fmt.Errorf("the replica's costs: %w", err)
	}
	if len(rl) > 0 {
		if c.Redis, err = fit(rl, s, []Term{Fixed, PerPastBudget}); err != nil {
			return c, fmt.Errorf("Redis's costs: %w", err)
		}
		c.HasRedis = true
	}
	// The generator last: its cost a request is fitted beside what the replica and Redis
	// are fitted to keep busy at each run's load, the one figure a plan can read it at.
	var gen []Load
	var g []float64
	for i := range c.Points {
		p := &c.Points[i]
		p.Load.Beside = c.beside(p.Load)
		gen, g = append(gen, Load{Rate: p.Load.Rate, Beside: p.Load.Beside}), append(g, p.Generator)
	}
	if c.Generator, err = fit(gen, g, []Term{Fixed, PerRequest, PerRequestBeside}); err != nil {
		return c, fmt.Errorf("the generator's costs: %w", err)
	}
	return c, nil
}

// besideWhat names the processes beside is the busy cores of.
func (c Costs) besideWhat() string {
	if c.HasRedis {
		return "replica and Redis"
	}
	return "the replica"
}

// beside is the busy cores the replica and Redis are fitted to at one node's load l: the
// processes that shared the slice's machine with its generator.
func (c Costs) beside(l Load) float64 {
	b := c.Replica.At(l)
	if c.HasRedis {
		b += c.Redis.At(l)
	}
	return b
}

// nodeLoad is what one node of nodes is sent at rate from clients: the share of its
// requests past a budget counted on the traffic as the slice builds it.
func (c Costs) nodeLoad(rate float64, clients, nodes int) (Load, error) {
	past, err := PastBudget(schedule.Slice{TimeScale: c.TimeScale, Rate: rate, Clients: clients, Node: 0, Nodes: nodes, Duration: c.Steady, Seed: planSeed})
	if err != nil {
		return Load{}, fmt.Errorf("the traffic at one replica (%s req/s from %s clients): %w", result.Rate(rate), result.Rate(float64(clients)), err)
	}
	l := Load{Rate: rate, Past: past}
	l.Beside = c.beside(l)
	return l, nil
}

// Cost is one fitted cost and where it came from.
type Cost struct {
	Value string
	From  string
}

// Part is one part of the fleet as planned.
type Part struct {
	Name  string
	Count int
	// Busy is the cores the part keeps busy at the rate, Cores those it is given: Busy over
	// the utilisation, whole cores a member at least one.
	Busy, Cores float64
	// Memory is the bytes the part holds, 0 when not planned.
	Memory float64
	Costs  []Cost
	Note   string
}

// Plan is a fleet sized for an Ask from fitted costs.
type Plan struct {
	Ask   Ask
	Costs Costs
	// PerReplica is the rate at each replica, ClientsAt the clients each sees, Load what
	// the fit was read at.
	PerReplica float64
	ClientsAt  int
	Load       Load
	Parts      []Part
	// Cores is every part's cores plus the machine's own; Machine the smallest common size
	// that holds them; Memory every part's bytes.
	Cores   float64
	Machine int
	Memory  float64
	Notes   []string
}

// Make plans ask from c.
func Make(c Costs, ask Ask) (Plan, error) {
	switch {
	case !(ask.Rate > 0) || ask.Replicas < 1 || ask.Clients < 1:
		return Plan{}, fmt.Errorf("plan: want a rate > 0, replicas >= 1 and clients >= 1 (got %v, %d, %d)", ask.Rate, ask.Replicas, ask.Clients)
	case !(ask.Utilisation > 0 && ask.Utilisation <= 1):
		return Plan{}, fmt.Errorf("plan: --utilisation must be in (0, 1] (got %v)", ask.Utilisation)
	case ask.Sticky && ask.Clients < ask.Replicas:
		return Plan{}, fmt.Errorf("plan: --sticky keeps each client on one replica: %d clients leave some of %d replicas none", ask.Clients, ask.Replicas)
	}
	p := Plan{Ask: ask, Costs: c, PerReplica: ask.Rate / float64(ask.Replicas), ClientsAt: ask.Clients}
	if ask.Sticky {
		p.ClientsAt = (ask.Clients + ask.Replicas - 1) / ask.Replicas
	}
	var err error
	if p.Load, err = c.nodeLoad(p.PerReplica, p.ClientsAt, ask.Replicas); err != nil {
		return Plan{}, err
	}
	fitted := func(f Fit, what string) string {
		return fmt.Sprintf("%s's %s, fitted to %d runs (the worst %.0f %% off its measure)", c.System, what, f.Points, 100*f.Worst)
	}

	// The generator: a fixed part each shard process, the rest a request sent.
	g := c.Generator
	gFixed := g.Coefficient(Fixed)
	// Its cost a request is read beside a replica's share of the fleet's replica and Redis
	// cores, as the slice runs had it beside them: one replica's share on their machine.
	gReq := g.At(Load{Rate: ask.Rate, Beside: p.Load.Beside}) - gFixed
	gen := Part{Name: "generator shards", Count: 1, Note: "one harness attack process a core (--shards)",
		Costs: []Cost{{g.String(), fitted(g, "harness CPU (/proc) a shard")}}}
	if g.Coefficient(PerRequestBeside) > 0 {
		gen.Note += fmt.Sprintf("; a request's cost read beside %.2f busy cores of %s, a replica's share", p.Load.Beside, c.besideWhat())
	}
	for {
		gen.Busy = float64(gen.Count)*gFixed + gReq
		n := max(1, int(math.Ceil(gen.Busy/ask.Utilisation)))
		if n <= gen.Count {
			break
		}
		gen.Count = n
	}
	gen.Cores = float64(gen.Count)

	// The replicas: each its fitted cores at its share.
	r := c.Replica
	each := r.At(p.Load)
	rep := part("replicas", ask.Replicas, float64(ask.Replicas)*each, ask.Utilisation,
		Cost{r.String(), fitted(r, "replica CPU (/proc) a replica")})
	rep.Note = fmt.Sprintf("%s req/s and %s clients each", result.Rate(p.PerReplica), result.Rate(float64(p.ClientsAt)))
	if m := c.memoryPoint(p.ClientsAt); m != nil {
		rep.Memory = float64(ask.Replicas) * (float64(m.RSSBefore) + math.Max(0, m.RSSPerClient)*float64(p.ClientsAt))
		rep.Costs = append(rep.Costs, Cost{fmt.Sprintf("%.0f B RSS a client", m.RSSPerClient), m.File + ", the replica's resident memory grown per client sent"})
	}
	p.Parts = append(p.Parts, gen, rep)

	if c.HasRedis {
		s := c.Redis
		// Each replica reads the store's epoch and syncs: the fixed part is a replica's.
		sFixed := s.Coefficient(Fixed)
		busy := float64(ask.Replicas)*sFixed + s.At(Load{Rate: ask.Rate, Past: p.Load.Past}) - sFixed
		st := part("Redis", 1, busy, ask.Utilisation,
			Cost{s.String(), fitted(s, "Redis CPU (INFO cpu, the main thread; the fixed part a replica's)")})
		st.Note = fmt.Sprintf("%.2f %% of the requests past a budget: %s store calls/s", 100*p.Load.Past, result.Rate(ask.Rate*p.Load.Past))
		if m := c.memoryPoint(p.ClientsAt); m != nil {
			st.Memory = math.Max(0, m.RedisClient) * float64(ask.Clients)
			st.Costs = append(st.Costs, Cost{fmt.Sprintf("%.0f B a client", m.RedisClient), m.File + ", INFO memory used_memory grown per client sent"})
		}
		// Redis runs its commands on one thread: past one core it takes more masters.
		if busy/ask.Utilisation > 1 {
			st.Count = int(math.Ceil(busy / ask.Utilisation))
			st.Cores = float64(st.Count)
			st.Name = "Redis Cluster masters"
			st.Note += fmt.Sprintf("; one Redis core is not enough (%.2f busy cores, at most %.0f %% of one): %d masters, the clients' keys spread over them by hash slot, %.0f %% busy each",
				busy, 100*ask.Utilisation, st.Count, 100*busy/float64(st.Count))
		}
		p.Parts = append(p.Parts, st)
	} else {
		p.Notes = append(p.Notes, fmt.Sprintf("Redis not planned: its CPU was measured in none of %s", c.From))
	}
	p.Notes = append(p.Notes, c.reach(p)...)
	for _, pt := range p.Parts {
		p.Cores += pt.Cores
		p.Memory += pt.Memory
	}
	p.Cores += osCores
	p.Machine = machineFor(p.Cores)
	return p, nil
}

// memoryPoint is the run whose memory figures a plan for clients at a node uses: of the
// population nearest it, the highest rate.
func (c Costs) memoryPoint(clients int) *Point {
	var best *Point
	dist := func(p *Point) float64 { return math.Abs(math.Log(float64(p.Clients) / float64(clients))) }
	for i := range c.Points {
		p := &c.Points[i]
		if best == nil || dist(p) < dist(best) || (dist(p) == dist(best) && p.Load.Rate > best.Load.Rate) {
			best = p
		}
	}
	return best
}

// reach says where a plan reads its fit outside what the runs measured.
func (c Costs) reach(p Plan) []string {
	var notes []string
	var top, topAt float64
	var pops []string
	for _, pt := range c.Points {
		top = max(top, pt.Load.Rate)
		if pt.Clients == p.ClientsAt {
			topAt = max(topAt, pt.Load.Rate)
		}
		if s := result.Rate(float64(pt.Clients)); !slices.Contains(pops, s) {
			pops = append(pops, s)
		}
	}
	switch {
	case topAt == 0:
		notes = append(notes, fmt.Sprintf("no run had %s clients at its node (the runs had %s): the store's share is counted on this population's traffic, the costs are the runs'",
			result.Rate(float64(p.ClientsAt)), strings.Join(pops, " and ")))
	case p.PerReplica > topAt*1.05:
		notes = append(notes, fmt.Sprintf("each replica would carry %s req/s, past the %s req/s the runs with %s clients at a node reached: the fit is read beyond what was measured",
			result.Rate(p.PerReplica), result.Rate(topAt), result.Rate(float64(p.ClientsAt))))
	}
	if p.Ask.Replicas != c.Nodes {
		notes = append(notes, fmt.Sprintf("the runs' replica was one of %d nodes; with %d each node's budget is another, which the share of requests past a budget counts", c.Nodes, p.Ask.Replicas))
	}
	var late []string
	for _, pt := range c.Points {
		if pt.Late > 0 {
			late = append(late, fmt.Sprintf("%s (%v)", pt.File, pt.Late.Round(time.Millisecond)))
		}
	}
	if len(late) > 0 {
		notes = append(notes, fmt.Sprintf("%d of the %d runs were sent late (generator p99 lateness past the load test's %v: %s) but in full, every answer with the store: their costs are used", len(late), len(c.Points), accounting.DefaultLatenessP99, strings.Join(late, ", ")))
	}
	for _, s := range c.Skipped {
		notes = append(notes, "left out: "+s)
	}
	return notes
}

// part is a part of count members keeping busy cores busy in all, each given whole cores
// (at least one) at the utilisation.
func part(name string, count int, busy, utilisation float64, costs ...Cost) Part {
	p := Part{Name: name, Count: count, Busy: busy, Costs: costs}
	p.Cores = float64(count) * math.Max(1, math.Ceil(busy/float64(count)/utilisation))
	return p
}

// machineFor is the smallest common machine size with at least cores; 0 when none is.
func machineFor(cores float64) int {
	i := slices.IndexFunc(machineSizes, func(n int) bool { return float64(n) >= cores })
	if i < 0 {
		return 0
	}
	return machineSizes[i]
}

// system is the named system of the slice, refused when the figures a plan rests on were
// not measured or rest on a steady run that failed: errors, answers given without the
// store, or less than 95 % of its rate sent. A run sent late but in full is kept.
func system(b result.Bench, file, name string) (*result.FleetBench, error) {
	var names []string
	for i := range b.Slice.Systems {
		f := &b.Slice.Systems[i]
		names = append(names, f.Name)
		if f.Name != name {
			continue
		}
		st := f.Steady
		switch {
		case st == nil:
			return nil, fmt.Errorf("%s: %s has no steady run (%s): nothing to plan from", file, name, orUnknown(f.Error))
		case st.Errors > 0 || st.Degraded > 0 || st.Achieved < minAchieved*st.Rate:
			return nil, fmt.Errorf("%s: %s's steady run at %s req/s failed (%s): its costs are not evidence", file, name, result.Rate(st.Rate), st.Why)
		case f.Replica == nil:
			return nil, fmt.Errorf("%s: %s's replica CPU was not measured (%s)", file, name, orUnknown(f.ReplicaWhy))
		case f.Generator == nil:
			return nil, fmt.Errorf("%s: the generator's CPU was not measured in %s's steady run (%s)", file, name, orUnknown(f.GeneratorWhy))
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s has no system %q: it measured %s", file, name, strings.Join(names, ", "))
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

func orUnknownCommit(c string) string {
	if c == "" {
		return "unknown"
	}
	return c
}

// source is the plan's first line's account of its costs.
func (c Costs) source() string {
	var rates []float64
	var clients []int
	for _, p := range c.Points {
		rates = append(rates, p.Load.Rate)
		if !slices.Contains(clients, p.Clients) {
			clients = append(clients, p.Clients)
		}
	}
	slices.Sort(clients)
	// A population that is another's over the node count stands for a balancer: the
	// smaller is what a sticky balancer sends a node of the larger, the larger what a
	// spreading one sends it.
	var pops []string
	for _, n := range clients {
		s := result.Rate(float64(n))
		switch {
		case slices.Contains(clients, n*c.Nodes):
			s += fmt.Sprintf(" (a sticky balancer's share of %s)", result.Rate(float64(n*c.Nodes)))
		case n%c.Nodes == 0 && slices.Contains(clients, n/c.Nodes):
			s += " (a spreading balancer's)"
		}
		pops = append(pops, s)
	}
	what := "the runs of --from"
	if c.Builtin {
		what = "the reference costs built in (make plan-reference)"
	}
	redis := "Redis unheld"
	if c.StoreCPU > 0 {
		redis = fmt.Sprintf("Redis held to %g of a core", c.StoreCPU)
	}
	return fmt.Sprintf("costs of %s fitted to %s: %s; %s..%s req/s from %s clients at one replica of %d, time scale %g, %s",
		c.System, what, c.From, result.Rate(slices.Min(rates)), result.Rate(slices.Max(rates)), strings.Join(pops, " and "), c.Nodes, c.TimeScale, redis)
}

// Write prints the plan: its ask and where its costs came from, a row a part with its cores
// and memory, the machine, then the fitted costs and the runs they were fitted to.
func Write(w io.Writer, p Plan) error {
	balancer := "spread over the replicas by the balancer"
	if p.Ask.Sticky {
		balancer = "each kept on one replica by the balancer"
	}
	fmt.Fprintf(w, "Plan: %s req/s over %d replicas, %s clients %s, each part at most %.0f %% busy; %s\n",
		result.Rate(p.Ask.Rate), p.Ask.Replicas, result.Rate(float64(p.Ask.Clients)), balancer, 100*p.Ask.Utilisation, p.Costs.source())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\tcount\tbusy cores\tcores\tmemory\tnote")
	for _, pt := range p.Parts {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%s\t%s\n", pt.Name, pt.Count, pt.Busy, pt.Cores, size(pt.Memory), pt.Note)
	}
	fmt.Fprintf(tw, "the machine's own\t\t\t%d\t\t\n", osCores)
	if err := tw.Flush(); err != nil {
		return err
	}
	machine := fmt.Sprintf("a %d-core machine", p.Machine)
	if p.Machine == 0 {
		machine = "more cores than one machine of the common sizes has: split the parts over machines"
	}
	fmt.Fprintf(w, "machine: %.0f cores, %s memory in all: %s\n", p.Cores, size(p.Memory), machine)
	fmt.Fprintln(w, "costs used:")
	for _, pt := range p.Parts {
		for _, c := range pt.Costs {
			fmt.Fprintf(w, "  %-22s %s: %s\n", pt.Name, c.Value, c.From)
		}
	}
	fmt.Fprintln(w, "runs fitted to (busy cores measured):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  run\treq/s\tclients\tpast a budget\tstore calls/req\tgenerator\treplica\tRedis")
	for _, pt := range p.Costs.Points {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%.2f %%\t%.4f\t%.3f\t%.3f\t%s\n", pt.File, result.Rate(pt.Load.Rate), result.Rate(float64(pt.Clients)),
			100*pt.Load.Past, pt.StoreCalls, pt.Generator, pt.Replica, orDash(pt.Redis))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func orDash(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func size(b float64) string {
	switch {
	case b <= 0:
		return "-"
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", b/(1<<20))
}

// Checked is one part's busy cores as planned beside those another slice run measured.
type Checked struct {
	Part               string
	Predicted, Measure float64 // busy cores
	// Error is (Predicted − Measure) / Measure.
	Error float64
}

// Within says the prediction is within CheckTolerance of the measure.
func (c Checked) Within() bool { return math.Abs(c.Error) <= CheckTolerance }

// Check is a plan put beside a slice run it was not fitted to.
type Check struct {
	Costs Costs
	Other Point
	Load  Load // what the plan read its fit at
	Parts []Checked
	// Outside names the parts more than CheckTolerance off.
	Outside []string
}

// CheckAgainst plans the rate, population and node count of another slice run (other) for
// its one replica from c and puts each part's busy cores beside what that run measured. A
// run c was fitted to checks nothing and is refused.
func CheckAgainst(c Costs, other Input) (Check, error) {
	for _, in := range c.Inputs {
		if in.Bench.StartedAt.Equal(other.Bench.StartedAt) && in.Bench.Commit == other.Bench.Commit {
			return Check{}, fmt.Errorf("%s is %s, one of the runs the costs were fitted to: check against a run left out of --from", other.File, in.File)
		}
	}
	o, err := FitCosts([]Input{other}, c.System, false)
	if err != nil {
		return Check{}, err
	}
	if o.TimeScale != c.TimeScale || o.StoreCPU != c.StoreCPU {
		return Check{}, fmt.Errorf("%s ran at time scale %g with Redis held to %g of a core, the costs' runs at %g and %g: check against a run made alike", other.File, o.TimeScale, o.StoreCPU, c.TimeScale, c.StoreCPU)
	}
	pt := o.Points[0]
	load, err := c.nodeLoad(pt.Load.Rate, pt.Clients, pt.Nodes)
	if err != nil {
		return Check{}, err
	}
	ch := Check{Costs: c, Other: pt, Load: load}
	add := func(name string, predicted, measured float64) {
		if math.IsNaN(measured) {
			return
		}
		k := Checked{Part: name, Predicted: predicted, Measure: measured, Error: math.Inf(1)}
		if measured > 0 {
			k.Error = (predicted - measured) / measured
		}
		if !k.Within() {
			ch.Outside = append(ch.Outside, name)
		}
		ch.Parts = append(ch.Parts, k)
	}
	add("generator", c.Generator.At(Load{Rate: load.Rate, Beside: load.Beside}), pt.Generator)
	add("replica", c.Replica.At(load), pt.Replica)
	if c.HasRedis {
		add("Redis", c.Redis.At(load), pt.Redis)
	}
	return ch, nil
}

// Off says which parts are outside CheckTolerance and by how much, "" when none is.
func (ch Check) Off() string {
	var off []string
	for _, c := range ch.Parts {
		if !c.Within() {
			off = append(off, fmt.Sprintf("%s %+.0f %%", c.Part, 100*c.Error))
		}
	}
	return strings.Join(off, ", ")
}

// WriteCheck prints the check: each part's busy cores predicted and measured, and whether
// each is within CheckTolerance.
func WriteCheck(w io.Writer, ch Check) error {
	o := ch.Other
	fmt.Fprintf(w, "Check: %s, planned at %s req/s from %s clients for one replica of %d, beside what %s measured there\n",
		ch.Costs.source(), result.Rate(o.Load.Rate), result.Rate(float64(o.Clients)), o.Nodes, o.File)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\tpredicted busy cores\tmeasured\terror\t")
	for _, c := range ch.Parts {
		verdict := "within 15 %"
		if !c.Within() {
			verdict = "OUTSIDE 15 %"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.0f %%\t%s\n", c.Part, c.Predicted, c.Measure, 100*c.Error, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "requests past a budget: %.2f %% as the plan counts this traffic; the run's store made %.4f round trips a request\n", 100*ch.Load.Past, o.StoreCalls)
	if ch.Costs.Generator.Coefficient(PerRequestBeside) > 0 {
		measured := o.Replica
		if !math.IsNaN(o.Redis) {
			measured += o.Redis
		}
		fmt.Fprintf(w, "the generator's cost a request read beside %.3f busy cores of %s, as fitted; the run measured %.3f\n", ch.Load.Beside, ch.Costs.besideWhat(), measured)
	}
	if o.Late > 0 {
		fmt.Fprintf(w, "note: %s was sent late (generator p99 lateness %v) but in full\n", o.File, o.Late.Round(time.Millisecond))
	}
	return nil
}
