// Package redistest starts a real redis-server for tests: never a mock of Redis.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server child process on a loopback port.
type Server struct {
	Addr string
	Port int
	bin  string
	args []string // redis-server's flags; nil: a plain server
	cmd  *exec.Cmd
	t    testing.TB
}

// Start runs redis-server on a free 127.0.0.1 port without persistence and stops it when the
// test ends. Where redis-server is missing the test is skipped, except under CI (env CI set),
// where that is a failure: CI installs it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := lookPath(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, t: t}
	s.bin = bin
	s.start()
	t.Cleanup(func() { s.kill() })
	return s
}

// lookPath finds a Redis binary, or skips the test (fails it under CI) without one.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found on PATH; CI must install it (apt-get install -y redis-server)", name)
		}
		t.Skipf("%s not found on PATH: install it (apt-get install -y redis-server) to run this test", name)
	}
	return bin
}

func (s *Server) start() {
	s.t.Helper()
	args := s.args
	if args == nil {
		args = []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"}
	}
	s.cmd = exec.Command(s.bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.wait()
}

func (s *Server) wait() {
	s.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not answer PING: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() { s.kill() }

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts the server again, empty, on the same port.
func (s *Server) Restart() {
	s.t.Helper()
	s.kill()
	s.start()
}

// Pause freezes the server (SIGSTOP): connections stay open, nothing answers.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume lets a paused server go on (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil || s.cmd.Process == nil {
		s.t.Fatalf("redis-server on %s is not running", s.Addr)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal redis-server: %v", fmt.Errorf("%v: %w", sig, err))
	}
}
