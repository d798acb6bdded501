package fleet

import "syscall"

// childAttr puts a child in its own process group, so that signals reach
// whatever it forks and a terminal's Ctrl-C reaches only the harness (which
// tears down in order), and has the kernel kill it if the harness dies
// without tearing down.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
