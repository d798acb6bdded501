package loadtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/accounting"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/commandstats"
	"github.com/edgeproof/rlharness/internal/rediscluster"
	"github.com/edgeproof/rlharness/limiters"
)

// faultMember is the fleet member a fault hits: the whole store, or on a cluster the
// node that is master 0 when the cluster is created (slots 0-5460).
func faultMember(fault string) string {
	if fault == result.FaultMasterKill || fault == result.FaultMasterPause {
		return fleet.RedisNodeMember(0)
	}
	return fleet.RedisMember
}

// scenarios is what the run does: on one Redis, Scenarios; on a cluster store, the design
// and, with fail-open, its two master faults in place of the whole-store ones.
func (c Config) scenarios() []result.Scenario {
	if c.Store != fleet.StoreCluster {
		out := Scenarios(c.Algorithm, c.Mode, limiters.Design(c.Design), c.FailOpen, c.Matrix)
		if !c.FailOpen || c.Zones.IsZero() {
			return out
		}
		n := 1 + len(FailOpenFaults)
		zoned := slices.Clone(out[:n])
		for _, f := range ZoneFaults {
			zoned = append(zoned, result.Scenario{Name: out[0].Name + "/" + f, Algorithm: out[0].Algorithm, Mode: out[0].Mode, Design: out[0].Design, Fault: f, Gated: true})
		}
		return append(zoned, out[n:]...)
	}
	all := Scenarios(c.Algorithm, c.Mode, limiters.Design(c.Design), false, c.Matrix)
	out := []result.Scenario{all[0]}
	if c.FailOpen {
		for _, f := range []string{result.FaultMasterKill, result.FaultMasterPause} {
			out = append(out, result.Scenario{Name: all[0].Name + "/" + f, Algorithm: string(c.Algorithm), Mode: string(c.Mode), Design: all[0].Design, Fault: f, Gated: true})
		}
	}
	return append(out, all[1:]...)
}

// shards is how many masters share the counters: the delayed-sync exchange costs one
// command per node per shard per interval.
func (c Config) shards() int {
	if c.Store == fleet.StoreCluster {
		return fleet.DefaultClusterMasters
	}
	return 1
}

// clusterPoll is how often a master fault's watcher reads the slot map.
const clusterPoll = 100 * time.Millisecond

// watchCluster polls a cluster store's slot map through a master fault, from a second
// before it until stop is called; stop returns what it saw, with offsets from the start of
// the traffic. On one Redis, or without a master fault, it watches nothing.
func watchCluster(ctx context.Context, fl fleet.Fleet, sc result.Scenario, start time.Time, outage time.Duration) (stop func() *result.ClusterFault) {
	cf, ok := fl.(fleet.ClusterFleet)
	if !ok || len(cf.StoreNodes()) == 0 || sc.Fault == result.FaultNone || faultMember(sc.Fault) == fleet.RedisMember { // a fault's slot map only
		return func() *result.ClusterFault { return nil }
	}
	nodes := cf.StoreNodes()
	ready := make(chan *rediscluster.Watcher, 1)
	go func() {
		t := time.NewTimer(time.Until(start.Add(outage - time.Second)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			ready <- nil
		case <-t.C:
			ready <- rediscluster.Watch(ctx, nodes, clusterPoll, clusterPoll, time.Now)
		}
	}()
	return func() *result.ClusterFault {
		w := <-ready
		if w == nil {
			return nil
		}
		rep := w.Stop()
		shift := w.Started().Sub(start)
		out := &result.ClusterFault{Member: faultMember(sc.Fault), Node: nodes[0], Every: clusterPoll, Polls: rep.Polls}
		for _, r := range rep.Ranges {
			cr := result.ClusterRange{Slots: r.Slots, MasterFrom: r.MasterFrom, MasterTo: r.MasterTo, Down: r.Down, FirstDown: -1, Back: -1}
			if r.FirstDown >= 0 {
				cr.FirstDown = r.FirstDown + shift
			}
			if r.Back >= 0 {
				cr.Back = r.Back + shift
			}
			out.Ranges = append(out.Ranges, cr)
		}
		for _, e := range rep.Events {
			out.Events = append(out.Events, result.ClusterEvent{At: e.At + shift, Node: e.Node, From: e.From, To: e.To})
		}
		return out
	}
}

// storeResetter opens a connection to every server of the store now, and returns the reset
// that zeroes their command counts: called on the run's origin, it must not dial six
// servers one after another while the first requests wait (CI saw a 66 ms late start).
func storeResetter(ctx context.Context, fl fleet.Fleet) (reset func(context.Context) error, closeFn func(), err error) {
	servers := fleet.StoreServers(fl)
	for addr, c := range servers {
		if err := c.Ping(ctx).Err(); err != nil {
			closeAll(servers)
			return nil, nil, fmt.Errorf("reach %s: %w", addr, err)
		}
	}
	reset = func(ctx context.Context) error {
		errs := make(chan error, len(servers))
		for addr, c := range servers {
			go func() {
				if err := c.ConfigResetStat(ctx).Err(); err != nil {
					errs <- fmt.Errorf("reset the command stats of %s: %w", addr, err)
					return
				}
				errs <- nil
			}()
		}
		var first error
		for range servers {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	return reset, func() { closeAll(servers) }, nil
}

// storeCommandsAll is commandstats.Read summed over the store's masters at the end of the run
// (a cluster's replicas replay their masters' writes; a master killed during the run took
// its counts with it).
func storeCommandsAll(ctx context.Context, fl fleet.Fleet, internal commandstats.Set) (touches, ops int64, err error) {
	servers := fleet.StoreServers(fl)
	defer closeAll(servers)
	cluster := len(servers) > 1
	for addr, c := range servers {
		if cluster {
			v, err := rediscluster.Query(ctx, addr, time.Second)
			if self, ok := v.Self(); err != nil || !ok || !self.Master() {
				continue
			}
		}
		t, o, err := commandstats.Read(ctx, c, internal)
		if err != nil {
			return touches, ops, fmt.Errorf("%s: %w", addr, err)
		}
		touches += t
		ops += o
	}
	return touches, ops, nil
}

func closeAll[C interface{ Close() error }](m map[string]C) {
	for _, c := range m {
		_ = c.Close()
	}
}

// printCluster prints what the slot map did during a master fault.
func printCluster(w interface{ Write([]byte) (int, error) }, cf *result.ClusterFault) {
	if cf == nil {
		return
	}
	fmt.Fprintf(w, "   %s (%s) faulted; slot map polled every %s, %d polls:\n", cf.Member, cf.Node, cf.Every, cf.Polls)
	for _, r := range cf.Ranges {
		status := "never without a master"
		if r.FirstDown >= 0 {
			back := "not back"
			if r.Back >= 0 {
				back = fmt.Sprintf("back at %.1fs", r.Back.Seconds())
			}
			status = fmt.Sprintf("without a master %.1fs (from %.1fs, %s)", r.Down.Seconds(), r.FirstDown.Seconds(), back)
		}
		fmt.Fprintf(w, "     slots %-12s %s -> %s: %s\n", r.Slots, r.MasterFrom, r.MasterTo, status)
	}
	for _, e := range cf.Events {
		fmt.Fprintf(w, "     %6.1fs  %s: %s -> %s\n", e.At.Seconds(), e.Node, e.From, e.To)
	}
}

// clusterStore is the summary's store field: "cluster", or empty for one Redis.
func (c Config) clusterStore() string {
	if c.Store == fleet.StoreCluster {
		return fleet.StoreCluster
	}
	return ""
}

// agreementGuard is how close to the oldest stored slice's edge an acceptance may be sent
// and still be counted by the replica in the slice before (the replica's clock reads the
// request a little after the generator's).
const agreementGuard = 100 * time.Millisecond

// storeAgreement is the nothing-lost check of a delayed-sync run: once the replicas have
// made their last syncs, every probe client's count in the store, over the slices the store
// still holds, must be what the replicas accepted in those slices. A master killed in a
// cluster may take with it the writes of its last sync intervals that had not reached its
// replica (asynchronous replication): those acceptances are the allowance, and so are the
// ones sent within agreementGuard of the oldest slice's edge.
//
// The bounded design's store holds a log of decision times (limiters.BoundedLog) and, by
// design, not what a node admitted within its unsynced budget of a client it never asked the
// store about: up to nodes × budget per window is allowed missing. A decision
// whose store call failed or timed out may have been counted by the store and again by the
// node's fallback: the store may hold up to those (the replicas' store decisions failed,
// res.Sync) more.
func storeAgreement(ctx context.Context, fl fleet.Fleet, cfg Config, sc result.Scenario, res *result.ScenarioResult,
	start time.Time, outage result.Interval) (result.Check, bool) {
	if limiters.Mode(sc.Mode) != limiters.ModeDelayed || limiters.Algorithm(sc.Algorithm) == limiters.TokenBucket {
		return result.Check{}, false
	}
	iv := cfg.scaled(cfg.SyncInterval)
	t := time.NewTimer(3 * iv)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return result.Check{}, false
	case <-t.C:
	}
	rdb := fleet.StoreClient(fl)
	defer rdb.Close()
	window := cfg.Spec.Window()
	rule := &limiters.Rule{Name: "default", Algorithm: limiters.Algorithm(sc.Algorithm), Limit: limiters.DefaultLimit,
		Window: window, Slices: limiters.DefaultSlices}
	lay := documentLayout(window)
	var bd limiters.Bounds
	var doubled int64 // decisions the store may have counted twice
	if boundedDesign(sc) {
		lay = boundedLayout
		bd = limiters.BoundsFor(rule, cfg.Spec.Replicas)
		if res.Sync != nil && res.Sync.StoreDecisions != nil {
			doubled = res.Sync.StoreDecisions.Failed
		}
	}
	var stored, accepted, allowance, unseen int64
	bad := 0
	worst := ""
	for _, p := range res.Probes {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		first, last, got, err := lay.read(cctx, rdb, p.ID, rule)
		cancel()
		if err != nil {
			return accounting.NewCheck("store agrees with the accepted", 1, accounting.OpEqual, 0,
				fmt.Sprintf("could not read %s's counters: %v", p.ID, err)), true
		}
		unit := lay.unit
		if unit == 0 {
			unit = bd.Sub * int64(time.Microsecond)
		}
		var want, slack, missing int64
		for _, off := range p.AcceptedAt {
			at := start.Add(off).UnixNano()
			if at/unit < first {
				if first != math.MaxInt64 && first*unit-at <= int64(agreementGuard) {
					slack++
				}
				continue
			}
			want++
			if at-first*unit <= int64(agreementGuard) {
				slack++
			}
			if sc.Fault == result.FaultMasterKill && off <= outage.From && off > outage.From-2*iv {
				slack++
			}
		}
		if bd.Budget > 0 && first != math.MaxInt64 {
			span := (last - first + 1) * unit
			perSpan := bd.Window * int64(time.Microsecond)
			missing = int64(cfg.Spec.Replicas) * bd.Budget * ((span + perSpan - 1) / perSpan)
		}
		stored, accepted, allowance, unseen = stored+got, accepted+want, allowance+slack, unseen+missing
		if d := got - want; d > slack+doubled || -d > slack+missing {
			bad++
			worst = fmt.Sprintf("; %s: store %d, accepted %d (allowance %d, %d unseen, %d counted twice)", p.ID, got, want, slack, missing, doubled)
		}
	}
	detail := fmt.Sprintf("probe clients whose count in the store differs from what the replicas accepted in the %s it holds: %d stored, %d accepted, allowance %d (slice edges, unreplicated writes of a killed master)",
		lay.what, stored, accepted, allowance)
	if boundedDesign(sc) {
		detail += fmt.Sprintf(", up to %d admitted within the nodes' unsynced budgets and never pushed (%d per node and window), up to %d more from %d store decisions that failed",
			unseen, bd.Budget, doubled, doubled)
	}
	return accounting.NewCheck("store agrees with the accepted", float64(bad), accounting.OpEqual, 0, detail+worst), true
}

// counterLayout reads a client's counts as one design keeps them: the first and last index
// held (math.MaxInt64 and 0 when none), in units of unit ns (0: the bounded design's
// sub-slice, from its bounds), and their total.
type counterLayout struct {
	what string
	unit int64
	read func(ctx context.Context, rdb redis.UniversalClient, client string, rule *limiters.Rule) (first, last, total int64, err error)
}

// documentLayout is the document's: a hash of slice counts (limiters.Key, WindowHash).
func documentLayout(window time.Duration) counterLayout {
	return counterLayout{what: "slices", unit: int64(window / limiters.DefaultSlices),
		read: func(ctx context.Context, rdb redis.UniversalClient, client string, rule *limiters.Rule) (int64, int64, int64, error) {
			h, err := rdb.HGetAll(ctx, limiters.Key(client, rule)).Result()
			if err != nil {
				return 0, 0, 0, err
			}
			counts, err := limiters.WindowHash(h)
			if err != nil {
				return 0, 0, 0, err
			}
			first, last, total := int64(math.MaxInt64), int64(0), int64(0)
			for _, c := range counts {
				first, last, total = min(first, c.Index), max(last, c.Index), total+c.Count
			}
			return first, last, total, nil
		}}
}

// boundedLayout is the bounded design's: a log of admissions by decision time
// (limiters.BoundedLogKey, BoundedLog).
var boundedLayout = counterLayout{what: "decision times",
	read: func(ctx context.Context, rdb redis.UniversalClient, client string, rule *limiters.Rule) (int64, int64, int64, error) {
		subs, err := limiters.BoundedLog(ctx, rdb, client, rule)
		if err != nil {
			return 0, 0, 0, err
		}
		first, last, total := int64(math.MaxInt64), int64(0), int64(0)
		for _, c := range subs {
			first, last, total = min(first, c.Index), max(last, c.Index), total+c.Count
		}
		return first, last, total, nil
	}}
