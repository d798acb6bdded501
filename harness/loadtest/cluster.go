package loadtest

import (
	"context"
	"fmt"
	"math"
	"time"

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
		return Scenarios(c.Algorithm, c.Mode, c.FailOpen, c.Matrix)
	}
	all := Scenarios(c.Algorithm, c.Mode, false, c.Matrix)
	out := []result.Scenario{all[0]}
	if c.FailOpen {
		for _, f := range []string{result.FaultMasterKill, result.FaultMasterPause} {
			out = append(out, result.Scenario{Name: all[0].Name + "/" + f, Algorithm: string(c.Algorithm), Mode: string(c.Mode), Fault: f, Gated: true})
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
	window := cfg.ScheduleSpec().Window()
	sliceLen := int64(window / limiters.DefaultSlices)
	rule := &limiters.Rule{Name: "default", Algorithm: limiters.Algorithm(sc.Algorithm)}
	var stored, accepted, allowance int64
	bad := 0
	worst := ""
	for _, p := range res.Probes {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err := rdb.HGetAll(cctx, limiters.Key(p.ID, rule)).Result()
		cancel()
		if err != nil {
			return accounting.NewCheck("store agrees with the accepted", 1, accounting.OpEqual, 0,
				fmt.Sprintf("could not read %s's counters: %v", p.ID, err)), true
		}
		counts, err := limiters.WindowHash(h)
		if err != nil {
			return accounting.NewCheck("store agrees with the accepted", 1, accounting.OpEqual, 0,
				fmt.Sprintf("%s's counters: %v", p.ID, err)), true
		}
		first := int64(math.MaxInt64)
		var got int64
		for _, c := range counts {
			first = min(first, c.Index)
			got += c.Count
		}
		var want, slack int64
		for _, off := range p.AcceptedAt {
			at := start.Add(off).UnixNano()
			if at/sliceLen < first {
				if first != math.MaxInt64 && first*sliceLen-at <= int64(agreementGuard) {
					slack++
				}
				continue
			}
			want++
			if at-first*sliceLen <= int64(agreementGuard) {
				slack++
			}
			if sc.Fault == result.FaultMasterKill && off <= outage.From && off > outage.From-2*iv {
				slack++
			}
		}
		stored, accepted, allowance = stored+got, accepted+want, allowance+slack
		if d := got - want; d > slack || -d > slack {
			bad++
			worst = fmt.Sprintf("; %s: store %d, accepted %d (allowance %d)", p.ID, got, want, slack)
		}
	}
	return accounting.NewCheck("store agrees with the accepted", float64(bad), accounting.OpEqual, 0,
		fmt.Sprintf("probe clients whose count in the store differs from what the replicas accepted in the slices it holds: %d stored, %d accepted, allowance %d (slice edges, unreplicated writes of a killed master)%s",
			stored, accepted, allowance, worst)), true
}
