package fleet

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/topology"
)

// TestZoneLinks runs two zones of central-mode replicas, one 0.5 ms from the store and one
// 20 ms ± 2 ms: a PING through each zone's link takes its round trip; the far zone's link
// slowed, refused and blackholed leaves the near zone's as it was, and each is mended.
func TestZoneLinks(t *testing.T) {
	for _, p := range providers(t) {
		t.Run(p.name, func(t *testing.T) {
			prov := p.start(t, "replica", "redis")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			zones, err := topology.Parse("near:1:0.5ms,far:1:20ms±2ms")
			if err != nil {
				t.Fatal(err)
			}
			f, err := prov.Start(ctx, Spec{Replicas: 2, Mode: "central", Rules: replicaRules, StoreTimeout: 200 * time.Millisecond, Zones: zones})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Terminate(context.Background())
			links := f.Conditions().ZoneLinks
			if len(links) != 2 || links[0] == links[1] || links[0] == f.RedisAddr() {
				t.Fatalf("zone links %v beside redis %s: want one address per zone", links, f.RedisAddr())
			}
			checkDecisionsReachRedis(ctx, t, f)

			// A PING on a fresh connection through each link: one round trip each.
			ping := func(addr string) (time.Duration, error) {
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					return 0, err
				}
				defer conn.Close()
				begin := time.Now()
				_ = conn.SetDeadline(begin.Add(400 * time.Millisecond))
				if _, err := conn.Write([]byte("PING\r\n")); err != nil {
					return 0, err
				}
				line, err := bufio.NewReader(conn).ReadString('\n')
				if err == nil && line != "+PONG\r\n" {
					err = errors.New("answered " + line)
				}
				return time.Since(begin), err
			}
			within := func(what, addr string, lo, hi time.Duration) {
				t.Helper()
				d, err := ping(addr)
				if err != nil || d < lo || d > hi {
					t.Errorf("%s: PING took %v (err %v), want %v..%v", what, d, err, lo, hi)
				}
			}
			within("near", links[0], 0, 10*time.Millisecond)
			within("far", links[1], 36*time.Millisecond, 60*time.Millisecond)

			step(t, "slow the far link", f.SlowLink(ctx, "far", 100*time.Millisecond))
			within("far slowed", links[1], 136*time.Millisecond, 170*time.Millisecond)
			within("near beside the slowed far", links[0], 0, 10*time.Millisecond)
			step(t, "take the far link's delay away", f.SlowLink(ctx, "far", 0))
			within("far mended", links[1], 36*time.Millisecond, 60*time.Millisecond)

			for _, tc := range linkCuts {
				step(t, "cut the far link "+tc.how, f.CutLink(ctx, "far", tc.how))
				if _, err := ping(links[1]); !tc.want(err) {
					t.Errorf("far link %s: PING err %v", tc.how, err)
				}
				within("near beside the cut far", links[0], 0, 10*time.Millisecond)
				step(t, "mend the far link", f.CutLink(ctx, "far", LinkUp))
				within("far mended after "+tc.how, links[1], 36*time.Millisecond, 60*time.Millisecond)
			}
			if err := f.CutLink(ctx, "moon", LinkRefused); err == nil {
				t.Error("a zone the fleet does not have was cut")
			}
			if err := f.CutLink(ctx, "far", "sideways"); err == nil {
				t.Error("a link was cut a way there is none")
			}
		})
	}
}

// linkCuts are the two ways a link is cut (CutLink) and what a call through it then gets: a
// refused link an error at once, a blackholed one its deadline.
var linkCuts = []struct {
	how  string
	want func(error) bool
}{
	{LinkRefused, func(err error) bool { return err != nil && !isTimeout(err) }},
	{LinkBlackhole, isTimeout},
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestSpecRejectsZones(t *testing.T) {
	zones, err := topology.Parse("near:2:1ms,far:2:40ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Replicas: 3, Zones: zones}, "hold 4 replicas, but the fleet runs 3"},
		{Spec{Replicas: 4, Zones: zones, NoStore: true}, "zones are links to one Redis, or between the nodes"},
		{Spec{Replicas: 4, Zones: zones, StoreProxy: true}, "leave StoreProxy off with zones"},
	} {
		_, err := tc.spec.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to contain %q", tc.spec.Zones, err, tc.want)
		}
	}
	if _, err := (Spec{Replicas: 4, Zones: zones}).withDefaults(); err != nil {
		t.Errorf("4 replicas in zones of 2 and 2: %v", err)
	}
}
