// Package dockertest is the one rule the Docker tests share: a test that needs Docker skips
// only where Docker is truly absent (no daemon socket, no DOCKER_HOST) and never under CI, and
// the project's images it needs are built when they are missing.
package dockertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ModuleRoot is the folder of the go.mod above the working directory (a test runs in its
// package's folder). It does not read the source file's path, which -trimpath (make test
// builds with it, so that a fresh clone reuses the build cache) turns into a module path.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run the tests inside the module", dir)
		}
	}
}

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
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "build-images.sh")
	t.Logf("building images %v with %s", missing, script)
	if out, err := exec.Command(script, missing...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", script, missing, err, out)
	}
}
