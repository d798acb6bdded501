// Package dockertest is the one rule the Docker tests share: a test that needs Docker skips
// only where Docker is truly absent (no daemon socket, no DOCKER_HOST) and never under CI, and
// the project's images it needs are built when they are missing.
package dockertest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Require skips or fails t when Docker does not answer, then builds any of the images
// (rlharness/<name>:dev) that are missing with scripts/build-images.sh.
func Require(t testing.TB, images ...string) {
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
