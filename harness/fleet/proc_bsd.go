//go:build unix && !linux

package fleet

import "syscall"

// childAttr puts a child in its own process group (see proc_linux.go; there
// is no parent-death signal here, so a killed harness can leave children).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
