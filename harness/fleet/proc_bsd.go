//go:build unix && !linux

package fleet

import (
	"syscall"
	"time"
)

// childAttr puts a child in its own process group (see proc_linux.go; there
// is no parent-death signal here, so a killed harness can leave children).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitStopped returns at once: there is no /proc to read the threads' state from.
func waitStopped(int, time.Duration) error { return nil }
