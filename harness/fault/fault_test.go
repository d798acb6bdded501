package fault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/result"
)

func TestMemberAndCheck(t *testing.T) {
	for f, want := range map[string]string{Stop: "redis", Pause: "redis", Slow: "redis", Restart: "redis", Kill: "replica-7", MasterKill: "redis-node-0", MasterPause: "redis-node-0"} {
		if got := Member(f, 8); got != want {
			t.Errorf("Member(%s, 8) = %s, want %s", f, got, want)
		}
		if Store(f) != (f != Kill) {
			t.Errorf("Store(%s) = %v", f, Store(f))
		}
	}
	for _, c := range []struct {
		p    Plan
		want string
	}{
		{Plan{Fault: Stop, Member: "redis", At: time.Second, Until: 2 * time.Second}, ""},
		{Plan{Fault: Restart, Member: "redis", At: time.Second}, ""}, // brought back at once
		{Plan{Fault: Slow, Member: "redis", At: time.Second, Until: 2 * time.Second}, "needs a delay > 0"},
		{Plan{Fault: "store-melt", Member: "redis", At: time.Second, Until: 2 * time.Second}, `unknown fault "store-melt"`},
		{Plan{Fault: Kill, At: time.Second, Until: 2 * time.Second}, "names no fleet member"},
		{Plan{Fault: Kill, Member: "replica-1", At: 2 * time.Second, Until: time.Second}, "give 0 <= At < Until"},
	} {
		err := c.p.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: err %v, want %q", c.p, err, c.want)
		}
	}
	p := Plan{Fault: Kill, Member: "replica-1", At: 50 * time.Millisecond, Until: 3 * time.Second}
	if w := p.RouteWindow(2 * time.Second); w != (result.Interval{From: 0, To: 5 * time.Second}) {
		t.Errorf("route window %+v: want [0, 5s) (Drain before an early kill clamps at 0)", w)
	}
	p.At = time.Second
	if w := p.RouteWindow(2 * time.Second); w != (result.Interval{From: time.Second - Drain, To: 5 * time.Second}) {
		t.Errorf("route window %+v", w)
	}
}

// recorder is a fleet that records the calls a fault makes, when it makes them.
type recorder struct {
	fleet.Fleet // nil: any other call panics
	origin      time.Time
	mu          sync.Mutex
	calls       []string
	fail        string // a call that fails
}

// slack is how late a call may come on a loaded machine and still be on its time.
const slack = 90 * time.Millisecond

func (r *recorder) rec(call string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Each call is due on a whole 100 ms; it is named by the one it is at most slack after.
	at := time.Since(r.origin)
	due := at.Truncate(100 * time.Millisecond)
	if at-due > slack {
		r.calls = append(r.calls, fmt.Sprintf("%s@%v (off its time)", call, at))
	} else {
		r.calls = append(r.calls, fmt.Sprintf("%s@%v", call, due))
	}
	if call == r.fail {
		return errors.New("it failed")
	}
	return nil
}

func (r *recorder) Stop(_ context.Context, m string) error    { return r.rec("stop " + m) }
func (r *recorder) Start(_ context.Context, m string) error   { return r.rec("start " + m) }
func (r *recorder) Kill(_ context.Context, m string) error    { return r.rec("kill " + m) }
func (r *recorder) Pause(_ context.Context, m string) error   { return r.rec("pause " + m) }
func (r *recorder) Unpause(_ context.Context, m string) error { return r.rec("unpause " + m) }
func (r *recorder) SlowStore(_ context.Context, d time.Duration) error {
	return r.rec(fmt.Sprintf("slow %v", d))
}
func (r *recorder) SlowLink(_ context.Context, z string, d time.Duration) error {
	return r.rec(fmt.Sprintf("slow %s %v", z, d))
}
func (r *recorder) CutLink(_ context.Context, z, how string) error {
	return r.rec(fmt.Sprintf("cut %s %q", z, how))
}

// Each fault makes its two calls on its timetable (a restart's second at once), and its
// timing says when, in order.
func TestArmKeepsTheTimetable(t *testing.T) {
	const at, until = 200 * time.Millisecond, 500 * time.Millisecond
	for _, c := range []struct {
		fault, member string
		want          []string
	}{
		{Stop, "redis", []string{"stop redis@200ms", "start redis@500ms"}},
		{Pause, "redis", []string{"pause redis@200ms", "unpause redis@500ms"}},
		{Slow, "redis", []string{"slow 100ms@200ms", "slow 0s@500ms"}},
		{Restart, "redis", []string{"kill redis@200ms", "start redis@200ms"}},
		{Kill, "replica-3", []string{"kill replica-3@200ms", "start replica-3@500ms"}},
		{MasterKill, "redis-node-0", []string{"stop redis-node-0@200ms", "start redis-node-0@500ms"}},
		{MasterPause, "redis-node-0", []string{"pause redis-node-0@200ms", "unpause redis-node-0@500ms"}},
	} {
		t.Run(c.fault, func(t *testing.T) {
			origin := time.Now()
			r := &recorder{origin: origin}
			a := Arm(context.Background(), r, Plan{Fault: c.fault, Member: c.member, At: at, Until: until, Delay: 100 * time.Millisecond}, origin, nil)
			if a.Contains(at-time.Millisecond, 0) || !a.Contains(at, 0) || !a.Contains(time.Hour, 0) {
				t.Error("before its return, the fault contains every time from At on, and none before")
			}
			tm, err := a.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.calls, c.want) {
				t.Errorf("calls %v, want %v", r.calls, c.want)
			}
			if !(at <= tm.Began && tm.Began <= tm.Down && tm.Down <= tm.Mending && tm.Mending <= tm.Back) || tm.Back > until+100*time.Millisecond {
				t.Errorf("timing out of order: %+v", tm)
			}
			back, ok := a.Back()
			if !ok || back != tm.Back || !a.Contains(back+time.Millisecond, 2*time.Millisecond) || a.Contains(back+2*time.Millisecond, 2*time.Millisecond) {
				t.Errorf("back %v %v; timing %+v", back, ok, tm)
			}
			if w := Windows(tm, time.Second, time.Hour); len(w) != 1 || w[0] != (result.Interval{From: tm.Began, To: tm.Back + time.Second}) {
				t.Errorf("windows %+v", w)
			}
		})
	}
}

// A fault that fails to mend says so and is judged to the end of the run; one the run ended
// before is not made and has no window; a paused store is resumed when the run is cut short.
func TestArmFailuresAndCancel(t *testing.T) {
	origin := time.Now()
	r := &recorder{origin: origin, fail: "start replica-1"}
	tm, err := Arm(context.Background(), r, Plan{Fault: Kill, Member: "replica-1", At: 10 * time.Millisecond, Until: 20 * time.Millisecond}, origin, nil).Wait()
	if err == nil || !strings.Contains(tm.Error, "bring replica-1 back: it failed") || tm.Back != 0 {
		t.Errorf("err %v, timing %+v", err, tm)
	}
	if w := Windows(tm, time.Second, time.Minute); len(w) != 1 || w[0].To != time.Minute {
		t.Errorf("a fault that never came back is judged to the run's end: %+v", w)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tm, err = Arm(ctx, &recorder{origin: origin}, Plan{Fault: Stop, Member: "redis", At: time.Second, Until: 2 * time.Second}, time.Now(), nil).Wait()
	if !errors.Is(err, ErrNotMade) || Windows(tm, time.Second, time.Minute) != nil {
		t.Errorf("a fault after the run: err %v, windows %v", err, Windows(tm, time.Second, time.Minute))
	}

	ctx, cancel = context.WithCancel(context.Background())
	origin = time.Now()
	r = &recorder{origin: origin}
	a := Arm(ctx, r, Plan{Fault: Pause, Member: "redis", At: 100 * time.Millisecond, Until: time.Hour}, origin, nil)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"pause redis@100ms", "unpause redis@300ms"}; !slices.Equal(r.calls, want) {
		t.Errorf("calls %v, want %v", r.calls, want)
	}

	if _, err := Arm(context.Background(), r, Plan{Fault: Slow, Member: "redis", At: 0, Until: time.Second}, time.Now(), nil).Wait(); err == nil {
		t.Error("a slow store without a delay was armed")
	}
}

// TestRestartAndKillOnARealFleet: a store-restart's Redis comes back empty at once; a
// replica-kill's replica refuses connections until its time, then answers again.
func TestRestartAndKillOnARealFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fl, err := fleet.LocalProvider{}.Start(ctx, fleet.Spec{Replicas: 2, Target: fleet.TargetNoop})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Terminate(context.Background())
	rdb := redis.NewClient(&redis.Options{Addr: fl.RedisAddr(), MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	origin := time.Now()
	tm, err := Arm(ctx, fl, Plan{Fault: Restart, Member: Member(Restart, 2), At: 100 * time.Millisecond}, origin, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("after a store-restart the key exists %d times (%v): want an empty store", n, err)
	}
	// Started again at once: back within seconds of the kill (under a second on a quiet
	// machine).
	if tm.Planned.To != tm.Planned.From || tm.Back-tm.Began > 5*time.Second {
		t.Errorf("store-restart timing %+v", tm)
	}
	t.Logf("store-restart: killed at %v, back at %v", tm.Began, tm.Back)

	origin = time.Now()
	url := fl.ReplicaURLs()[1]
	a := Arm(ctx, fl, Plan{Fault: Kill, Member: Member(Kill, 2), At: 100 * time.Millisecond, Until: 600 * time.Millisecond}, origin, nil)
	time.Sleep(350 * time.Millisecond)
	if err := fleet.Healthz(ctx, url); err == nil {
		t.Error("the killed replica answers during its outage")
	}
	if err := fleet.Healthz(ctx, fl.ReplicaURLs()[0]); err != nil {
		t.Errorf("the other replica: %v", err)
	}
	tm, err = a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.Healthz(ctx, url); err != nil {
		t.Errorf("the killed replica after its return: %v", err)
	}
	if tm.Down-tm.Began > time.Second || tm.Mending < 600*time.Millisecond {
		t.Errorf("replica-kill timing %+v: a SIGKILL is quick, the start waits for Until", tm)
	}
}

// A link fault cuts, slows or flaps one zone's link on its timetable and mends it; a flap
// cuts and mends every half FlapPeriod until its time is up.
func TestArmLinkFaults(t *testing.T) {
	const at, until = 200 * time.Millisecond, 700 * time.Millisecond
	for _, c := range []struct {
		fault string
		want  []string
	}{
		{Partition, []string{`cut far "refused"@200ms`, `cut far ""@700ms`}},
		{PartitionBlackhole, []string{`cut far "blackhole"@200ms`, `cut far ""@700ms`}},
		{LinkSlow, []string{"slow far 150ms@200ms", "slow far 0s@700ms"}},
		{Flap, []string{`cut far "refused"@200ms`, `cut far ""@400ms`, `cut far "refused"@600ms`, `cut far ""@700ms`}},
	} {
		t.Run(c.fault, func(t *testing.T) {
			origin := time.Now()
			r := &recorder{origin: origin}
			p := Plan{Fault: c.fault, Zone: "far", Member: ZoneMember("far"), At: at, Until: until, Delay: 150 * time.Millisecond}
			tm, err := Arm(context.Background(), r, p, origin, nil).Wait()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.calls, c.want) {
				t.Errorf("calls %v, want %v", r.calls, c.want)
			}
			if tm.Member != "zone-far" || (c.fault == LinkSlow) != (tm.Delay == 150*time.Millisecond) {
				t.Errorf("timing %+v", tm)
			}
		})
	}
	for _, p := range []Plan{
		{Fault: Partition, Member: "redis", At: at, Until: until},
		{Fault: Flap, Zone: "far", Member: "replica-1", At: at, Until: until},
		{Fault: LinkSlow, Zone: "far", Member: ZoneMember("far"), At: at, Until: until},
	} {
		if err := p.Check(); err == nil {
			t.Errorf("plan %+v was taken", p)
		}
	}
}
