//go:build unix

package traffic

import (
	"math"
	"syscall"
)

// openFileLimit is the process's open-file limit (RLIMIT_NOFILE's soft limit, which the Go
// runtime raises to the hard limit at start); 0 when it cannot be read.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(min(r.Cur, math.MaxInt32))
}
