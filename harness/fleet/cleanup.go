package fleet

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/testcontainers/testcontainers-go"
)

// Cleanup removes the Docker containers and networks that killed runs left
// behind: those labelled rlharness=1 whose owner process (label
// rlharness.owner, "<hostname>/<pid>") no longer runs on this host. Runs of
// live processes, on this host or another, are left alone. DockerProvider.Start
// calls it; a command line may call it on its own.
func Cleanup(ctx context.Context) error {
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	return cleanupOrphans(ctx, cli, slog.Default())
}

func cleanupOrphans(ctx context.Context, cli *testcontainers.DockerClient, log *slog.Logger) error {
	n, err := removeLabelled(ctx, cli, LabelFleet+"=1", func(labels map[string]string) bool { return !orphaned(labels) })
	if n > 0 {
		log.Info("removed leftovers of killed runs", "resources", n)
	}
	return err
}

var (
	ownerOnce sync.Once
	owner     string
)

// ownerID names this process in labels: "<hostname>/<pid>".
func ownerID() string {
	ownerOnce.Do(func() {
		host, _ := os.Hostname()
		owner = host + "/" + strconv.Itoa(os.Getpid())
	})
	return owner
}

// orphaned says whether the process that labelled a resource is gone: its
// owner label names this host and a pid that no longer runs, or it has no
// owner label at all.
func orphaned(labels map[string]string) bool {
	o, ok := labels[LabelOwner]
	if !ok {
		return true
	}
	host, pidText, ok := strings.Cut(o, "/")
	self, _ := os.Hostname()
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return true
	}
	if host != self {
		return false
	}
	return !processAlive(pid)
}
