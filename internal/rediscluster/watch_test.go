package rediscluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/rediscluster"
	"github.com/edgeproof/rlharness/internal/redistest"
)

// A master killed on a real cluster: its range is down from the kill until its replica is
// promoted, the other ranges never, and the replica's promotion is an event.
func TestWatcherSeesAFailover(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1, time.Second)
	victim := c.Masters()[0]
	w := rediscluster.Watch(context.Background(), c.Addrs, 50*time.Millisecond, 100*time.Millisecond, time.Now)
	time.Sleep(200 * time.Millisecond)
	killed := time.Now()
	victim.Kill()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if n, ok := c.View().Node(victim.Addr); ok && (!n.Master() || len(n.Slots) == 0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no failover within 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	rep := w.Stop()
	took := time.Since(killed)
	if rep.Polls < 5 || len(rep.Ranges) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Ranges {
		if r.MasterFrom != victim.Addr {
			if r.Down != 0 || r.FirstDown != -1 {
				t.Errorf("range %s of a healthy master: down %s from %s", r.Slots, r.Down, r.FirstDown)
			}
			continue
		}
		if r.Down < 500*time.Millisecond || r.Down > took || r.Back < r.FirstDown || r.MasterTo == victim.Addr || r.MasterTo == "" {
			t.Errorf("the victim's range %+v: want down for about the failover (killed %s ago), then served by its replica", r, took)
		}
	}
	promoted := false
	for _, e := range rep.Events {
		promoted = promoted || e.From == "replica" && strings.HasPrefix(e.To, "master")
	}
	if !promoted {
		t.Errorf("no replica promotion among the events %+v", rep.Events)
	}
}
