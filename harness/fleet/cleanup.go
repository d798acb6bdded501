package fleet

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// teardownTimeout bounds the teardown a signal triggers.
const teardownTimeout = 30 * time.Second

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

// InstallSignalTeardown terminates f when the process receives SIGINT or
// SIGTERM, so that a load test interrupted from the keyboard or by a
// scheduler leaves no containers or processes behind. After the teardown
// the signal is raised again with its default action, so the process ends
// as the signal intends; a second signal during the teardown exits at once.
// A program that wants to outlive the signal (to write partial results)
// should instead cancel a context with signal.NotifyContext and call
// Terminate itself.
//
// The returned stop, or the end of ctx, uninstalls the handler; stop waits
// for a teardown in progress.
func InstallSignalTeardown(ctx context.Context, f Fleet) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	var done sync.WaitGroup
	done.Go(func() {
		defer signal.Stop(sigs)
		var sig os.Signal
		select {
		case <-ctx.Done():
			return
		case <-quit:
			return
		case sig = <-sigs:
		}
		slog.Warn("signal received: tearing the fleet down", "signal", sig.String(), "run", f.Conditions().RunID)
		go func() {
			second := <-sigs
			slog.Error("second signal: exiting without finishing the teardown", "signal", second.String())
			os.Exit(exitCode(second))
		}()
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if err := f.Terminate(tctx); err != nil {
			slog.Error("teardown after signal failed", "err", err)
		}
		signal.Reset(sig)
		raise(sig)
		// If the signal did not end the process (someone else handles it too),
		// end it as the signal would have.
		time.Sleep(time.Second)
		os.Exit(exitCode(sig))
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		done.Wait()
	}
}

func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
