// Package procstat reads what a process of this host has cost so far from /proc: the CPU
// time of its threads and its resident memory. The bench reads a replica's, Redis's and its
// own around a steady run, so that a cost per request is measured, not worked out from a
// formula.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Usage is a process's cost so far, read at At.
type Usage struct {
	At time.Time
	// CPU is the time its live threads have spent on a CPU (the sum of each thread's
	// /proc/PID/task/TID/schedstat, in nanoseconds): a thread that exited is not counted,
	// which a Go program, Redis and the targets the harness runs do not do while they serve.
	CPU time.Duration
	// RSS is its resident set (VmRSS of /proc/PID/status), in bytes.
	RSS int64
}

// Read reads pid's usage; Self is this process's.
func Read(pid int) (Usage, error) {
	if pid <= 0 {
		return Usage{}, fmt.Errorf("process id %d: want a process of this host", pid)
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	u := Usage{At: time.Now()}
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return Usage{}, fmt.Errorf("read the threads of process %d from /proc (a Linux host that sees the process: Docker on this host, not in a VM): %w", pid, err)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "schedstat"))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return Usage{}, fmt.Errorf("process %d thread %s: %w", pid, t.Name(), err)
		}
		ns, err := firstField(b)
		if err != nil {
			return Usage{}, fmt.Errorf("process %d thread %s schedstat %q: %w", pid, t.Name(), bytes.TrimSpace(b), err)
		}
		u.CPU += time.Duration(ns)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return Usage{}, fmt.Errorf("read the status of process %d: %w", pid, err)
	}
	if u.RSS, err = vmRSS(status); err != nil {
		return Usage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return u, nil
}

// Self is this process's usage.
func Self() (Usage, error) { return Read(os.Getpid()) }

func firstField(b []byte) (int64, error) {
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0, errors.New("empty")
	}
	return strconv.ParseInt(string(f[0]), 10, 64)
}

// vmRSS reads VmRSS (kB) of a /proc/PID/status text, in bytes.
func vmRSS(status []byte) (int64, error) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		v, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("VmRSS %q: want a number of kB", bytes.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS %q: %w", bytes.TrimSpace(v), err)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no VmRSS in its status (a zombie, or a kernel thread)")
}

// Cost is what a process spent between two readings.
type Cost struct {
	CPU, Wall time.Duration
	// Cores is CPU over Wall: the share of one core the process kept busy.
	Cores float64
}

// Since is what the process cost between before and u. A reading whose CPU went down is
// of another process (the member restarted in between), and is refused.
func (u Usage) Since(before Usage) (Cost, error) {
	c := Cost{CPU: u.CPU - before.CPU, Wall: u.At.Sub(before.At)}
	if c.CPU < 0 || c.Wall <= 0 {
		return Cost{}, fmt.Errorf("the readings go backwards (CPU %v to %v over %v): the process started again between them", before.CPU, u.CPU, c.Wall)
	}
	c.Cores = c.CPU.Seconds() / c.Wall.Seconds()
	return c, nil
}
