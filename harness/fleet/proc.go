package fleet

import (
	"errors"
	"os"
	"syscall"
)

// processAlive says whether pid names a running process (EPERM: it runs,
// as someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// raise sends sig to this process.
func raise(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}
