// Package plan sizes a fleet from what one replica's share of the load was measured to cost
// (harness bench --slice): the cores the generator, the replicas and Redis need at a rate,
// each from a per-request cost read from a bench.json and named with where it came from,
// and the machine that holds them. Check puts a plan beside what another slice run measured.
package plan

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

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
	// osCores are the cores a machine keeps for everything but the parts.
	osCores = 1
)

// machineSizes are the core counts machines are commonly rented with.
var machineSizes = []int{2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256}

// Ask is what a plan is for.
type Ask struct {
	Rate     float64 // req/s the fleet must carry
	Replicas int
	// Clients are the clients the fleet tracks (HS1: 200,000); every replica is sized to hold
	// all of them, since requests spread over the replicas reach each replica from nearly
	// every client.
	Clients int
	// System names the slice's system whose costs are used.
	System string
	// Utilisation is the share of its cores each part may keep busy, in (0, 1].
	Utilisation float64
}

// Cost is one measured per-request cost and where it came from.
type Cost struct {
	Value float64 // in Unit
	Unit  string
	From  string // file, system and figure
}

// Part is one part of the fleet as planned.
type Part struct {
	Name  string
	Count int
	// Busy is the cores the part keeps busy at the rate (the costs times the rate), Cores
	// those it is given: Busy over the utilisation, whole cores a member at least one.
	Busy, Cores float64
	// Memory is the bytes the part holds, 0 when not planned.
	Memory float64
	Costs  []Cost
	Note   string
}

// Plan is a fleet sized for an Ask from a slice's bench.json.
type Plan struct {
	Ask    Ask
	From   string // the bench.json
	Commit string
	// SliceRate and Slice are the rate and the traffic (its node count among it) the costs
	// were measured at.
	SliceRate float64
	Slice     schedule.Slice
	Parts     []Part
	// Cores is every part's cores plus the machine's own; Machine the smallest common size
	// that holds them; Memory every part's bytes.
	Cores   float64
	Machine int
	Memory  float64
	Notes   []string
}

// Make plans ask from b, a slice's bench.json read from file.
func Make(b result.Bench, file string, ask Ask) (Plan, error) {
	switch {
	case !(ask.Rate > 0) || ask.Replicas < 1 || ask.Clients < 0:
		return Plan{}, fmt.Errorf("plan: want a rate > 0, replicas >= 1 and clients >= 0 (got %v, %d, %d)", ask.Rate, ask.Replicas, ask.Clients)
	case !(ask.Utilisation > 0 && ask.Utilisation <= 1):
		return Plan{}, fmt.Errorf("plan: --utilisation must be in (0, 1] (got %v)", ask.Utilisation)
	case b.Slice == nil:
		return Plan{}, fmt.Errorf("%s holds no slice: plan from the bench.json of harness bench --slice (make bench-slice)", file)
	}
	f, err := system(b, file, ask.System)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Ask: ask, From: file, Commit: b.Commit, SliceRate: f.Steady.Rate, Slice: b.Slice.Traffic}
	src := func(figure string) string {
		return fmt.Sprintf("%s, %s, %s (steady run at %s req/s)", file, f.Name, figure, result.Rate(f.Steady.Rate))
	}
	g, r := f.Generator, f.Replica
	perReplica := ask.Rate / float64(ask.Replicas)

	gen := part("generator shards", 0, ask.Rate*g.CPUPerRequestUs/1e6, ask.Utilisation,
		Cost{g.CPUPerRequestUs, "us CPU a request sent", src("the harness's own CPU per request, /proc")})
	gen.Count = max(1, int(math.Ceil(gen.Cores)))
	gen.Cores = float64(gen.Count)
	gen.Note = "one harness attack process a core (--shards)"

	rep := part("replicas", ask.Replicas, ask.Rate*r.CPUPerRequestUs/1e6, ask.Utilisation,
		Cost{r.CPUPerRequestUs, "us CPU a decision", src("the replica process's CPU per decision, /proc")},
		Cost{r.RSSPerClient, "B RSS a client", src("the replica's resident memory grown per client sent")})
	rep.Memory = float64(ask.Replicas) * (float64(r.RSSBefore) + math.Max(0, r.RSSPerClient)*float64(ask.Clients))
	rep.Note = fmt.Sprintf("%s req/s each", result.Rate(perReplica))
	switch {
	case f.Ceiling > 0 && perReplica > f.Ceiling && result.Climbing(*f):
		p.Notes = append(p.Notes, fmt.Sprintf("each replica would carry %s req/s; %s's ceiling search in %s stopped while still climbing at %s req/s, so how much one replica carries is not known past that",
			result.Rate(perReplica), f.Name, file, result.Rate(f.Ceiling)))
	case f.Ceiling > 0 && perReplica > f.Ceiling:
		p.Notes = append(p.Notes, fmt.Sprintf("each replica would carry %s req/s, above the %s req/s one was seen to sustain (%s's ceiling in %s): add replicas",
			result.Rate(perReplica), result.Rate(f.Ceiling), f.Name, file))
	}
	if n := routingNote(p.Slice, ask); n != "" {
		p.Notes = append(p.Notes, n)
	}
	if ask.Replicas != p.Slice.Nodes {
		p.Notes = append(p.Notes, fmt.Sprintf("the costs were measured on a replica told it is one of %d nodes; a fleet of %d gives each node another budget and sync share", p.Slice.Nodes, ask.Replicas))
	}
	p.Parts = append(p.Parts, gen, rep)

	if f.StoreCPU != nil {
		st := part("Redis", 1, ask.Rate*f.StoreCPU.MsPerKiloRequest/1e6, ask.Utilisation,
			Cost{f.StoreCPU.MsPerKiloRequest, "us Redis CPU a request", src("INFO cpu, the main thread")},
			Cost{f.StoreCmdPerRequest, "round trips a request", src("INFO commandstats, scripts' inner commands left out")})
		if m := f.StoreMemory; m != nil {
			st.Costs = append(st.Costs, Cost{m.PerClient, "B a client", src("INFO memory used_memory grown per client sent")})
			st.Memory = math.Max(0, m.PerClient) * float64(ask.Clients)
		}
		st.Note = fmt.Sprintf("%s round trips/s", result.Rate(ask.Rate*f.StoreCmdPerRequest))
		// Redis runs its commands on one thread: past one busy core it needs more shards.
		if st.Busy/ask.Utilisation > 1 {
			st.Count = int(math.Ceil(st.Busy / ask.Utilisation))
			st.Cores = float64(st.Count)
			st.Name = "Redis Cluster masters"
			st.Note += fmt.Sprintf("; one Redis thread keeps at most one core busy: %d masters at %.0f %% each", st.Count, 100*st.Busy/float64(st.Count))
		}
		p.Parts = append(p.Parts, st)
	} else if f.Conditions.Target != "noop" {
		p.Notes = append(p.Notes, fmt.Sprintf("Redis not planned: its CPU was not measured in %s (%s)", file, f.StoreCPUWhy))
	}
	for _, pt := range p.Parts {
		p.Cores += pt.Cores
		p.Memory += pt.Memory
	}
	p.Cores += osCores
	p.Machine = machineFor(p.Cores)
	return p, nil
}

// part is a part of count members keeping busy cores busy in all, each given whole cores
// (at least one) at the utilisation.
func part(name string, count int, busy, utilisation float64, costs ...Cost) Part {
	p := Part{Name: name, Count: count, Busy: busy, Costs: costs}
	if count > 0 {
		p.Cores = float64(count) * math.Max(1, math.Ceil(busy/float64(count)/utilisation))
	} else {
		p.Cores = busy / utilisation
	}
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
// not measured or rest on a steady run that was not sustained.
func system(b result.Bench, file, name string) (*result.FleetBench, error) {
	var names []string
	for i := range b.Slice.Systems {
		f := &b.Slice.Systems[i]
		names = append(names, f.Name)
		if f.Name != name {
			continue
		}
		switch {
		case f.Steady == nil:
			return nil, fmt.Errorf("%s: %s has no steady run (%s): nothing to plan from", file, name, orUnknown(f.Error))
		case !f.Steady.Sustained:
			return nil, fmt.Errorf("%s: %s's steady run at %s req/s was not sustained (%s): its costs are not evidence; run the slice at a rate this machine sends", file, name, result.Rate(f.Steady.Rate), f.Steady.Why)
		case f.Replica == nil:
			return nil, fmt.Errorf("%s: %s's replica CPU was not measured (%s)", file, name, orUnknown(f.ReplicaWhy))
		case f.Generator == nil:
			return nil, fmt.Errorf("%s: the generator's CPU was not measured in %s's steady run (%s)", file, name, orUnknown(f.GeneratorWhy))
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s has no system %q: it measured %s", file, name, strings.Join(names, ", "))
}

// routingNote says which balancer the costs assume, as the store's calls a request depend
// on how many of a client's requests reach one node (schedule.Slice.Routing); "" when the
// slice's population is not HS1's.
func routingNote(s schedule.Slice, ask Ask) string {
	r := s.Routing()
	if r == "" || ask.Replicas < 2 {
		return ""
	}
	note := fmt.Sprintf("the costs are of %s clients at one node (%s)", result.Rate(float64(s.Clients)), r)
	if s.Clients < schedule.DefaultClients {
		return note + fmt.Sprintf("; behind a balancer that spreads each client over the replicas fewer of a client's requests reach one node and pass its budget, so the store's share is smaller: plan from a slice run with --clients %d for that", schedule.DefaultClients)
	}
	return note + fmt.Sprintf("; behind a balancer that keeps each client on one replica more of them pass a node's budget and call the store: plan from a slice run with --clients %d for that", schedule.DefaultClients/s.Nodes)
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

// Write prints the plan: a row a part with its cores and memory, then the costs it used and
// where each came from, then the machine.
func Write(w io.Writer, p Plan) error {
	fmt.Fprintf(w, "Plan: %s req/s over %d replicas, %s clients, each part at most %.0f %% busy; costs of %s from %s (commit %s, one replica as one of %d at %s req/s from %s clients)\n",
		result.Rate(p.Ask.Rate), p.Ask.Replicas, result.Rate(float64(p.Ask.Clients)), 100*p.Ask.Utilisation, p.Ask.System, p.From, orUnknownCommit(p.Commit), p.Slice.Nodes, result.Rate(p.SliceRate), result.Rate(float64(p.Slice.Clients)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\tcount\tbusy cores\tcores\tmemory\tnote")
	for _, pt := range p.Parts {
		count := "-"
		if pt.Count > 0 {
			count = fmt.Sprint(pt.Count)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.0f\t%s\t%s\n", pt.Name, count, pt.Busy, pt.Cores, size(pt.Memory), pt.Note)
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
			fmt.Fprintf(w, "  %-20s %10.4g %-24s from %s\n", pt.Name, c.Value, c.Unit, c.From)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
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

// Check plans from b (file) the rate another slice run (other, otherFile) was sent, for its
// one replica, and puts each part's busy cores beside what that run measured: the plan's
// arithmetic (cost per request × rate) against reality at a rate it was not measured at.
func Check(b result.Bench, file string, other result.Bench, otherFile, name string) (Plan, []Checked, error) {
	if other.Slice == nil {
		return Plan{}, nil, fmt.Errorf("%s holds no slice: check against the bench.json of another harness bench --slice run", otherFile)
	}
	o, err := system(other, otherFile, name)
	if err != nil {
		return Plan{}, nil, err
	}
	p, err := Make(b, file, Ask{Rate: o.Steady.Rate, Replicas: 1, Clients: other.Slice.Traffic.Clients, System: name, Utilisation: 1})
	if err != nil {
		return Plan{}, nil, err
	}
	measured := map[string]float64{"generator shards": o.Generator.Cores, "replicas": o.Replica.Cores}
	if o.StoreCPU != nil {
		measured["Redis"] = o.StoreCPU.Percent / 100
	}
	var out []Checked
	for _, pt := range p.Parts {
		m, ok := measured[pt.Name]
		if !ok {
			continue
		}
		c := Checked{Part: pt.Name, Predicted: pt.Busy, Measure: m, Error: math.NaN()}
		if m > 0 {
			c.Error = (pt.Busy - m) / m
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return p, nil, errors.New("nothing to check: no part of the plan was measured in " + otherFile)
	}
	return p, out, nil
}

// WriteCheck prints the check: each part's busy cores predicted and measured.
func WriteCheck(w io.Writer, p Plan, checks []Checked, otherFile string) error {
	fmt.Fprintf(w, "Check: %s's costs from %s (at %s req/s), planned at %s req/s for one replica, beside what %s measured there\n",
		p.Ask.System, p.From, result.Rate(p.SliceRate), result.Rate(p.Ask.Rate), otherFile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "part\tpredicted busy cores\tmeasured\terror")
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.0f %%\n", c.Part, c.Predicted, c.Measure, 100*c.Error)
	}
	return tw.Flush()
}

func orUnknownCommit(c string) string {
	if c == "" {
		return "unknown"
	}
	return c
}
