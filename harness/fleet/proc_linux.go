package fleet

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// childAttr puts a child in its own process group, so that signals reach
// whatever it forks and a terminal's Ctrl-C reaches only the harness (which
// tears down in order), and has the kernel kill it if the harness dies
// without tearing down.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until every thread of pid is stopped (state T in /proc), so that a
// paused member answers nothing from the moment Pause returns: SIGSTOP takes effect
// asynchronously, and a thread already running could still serve a request.
func waitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		stopped, err := allStopped(pid)
		if err != nil || stopped {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d not stopped %v after SIGSTOP", pid, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

func allStopped(pid int) (bool, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false, fmt.Errorf("read the threads of pid %d: %w", pid, err)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue // the thread exited
		}
		// The state follows the command name, which is in parentheses and may hold spaces.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		if st := b[i+2]; st != 'T' && st != 't' && st != 'Z' && st != 'X' {
			return false, nil
		}
	}
	return true, nil
}
