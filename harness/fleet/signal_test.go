package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalTeardown runs a fleet in a child process, sends it SIGTERM and
// checks that the child tore the fleet down and then died of the signal.
func TestSignalTeardown(t *testing.T) {
	for _, provider := range []string{"local", "docker"} {
		t.Run(provider, func(t *testing.T) {
			var check func(run string)
			if provider == "docker" {
				cli := requireDocker(t)
				check = func(run string) {
					if cs, ns := labelled(t, cli, LabelRun+"="+run); len(cs)+len(ns) > 0 {
						t.Errorf("left behind: containers %v, networks %v", cs, ns)
					}
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalTeardownChild$")
			cmd.Env = append(os.Environ(), "FLEET_SIGNAL_CHILD="+provider)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			ready := make(chan []string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "READY" {
						ready <- f[1:]
					}
				}
				close(ready)
			}()
			var fields []string
			select {
			case fields = <-ready:
			case <-time.After(45 * time.Second):
			}
			if fields == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child did not start its fleet:\n%s", stderr.String())
			}
			run, redisAddr, url := fields[0], fields[1], fields[2]
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("child ended with %v, want death by SIGTERM", err)
			}
			if !strings.Contains(stderr.String(), "fleet terminated") {
				t.Errorf("child did not tear the fleet down:\n%s", stderr.String())
			}
			ctx := context.Background()
			if Ping(ctx, redisAddr, 300*time.Millisecond) == nil || Healthz(ctx, url) == nil {
				t.Errorf("fleet still answers after the signal")
			}
			if check != nil {
				check(run)
			}
		})
	}
}

// TestSignalTeardownChild is the child of TestSignalTeardown.
func TestSignalTeardownChild(t *testing.T) {
	provider := os.Getenv("FLEET_SIGNAL_CHILD")
	if provider == "" {
		t.Skip("runs only as the child process of TestSignalTeardown")
	}
	ctx := context.Background()
	p, err := NewProvider(provider, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Start(ctx, Spec{Replicas: 1, Target: TargetNoop})
	if err != nil {
		t.Fatal(err)
	}
	stop := InstallSignalTeardown(ctx, f)
	defer stop()
	fmt.Printf("READY %s %s %s\n", f.Conditions().RunID, f.RedisAddr(), f.ReplicaURLs()[0])
	time.Sleep(40 * time.Second)
	t.Error("no signal came")
	_ = f.Terminate(ctx)
}
