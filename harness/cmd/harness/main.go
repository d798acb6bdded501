// Command harness proves a distributed rate limiter's promises: it reproduces the
// documents' models and drives real replicas under load.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "harness:", err)
	var gate *gateError
	if errors.As(err, &gate) {
		os.Exit(1)
	}
	os.Exit(2)
}

// gateError is a run that completed but failed a check: exit 1, unlike a usage or
// infrastructure error (exit 2).
type gateError struct{ msg string }

func (e *gateError) Error() string { return e.msg }
