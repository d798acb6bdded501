package claimtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/internal/dockertest"
)

// The same quick run with every member in a container (FROM scratch images, ports on
// 127.0.0.1): crashed containers exit with status 3 and the watchdog starts them again.
// About 20 s on 2 cores.
func TestClaimCheckInDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet of containers: not with -short")
	}
	dockertest.Require(t, "claimcheck", "redis")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	r, err := Run(ctx, fleet.DockerProvider{Logger: log}, Config{
		Events: 200, Rate: 200, Placement: cc.Claim, Deletion: cc.Immediate,
		ProducerCrash: cc.ProducerCrashP, ConsumerCrash: cc.ConsumerCrashP, Seed: model.ClaimSeed,
		Visibility: 500 * time.Millisecond, Drain: time.Minute, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Conditions.Provider != "docker" || r.Conditions.TargetImage != "rlharness/claimcheck:dev" {
		t.Errorf("ran on %+v; want the docker provider and rlharness/claimcheck:dev", r.Conditions)
	}
	if r.Model.ProducerDied+r.Model.ConsumerDied == 0 {
		t.Fatal("the crash plan for 200 events injects no crash: the test proves nothing")
	}
	assertLikeModel(t, r)
}
