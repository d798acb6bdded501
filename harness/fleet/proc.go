package fleet

import (
	"errors"
	"syscall"
)

// processAlive says whether pid names a running process (EPERM: it runs,
// as someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
