package claimtest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	cc "github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
)

// The same quick run with every member in a container (FROM scratch images, ports on
// 127.0.0.1): crashed containers exit with status 3 and the watchdog starts them again.
// About 20 s on 2 cores.
func TestClaimCheckInDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet of containers: not with -short")
	}
	requireDocker(t, "claimcheck", "redis")
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

// requireDocker skips only where Docker is truly absent (no daemon socket, no DOCKER_HOST)
// and never under CI, and builds the images the test needs when they are missing.
func requireDocker(t *testing.T, images ...string) {
	t.Helper()
	if err := exec.Command("docker", "info").Run(); err != nil {
		_, sockErr := os.Stat("/var/run/docker.sock")
		if os.Getenv("CI") == "" && os.Getenv("DOCKER_HOST") == "" && errors.Is(sockErr, os.ErrNotExist) {
			t.Skipf("needs Docker, and there is none here (no /var/run/docker.sock, no DOCKER_HOST): %v", err)
		}
		t.Fatalf("needs Docker (docker info: %v)", err)
	}
	var missing []string
	for _, img := range images {
		if exec.Command("docker", "image", "inspect", "rlharness/"+img+":dev").Run() != nil {
			missing = append(missing, img)
		}
	}
	if len(missing) == 0 {
		return
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "build-images.sh")
	t.Logf("building images %v with %s", missing, script)
	if out, err := exec.Command(script, missing...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", script, missing, err, out)
	}
}
