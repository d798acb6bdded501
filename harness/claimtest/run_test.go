package claimtest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
)

// A quick run on real Redis and real processes: the fault window's crashes on 400 events
// of the claim + immediate-delete pipeline. The crashes are the model's plan, so orphans
// and crashes must equal the model's, and every acknowledged event is processed once.
func TestClaimCheckOnRealRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH; CI must install it (apt-get install -y redis-server)")
		}
		t.Skip("redis-server not on PATH: install it (apt-get install -y redis-server)")
	}
	if testing.Short() {
		t.Skip("starts a fleet of processes: not with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	r, err := Run(ctx, fleet.LocalProvider{Logger: log}, Config{
		Events: 400, Rate: 200, Placement: cc.Claim, Deletion: cc.Immediate,
		ProducerCrash: cc.ProducerCrashP, ConsumerCrash: cc.ConsumerCrashP, Seed: model.ClaimSeed,
		Visibility: 500 * time.Millisecond, Drain: time.Minute, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	assertLikeModel(t, r)
}

// assertLikeModel checks a fault-window run of the claim + immediate-delete pipeline against
// the model with a ledger for the same events: the crashes are the model's plan, so orphans
// and crashes must be the model's, nothing dangles or is lost, and every check passes.
func assertLikeModel(t *testing.T, r result.ClaimRun) {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	t.Log(b.String())
	for _, c := range r.Checks {
		if !c.Pass {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
	m, want := r.Measured, r.Predicted
	if m.Orphans != want.Orphans || m.ProducerCrashes != want.ProducerDied || m.ConsumerCrashes != want.ConsumerDied ||
		m.Dangling != 0 || m.Lost != 0 || m.Processed != want.Processed {
		t.Errorf("measured %+v; want the model with a ledger: %d orphans, %d/%d crashes, %d processed, none dangling or lost",
			m, want.Orphans, want.ProducerDied, want.ConsumerDied, want.Processed)
	}
	if m.Duplicates < want.Duplicates {
		t.Errorf("%d duplicates prevented; every consumer crash is one (%d)", m.Duplicates, want.Duplicates)
	}
	if m.EntryBytes != int64(m.StreamEntries*cc.MessageBytes(cc.Claim)) {
		t.Errorf("stream entries carry %d bytes in %d entries; want %d each", m.EntryBytes, m.StreamEntries, cc.MessageBytes(cc.Claim))
	}
	for _, want := range []string{"measured in Redis", "resent after a refused or broken connection"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the rendering lacks %q", want)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
