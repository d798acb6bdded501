package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
)

// modulePath is where the local provider finds targets to build.
const modulePath = "github.com/edgeproof/rlharness"

// LocalProvider runs a fleet as child processes on 127.0.0.1: the host's
// redis-server and the target binary, each on a free port and in its own
// process group. Spec.Network is accepted and ignored: everything is on the
// loopback interface. Pause is SIGSTOP, Unpause SIGCONT.
type LocalProvider struct {
	// RedisServer is the redis-server executable; default BinDir's, else
	// redis-server on PATH, else /usr/bin/redis-server.
	RedisServer string
	// BinDir, when set, holds prebuilt programs (the HS2 kit's bin/): the
	// targets by name (replica, noop, worker, claimcheck), redis-server and
	// redis-cli, used in place of go build and of PATH, so that a machine
	// without Go or Redis installed runs the fleet.
	BinDir string
	// Logger receives the fleet's events; default slog.Default().
	Logger *slog.Logger
}

// Start builds the target if Spec.Binary is empty (or takes it from BinDir),
// starts Redis, then the replicas, and waits until all are healthy. Members'
// output goes to <member>.log in a temporary directory that Terminate removes;
// a member that fails to become ready has the tail of its log in the error.
func (p LocalProvider) Start(ctx context.Context, spec Spec) (Fleet, error) {
	return start(ctx, spec, p.Logger, ProviderLocal, target.StartProcess, &localRun{redisBin: p.RedisServer, binDir: p.BinDir})
}

// localRun is what one fleet holds of the local machine: its backend in start.
type localRun struct {
	log           *slog.Logger
	spec          Spec
	dir           string
	redisBin, bin string
	binDir        string // LocalProvider.BinDir
	rules         string // the rule file's path, written if spec.Rules is set

	mu      sync.Mutex // replicas are added in parallel
	members []*localMember
}

// prepare finds redis-server, removes the directories of killed runs and makes the run's
// directory, naming its owner in it.
func (l *localRun) prepare(_ context.Context, spec Spec, log *slog.Logger) (result.Conditions, error) {
	l.spec, l.log = spec, log
	if spec.StoreCPU > 0 {
		return result.Conditions{}, errors.New("a store with a share of a core (StoreCPU, --store-cpu) needs the docker provider: it is the container's CPU quota")
	}
	var err error
	if l.redisBin == "" && l.binDir != "" && !spec.NoStore {
		if l.redisBin, err = ToolIn(l.binDir, "redis-server"); err != nil {
			return result.Conditions{}, err
		}
	}
	if spec.NoStore {
		l.redisBin = ""
	} else if l.redisBin, err = findRedisServer(l.redisBin); err != nil {
		return result.Conditions{}, err
	}
	if n, err := removeDeadRunDirs(os.TempDir()); err != nil {
		log.Warn("removing the directories of killed runs", "err", err)
	} else if n > 0 {
		log.Info("removed the directories of killed runs", "dirs", n)
	}
	if l.dir, err = OwnedTempDir(spec.RunID); err != nil {
		return result.Conditions{}, fmt.Errorf("create a directory for run %s: %w", spec.RunID, err)
	}
	l.rules = filepath.Join(l.dir, "rules.yaml")
	return spec.conditions(ProviderLocal, NetworkLoopback), nil
}

// A local run's directory is localDirPrefix + run ID + a random suffix under the temporary
// directory; ownerFile in it names the process that made it ("<hostname>/<pid>", as the
// Docker provider's owner label does).
const (
	localDirPrefix = "rlharness-"
	ownerFile      = "owner"
)

// OwnedTempDir makes a run's temporary directory, localDirPrefix + name + a random suffix,
// with the owner file that lets the next local run remove it if this process is killed.
func OwnedTempDir(name string) (string, error) {
	dir, err := os.MkdirTemp("", localDirPrefix+name+"-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerID()+"\n"), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("name the owner of %s: %w", dir, err)
	}
	return dir, nil
}

// removeDeadRunDirs removes the local runs' directories under tmp whose owner no longer
// runs on this host: what a run killed with SIGKILL leaves (its built target and logs,
// 17 MB each). A directory of a live run, of another host or without an owner file (one
// being made, or made by a harness before owners were named) is left alone. It returns how
// many it removed.
func removeDeadRunDirs(tmp string) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(tmp, localDirPrefix+"*"))
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		if !orphaned(map[string]string{LabelOwner: strings.TrimSpace(string(b))}) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// setup builds the target (or finds Spec.Binary) and writes the rule file.
func (l *localRun) setup(ctx context.Context, f *fleet) error {
	var err error
	switch l.bin = l.spec.Binary; {
	case l.bin == "" && l.binDir != "":
		if l.bin, err = ToolIn(l.binDir, l.spec.Target); err != nil {
			return err
		}
	case l.bin == "":
		if l.bin, err = buildTarget(ctx, l.spec.Target, l.dir); err != nil {
			return err
		}
	default:
		l.bin, err = exec.LookPath(l.bin)
	}
	if err != nil {
		return fmt.Errorf("target binary: %w", err)
	}
	f.cond.RedisBinary, f.cond.TargetBinary = l.redisBin, l.bin
	if len(l.spec.Rules) > 0 {
		if err := os.WriteFile(l.rules, l.spec.Rules, 0o644); err != nil {
			return fmt.Errorf("write the rule file: %w", err)
		}
	}
	return nil
}

func (l *localRun) redis(ctx context.Context, port int) (member, string, error) {
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no",
		"--daemonize", "no", "--dir", l.dir,
	}
	m := l.add(RedisMember, l.redisBin, args, childEnv(nil))
	_, err := m.start(ctx)
	return m, loopback(port), err
}

func (l *localRun) node(ctx context.Context, j, _ int, args []string) (member, error) {
	m := l.add(RedisNodeMember(j), l.redisBin, args, childEnv(nil))
	_, err := m.start(ctx)
	return m, err
}

func (l *localRun) dataDir() string { return l.dir }

// proxyHost: the replicas are processes on this host's loopback.
func (l *localRun) proxyHost(context.Context) (string, error) { return "127.0.0.1", nil }

// replica starts replica i; a custom target runs in its own directory with its
// files and environment.
func (l *localRun) replica(ctx context.Context, i int, at layout, redis string) (member, error) {
	spec := l.spec
	if spec.Custom == nil {
		m := l.add(ReplicaMember(i), l.bin, spec.targetArgs(i, loopback(at.ports[i]), redis, l.rules), childEnv(spec.ExtraEnv))
		_, err := m.start(ctx)
		return m, err
	}
	v := spec.customVars(i, at, redis)
	m := l.add(ReplicaMember(i), l.bin, spec.customArgs(v), childEnv(spec.customEnv(v)))
	var err error
	if m.dir, err = spec.writeCustomFiles(l.dir, v); err != nil {
		return m, err
	}
	_, err = m.start(ctx)
	return m, err
}

// withLogs adds the tail of the member's log file to err.
func (l *localRun) withLogs(_ context.Context, m member, err error) error {
	if lm, ok := m.(*localMember); ok {
		return lm.withLog(err)
	}
	return err
}

func (l *localRun) add(name, bin string, args, env []string) *localMember {
	m := &localMember{
		log: l.log, name: name, bin: bin, args: args, env: env, dir: l.dir,
		logPath: filepath.Join(l.dir, name+".log"),
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.members = append(l.members, m)
	return m
}

// teardown stops every member at once, then removes the run's directory.
func (l *localRun) teardown(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := make([]error, len(l.members))
	var wg sync.WaitGroup
	for i, m := range l.members {
		wg.Go(func() { errs[i] = m.stop(ctx, 2*time.Second) })
	}
	wg.Wait()
	errs = append(errs, os.RemoveAll(l.dir))
	return errors.Join(errs...)
}

// localMember is one child process, re-spawned with the same command line
// (and so the same port) by start.
type localMember struct {
	log     *slog.Logger
	name    string
	bin     string
	args    []string
	env     []string
	dir     string
	logPath string

	proc   *process // nil before the first start
	paused bool
}

// process is one spawn of a member.
type process struct {
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	expected atomic.Bool   // the fleet asked it to exit
}

func (p *process) running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// signal signals the member's whole process group.
func (p *process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (m *localMember) start(context.Context) (string, error) {
	if m.proc.running() {
		if m.paused {
			return "", m.unpause(context.Background())
		}
		return "", nil
	}
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", fmt.Errorf("open the log of %s: %w", m.name, err)
	}
	defer logf.Close()
	// Not CommandContext: the member must outlive the context that started it.
	cmd := exec.Command(m.bin, m.args...)
	cmd.Env = m.env
	cmd.Dir = m.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("run %s for %s: %w", m.bin, m.name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		if !p.expected.Load() {
			m.log.Warn("fleet member exited on its own", "member", m.name, "err", err, "log", m.logPath)
		}
		close(p.done)
	}()
	m.proc, m.paused = p, false
	m.log.Debug("fleet member spawned", "member", m.name, "pid", cmd.Process.Pid, "args", strings.Join(m.args, " "))
	return "", nil
}

func (m *localMember) stop(ctx context.Context, grace time.Duration) error {
	p := m.proc
	if !p.running() {
		return nil
	}
	p.expected.Store(true)
	if err := p.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal %s: %w", m.name, err)
	}
	if m.paused {
		// A stopped process acts on SIGTERM only once it continues.
		_ = p.signal(syscall.SIGCONT)
		m.paused = false
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		m.log.Warn("fleet member ignored SIGTERM: killing it", "member", m.name, "grace", grace)
	case <-ctx.Done():
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s: %w", m.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", m.name, p.cmd.Process.Pid)
	}
}

func (m *localMember) kill(ctx context.Context) error {
	p := m.proc
	if !p.running() {
		return nil
	}
	p.expected.Store(true)
	// SIGKILL ends a stopped (paused) process too.
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s: %w", m.name, err)
	}
	m.paused = false
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(stopTimeout):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", m.name, p.cmd.Process.Pid)
	}
}

func (m *localMember) pid(context.Context) (int, error) {
	if !m.proc.running() {
		return 0, fmt.Errorf("%s is not running", m.name)
	}
	return m.proc.cmd.Process.Pid, nil
}

func (m *localMember) pause(context.Context) error {
	if !m.proc.running() {
		return fmt.Errorf("%s is not running", m.name)
	}
	if err := m.proc.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	m.paused = true
	return waitStopped(m.proc.cmd.Process.Pid, stopTimeout)
}

func (m *localMember) unpause(context.Context) error {
	if !m.proc.running() {
		return fmt.Errorf("%s is not running", m.name)
	}
	if err := m.proc.signal(syscall.SIGCONT); err != nil {
		return err
	}
	m.paused = false
	return nil
}

func (m *localMember) exited(context.Context) error {
	p := m.proc
	if p == nil || p.running() {
		return nil
	}
	return fmt.Errorf("%s exited: %s", m.name, p.cmd.ProcessState)
}

// withLog adds the tail of the member's output to err.
func (m *localMember) withLog(err error) error {
	fh, lerr := os.Open(m.logPath)
	if lerr != nil {
		return err
	}
	defer fh.Close()
	return fmt.Errorf("%w\n%s", err, tail(fh, 20))
}

func findRedisServer(path string) (string, error) {
	if path == "" {
		path = "redis-server"
		if _, err := exec.LookPath(path); err != nil {
			path = "/usr/bin/redis-server"
		}
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("redis-server not found (%w): install it with 'apt-get install -y redis-server' or set LocalProvider.RedisServer", err)
	}
	return p, nil
}

// ToolIn finds a program the harness runs on this machine: dir/name when dir is set (a kit
// of prebuilt binaries, --bin-dir), else name on PATH.
func ToolIn(dir, name string) (string, error) {
	if dir == "" {
		return exec.LookPath(name)
	}
	p := filepath.Join(dir, name)
	if _, err := exec.LookPath(p); err != nil {
		return "", fmt.Errorf("--bin-dir %s has no %s that runs (%w): build the kit with scripts/hs2-kit.sh, or leave --bin-dir out to use go build and PATH", dir, name, err)
	}
	return filepath.Abs(p)
}

// toolDir is where the run's host programs (redis-cli) come from: BinDir, or PATH.
func (l *localRun) toolDir() string { return l.binDir }

// buildTarget builds ./targets/cmd/<target> into dir; the go build cache
// makes this quick after the first time.
func buildTarget(ctx context.Context, target, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the %s target needs the go command (%w): install Go or set Spec.Binary", target, err)
	}
	out := filepath.Join(dir, target)
	pkg := modulePath + "/targets/cmd/" + target
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, pkg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s\nrun from the rlharness checkout, or set Spec.Binary to a built target", pkg, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}

// childEnv is this process's environment without the targets' own
// variables, so a stray REPLICA_*, NOOP_* or WORKER_* cannot change a run behind the
// fleet's back, plus extra.
func childEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "REPLICA_") || strings.HasPrefix(kv, "NOOP_") || strings.HasPrefix(kv, "WORKER_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}
