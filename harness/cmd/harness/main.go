// Command harness proves a distributed rate limiter's promises: it reproduces the
// documents' models and drives real replicas under load.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/edgeproof/rlharness/internal/dockerenv"
)

// generatorGC is the collector's target (GOGC) of the harness's process. A load generator
// holds a large live schedule (200,000 clients' IDs and every request's offset) and allocates
// on every request, so at Go's default of 100 the collector took 5-10 % of the sender's CPU in
// harness bench's profiles against Vegeta's 0-9 %; at 400 it took 3.9 %, for a heap that may
// grow to five times what is live. A GOGC the user sets wins.
const generatorGC = 400

func main() {
	dockerenv.Default() // the process's settings are main's to make, not the fleet's
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(generatorGC)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := cancelOnSignal(cancel, os.Stderr, func(code int) { os.Exit(code) })
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	cancel()
	if err == nil {
		return
	}
	code := exitCode(err)
	msg := err.Error()
	if code == exitNotMade && !strings.HasPrefix(msg, "NOT MADE") {
		msg = "NOT MADE: " + msg // no evidence either way, unlike a FAIL
	}
	fmt.Fprintln(os.Stderr, "harness:", msg)
	os.Exit(code)
}

// cancelOnSignal is the one handler of SIGINT and SIGTERM. The first cancels the command's
// context: a run stops its traffic, tears its fleet down and writes what it measured, marked
// interrupted. A second exits at once with 128 + the signal's number. stop uninstalls it.
func cancelOnSignal(cancel context.CancelFunc, w interface{ WriteString(string) (int, error) }, exit func(int)) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case sig := <-sigs:
			w.WriteString(fmt.Sprintf("harness: %s: stopping; tearing the fleet down and writing what was measured (again to exit at once)\n", sig))
			cancel()
		}
		select {
		case <-done:
		case sig := <-sigs:
			w.WriteString(fmt.Sprintf("harness: second %s: exiting without finishing the teardown\n", sig))
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			exit(code)
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
