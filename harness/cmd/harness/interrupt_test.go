package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/internal/dockertest"
)

// buildHarness builds this command into a temporary directory.
func buildHarness(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the harness needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "harness")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// processesOf lists the live processes whose command line holds s, but not this one.
func processesOf(t *testing.T, s string) []string {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || filepath.Base(d) == strconv.Itoa(os.Getpid()) {
			continue
		}
		if cl := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cl, s) {
			out = append(out, filepath.Base(d)+": "+cl)
		}
	}
	return out
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// containers lists the containers, running or not, that match a docker ps filter.
func containers(t *testing.T, filter string) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", filter).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// running is a harness loadtest started as a process, with its output.
type running struct {
	cmd            *exec.Cmd
	exited         chan error
	stdout, stderr lockedBuffer
}

// lockedBuffer is a buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLoadtest starts bin loadtest args in the checkout root (the local provider builds the
// replica from it) with TMPDIR=tmp, and kills it when the test ends.
func startLoadtest(t *testing.T, bin, root, tmp string, args ...string) *running {
	t.Helper()
	r := &running{cmd: exec.Command(bin, append([]string{"loadtest"}, args...)...), exited: make(chan error, 1)}
	r.cmd.Dir = root
	r.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	return r
}

// waitOutcomes waits until the outcome file at path holds more than size bytes: the traffic
// flows. The test fails when the run ends first, or after 3 minutes.
func (r *running) waitOutcomes(t *testing.T, path string, size int64) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; {
		if st, err := os.Stat(path); err == nil && st.Size() > size {
			return
		}
		select {
		case err := <-r.exited:
			t.Fatalf("the run ended before its traffic flowed: %v\n%s\n%s", err, r.stdout.String(), r.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no traffic after 3 minutes:\n%s\n%s", r.stdout.String(), r.stderr.String())
		}
	}
}

// A real run, interrupted mid-traffic: one SIGINT tears the fleet down and leaves a
// summary.json marked interrupted with what was measured; a second exits at once.
func TestInterruptedRun(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("the local provider needs redis-server: %v", err)
	}
	bin := buildHarness(t)
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		provider string
		signals  int
		code     int
		within   time.Duration // from the first signal to the exit
	}{
		{"local once", "local", 1, 1, 60 * time.Second},
		{"local twice", "local", 2, 128 + int(syscall.SIGINT), 5 * time.Second},
		{"docker once", "docker", 1, 1, 60 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.provider == "docker" {
				dockertest.Require(t, "replica", "redis")
			}
			tmp, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
			run := startLoadtest(t, bin, root, tmp, "--provider", tt.provider, "--network", "host", "--replicas", "2",
				"--only", "sliding_window/delayed", "--time-scale", "0.05", "--rate", "100", "--clients", "1000", "--out", out)
			cmd, exited, stdout, stderr := run.cmd, run.exited, &run.stdout, &run.stderr
			// Interrupt once the traffic flows: outcomes are being written.
			run.waitOutcomes(t, filepath.Join(out, "sliding_window_delayed", "outcomes.csv"), 0)
			// What the run left: its local processes, or its containers.
			var left func() []string
			if tt.provider == "local" {
				// The replicas run from the fleet's directory; Redis renames its process to its
				// address ("redis-server 127.0.0.1:port"), which the replicas are given.
				replicas := processesOf(t, tmp)
				if len(replicas) != 2 {
					t.Fatalf("want 2 replicas running under %s before the signal, found %v", tmp, replicas)
				}
				_, redisAddr, _ := strings.Cut(replicas[0], "--redis ")
				redisAddr, _, _ = strings.Cut(redisAddr, " ")
				left = func() []string { return append(processesOf(t, tmp), processesOf(t, "redis-server "+redisAddr)...) }
			} else {
				// Containers are labelled with the harness's pid as their owner.
				owner := "label=rlharness.owner=" + hostname(t) + "/" + strconv.Itoa(cmd.Process.Pid)
				left = func() []string { return containers(t, owner) }
			}
			if n := len(left()); n != 3 {
				t.Fatalf("want Redis and 2 replicas of the run before the signal, found %d: %v", n, left())
			}
			sent := time.Now()
			for i := range tt.signals {
				if i > 0 {
					// The next signal once the harness has taken the first: two sent a few ms
					// apart to a process the loaded machine has not scheduled arrive as one.
					for end := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "stopping;") && time.Now().Before(end); {
						time.Sleep(5 * time.Millisecond)
					}
				}
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			var waitErr error
			select {
			case waitErr = <-exited:
			case <-time.After(tt.within + 5*time.Second):
				t.Fatalf("still running %s after the signal:\n%s\n%s", tt.within+5*time.Second, stdout.String(), stderr.String())
			}
			took := time.Since(sent)
			var ee *exec.ExitError
			if !errors.As(waitErr, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("exit %v, want code %d\n%s", waitErr, tt.code, stderr.String())
			}
			if took > tt.within {
				t.Errorf("exited %s after the signal, want within %s", took.Round(time.Millisecond), tt.within)
			}
			// Members go with the harness (a teardown, or the kernel's parent-death signal).
			var rest []string
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if rest = left(); len(rest) == 0 {
					break
				}
			}
			if len(rest) > 0 {
				t.Errorf("members of the run left behind: %v", rest)
			}
			if tt.signals > 1 {
				return // exited at once: no promise about the summary
			}
			sum, err := result.Read[result.Summary](out, result.SummaryFile)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if !sum.Interrupted || sum.Pass || len(sum.Scenarios) != 1 {
				t.Fatalf("summary: interrupted %v, pass %v, %d scenarios; want interrupted, not passed, 1 scenario", sum.Interrupted, sum.Pass, len(sum.Scenarios))
			}
			if sc := sum.Scenarios[0]; sc.Requests == 0 || sc.Accepted == 0 {
				t.Errorf("the interrupted scenario kept nothing of what was measured: %d requests, %d accepted (error %q)", sc.Requests, sc.Accepted, sc.Error)
			}
			if entries, _ := filepath.Glob(filepath.Join(tmp, "rlharness-*")); len(entries) != 0 {
				t.Errorf("the fleet's directories are left: %v", entries)
			}
		})
	}
}
