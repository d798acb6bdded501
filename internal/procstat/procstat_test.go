package procstat

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// This process's CPU read from /proc agrees with what getrusage says it spent while it spun
// for 150 ms of CPU, and a sleeping process spends next to nothing: the reading is of the
// process asked for, in nanoseconds, whatever the neighbours on the machine do.
func TestReadMeasuresTheProcessCPU(t *testing.T) {
	sleeper := exec.Command("sleep", "5")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	sleep0, err := Read(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	r0 := rusage(t)
	self0, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	spin := 150 * time.Millisecond
	for rusage(t)-r0 < spin {
	}
	self1, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	r1 := rusage(t)
	c, err := self1.Since(self0)
	if err != nil {
		t.Fatal(err)
	}
	if got := r1 - r0; c.CPU < spin-10*time.Millisecond || c.CPU > got+10*time.Millisecond {
		t.Errorf("/proc says %v of CPU, getrusage %v (spun for %v of CPU)", c.CPU, got, spin)
	}
	if c.Cores <= 0 || c.Wall <= 0 {
		t.Errorf("cost %+v", c)
	}
	sleep1, err := Read(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sleep1.Since(sleep0)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU > 20*time.Millisecond {
		t.Errorf("a sleeping process cost %v of CPU over %v", s.CPU, s.Wall)
	}
	if self1.RSS < 1<<20 || sleep1.RSS <= 0 || sleep1.RSS >= self1.RSS {
		t.Errorf("RSS: this test %d B, sleep %d B", self1.RSS, sleep1.RSS)
	}
}

// rusage is this process's user + system CPU so far, as getrusage counts it.
func rusage(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestReadRefusesWhatIsNotAProcess(t *testing.T) {
	for _, pid := range []int{0, -3, 1 << 30} {
		if _, err := Read(pid); err == nil {
			t.Errorf("pid %d: no error", pid)
		}
	}
	if _, err := (Usage{CPU: time.Second, At: time.Unix(10, 0)}).Since(Usage{CPU: 2 * time.Second, At: time.Unix(9, 0)}); err == nil {
		t.Error("CPU that went down was accepted")
	}
}

func TestVMRSS(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"Name:\tx\nVmRSS:\t    4140 kB\nVmData: 1 kB\n", 4140 * 1024, true},
		{"Name:\tkthreadd\n", 0, false},
		{"VmRSS:\t12 MB\n", 0, false},
	} {
		got, err := vmRSS([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%q: %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
