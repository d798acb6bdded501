package replica

import (
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
	"github.com/edgeproof/rlharness/limiters"
)

// The sync-health series of a delayed replica on a real redis-server, scraped over HTTP in
// three phases: the store up (exchanges ok, none failed, not blind), the store paused
// (exchanges time out, blindness grows by about the pause less two intervals), the store
// back (exchanges ok again, blindness stops growing).
func TestSyncHealthMetrics(t *testing.T) {
	for _, design := range []limiters.Design{DesignDocument, DesignBounded} {
		t.Run(string(design), func(t *testing.T) { syncHealthMetrics(t, design) })
	}
}

func syncHealthMetrics(t *testing.T, design limiters.Design) {
	srv := redistest.Start(t)
	rules := mustRules(t, underLimitRules)
	const interval = 20 * time.Millisecond
	_, ts := startReplica(t, Config{Mode: limiters.ModeDelayed, Redis: srv.Addr, NodeCount: 2, Design: design,
		SyncInterval: interval, StoreTimeout: 30 * time.Millisecond}, rules, WithLogger((&logBuffer{}).logger()))

	get := func(series string) float64 {
		t.Helper()
		v, ok := metric(t, ts.URL, series)
		if !ok {
			t.Fatalf("/metrics lacks %s", series)
		}
		return v
	}
	// Every series exists before any traffic, each result pre-created at 0.
	for _, s := range []string{
		`rlreplica_sync_exchanges_total{result="ok"}`, `rlreplica_sync_exchanges_total{result="failed"}`,
		`rlreplica_sync_exchanges_total{result="timeout"}`, "rlreplica_sync_exchange_duration_seconds_count",
		"rlreplica_sync_exchange_clients_count", "rlreplica_decision_view_age_seconds_count",
		"rlreplica_sync_blind_seconds_total",
	} {
		// The replica pings every interval with no client to sync: on a busy machine a
		// ping may come late or fail to dial, which is blindness; it is only present here.
		if v := get(s); v != 0 && s != "rlreplica_sync_blind_seconds_total" {
			t.Errorf("%s = %v before any traffic, want 0", s, v)
		}
	}

	type phase struct {
		name string
		// before runs before traffic; after, once the traffic is sent.
		before, after func()
		sends         int
		// wait holds until the phase's exchanges are visible: d is the series' change.
		wait func(d func(string) float64) bool
		// check asserts on the deltas of the phase.
		check func(d map[string]float64)
	}
	ok, failed, timeout := `rlreplica_sync_exchanges_total{result="ok"}`, `rlreplica_sync_exchanges_total{result="failed"}`, `rlreplica_sync_exchanges_total{result="timeout"}`
	watched := []string{ok, failed, timeout, "rlreplica_sync_exchange_duration_seconds_count",
		"rlreplica_sync_exchange_duration_seconds_sum", "rlreplica_sync_exchange_clients_count",
		"rlreplica_sync_exchange_clients_sum", "rlreplica_decision_view_age_seconds_count",
		"rlreplica_sync_blind_seconds_total"}
	const pause = 600 * time.Millisecond
	phases := []phase{
		{
			name: "store up", sends: 20,
			wait: func(d func(string) float64) bool { return d(ok) >= 3 },
			check: func(d map[string]float64) {
				// A sync may outlive its 50 ms timeout on a machine busy with other tests; the
				// store up still answers most of them and refuses none.
				if d[failed] != 0 || d[timeout] > d[ok] {
					t.Errorf("%v failed and %v timed-out exchanges against %v ok with the store up, want 0 failed and no more timed out than ok", d[failed], d[timeout], d[ok])
				}
				if d["rlreplica_decision_view_age_seconds_count"] != 20 {
					t.Errorf("view age observed %v times for 20 decisions", d["rlreplica_decision_view_age_seconds_count"])
				}
				// Each exchange carried at most the one client (the bounded design pushes
				// none of a client within its budget).
				if d["rlreplica_sync_exchange_clients_sum"] > d["rlreplica_sync_exchange_clients_count"] {
					t.Errorf("exchanges carried %v clients in %v exchanges, want at most 1 each", d["rlreplica_sync_exchange_clients_sum"], d["rlreplica_sync_exchange_clients_count"])
				}
				if d["rlreplica_sync_blind_seconds_total"] > 0.5 {
					t.Errorf("blind %v s with the store up, want about 0", d["rlreplica_sync_blind_seconds_total"])
				}
			},
		},
		{
			name: "store paused", sends: 20,
			before: srv.Pause,
			after:  func() { time.Sleep(pause) },
			wait:   func(d func(string) float64) bool { return d(timeout)+d(failed) >= 1 },
			check: func(d map[string]float64) {
				if d[timeout] < 1 {
					t.Errorf("%v timed-out exchanges with the store paused, want ≥ 1", d[timeout])
				}
				if d[ok] > 1 { // one may have been under way when the store paused
					t.Errorf("%v ok exchanges with the store paused, want 0", d[ok])
				}
				// The pause lasts at least `pause`; all of it past two intervals is blind.
				if b, want := d["rlreplica_sync_blind_seconds_total"], (pause - 2*interval).Seconds(); b < want*0.9 {
					t.Errorf("blind %.3f s over a %v pause, want ≥ %.3f", b, pause, want*0.9)
				}
			},
		},
		{
			name: "store back", sends: 5,
			before: srv.Resume,
			wait:   func(d func(string) float64) bool { return d(ok) >= 1 },
			check: func(d map[string]float64) {
				if d[ok] < 1 {
					t.Errorf("no ok exchange after the store came back")
				}
			},
		},
	}
	// snapshot reads every watched series from one scrape, so that the figures agree
	// although exchanges go on between scrapes. An exchange is timed, then counted by its
	// result: a scrape between the two sees it timed and not yet counted, so snapshot
	// scrapes again (a few times, 1 ms apart) until every exchange timed so far is counted.
	// One that never agrees is returned as it is, for the check below to fail on.
	snapshot := func() map[string]float64 {
		t.Helper()
		var out map[string]float64
		for range 50 {
			out = map[string]float64{}
			for s, v := range scrape(t, ts.URL) {
				out[s] = v
			}
			if out["rlreplica_sync_exchange_duration_seconds_count"] == out[ok]+out[failed]+out[timeout] {
				break
			}
			time.Sleep(time.Millisecond)
		}
		return out
	}
	for _, p := range phases {
		if p.before != nil {
			p.before()
			time.Sleep(3 * interval) // exchanges sent before the change have ended
		}
		at := snapshot()
		for range p.sends {
			ask(t, ts.URL, "c")
			time.Sleep(2 * time.Millisecond)
		}
		if p.after != nil {
			p.after()
		}
		delta := func(s string) float64 { return get(s) - at[s] }
		if !eventually(3*time.Second, func() bool { return p.wait(delta) }) {
			t.Fatalf("%s: the exchanges did not show within 3 s", p.name)
		}
		now := snapshot()
		d := map[string]float64{}
		for _, s := range watched {
			d[s] = now[s] - at[s]
		}
		// Every exchange is timed, whatever its result.
		if att := d[ok] + d[failed] + d[timeout]; d["rlreplica_sync_exchange_duration_seconds_count"] != att {
			t.Errorf("%s: %v exchanges timed for %v attempted", p.name, d["rlreplica_sync_exchange_duration_seconds_count"], att)
		}
		t.Logf("%s: %v", p.name, d)
		p.check(d)
	}
	// Blindness stops growing once the store is back.
	b0 := get("rlreplica_sync_blind_seconds_total")
	time.Sleep(10 * interval)
	if b1 := get("rlreplica_sync_blind_seconds_total"); b1-b0 > 0.1 {
		t.Errorf("blind grew %.3f s over %v with the store back", b1-b0, 10*interval)
	}
}
