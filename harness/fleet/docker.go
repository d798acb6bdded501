package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/edgeproof/rlharness/harness/target"
)

// Images scripts/build-images.sh builds.
const (
	DefaultRedisImage   = "rlharness/redis:dev"
	DefaultReplicaImage = "rlharness/replica:dev"
	DefaultNoopImage    = "rlharness/noop:dev"
	DefaultWorkerImage  = "rlharness/worker:dev"
)

// Inside a bridge network every member listens on its image's usual port and
// replicas find Redis by its network alias, which survives restarts.
const (
	redisAlias     = "redis"
	redisPort      = 6379
	targetPort     = 8080
	containerRules = "/etc/rlharness/rules.yaml"
)

// DockerProvider runs a fleet as containers built by scripts/build-images.sh.
// No image is ever pulled: a missing image is an error that says how to build it.
type DockerProvider struct {
	// RedisImage defaults to rlharness/redis:dev.
	RedisImage string
	// Logger receives the fleet's events; testcontainers' own at Debug level.
	// Default slog.Default().
	Logger *slog.Logger
}

// Start starts Redis, then the replicas, each in its own container labelled
// rlharness=1 and rlharness.run=<run id>, and waits until all are healthy.
// Leftovers of killed runs are removed first (Cleanup).
func (p DockerProvider) Start(ctx context.Context, spec Spec) (_ Fleet, err error) {
	begin := time.Now()
	spec, err = spec.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("fleet spec: %w", err)
	}
	if err := spec.customFor("docker", target.StartDocker); err != nil {
		return nil, err
	}
	log := loggerOr(p.Logger).With("provider", "docker")
	redisImage := p.RedisImage
	if redisImage == "" {
		redisImage = DefaultRedisImage
	}
	targetImage := spec.Image
	if targetImage == "" {
		targetImage = "rlharness/" + spec.Target + ":dev"
	}

	cli, err := dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	if err := cleanupOrphans(ctx, cli, log); err != nil {
		log.Warn("could not remove leftovers of earlier runs", "err", err)
	}
	for _, img := range []string{redisImage, targetImage} {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			if cerrdefs.IsNotFound(err) {
				return nil, fmt.Errorf("docker image %s not found: run scripts/build-images.sh (this machine pulls nothing from a registry)", img)
			}
			return nil, fmt.Errorf("inspect docker image %s: %w", img, err)
		}
	}

	cond := spec.conditions("docker", spec.Network)
	cond.RedisImage, cond.TargetImage = redisImage, targetImage
	f := newFleet(log, cond, spec.Replicas)
	d := &dockerRun{cli: cli, log: log, spec: spec}
	f.teardown = d.teardown
	defer func() {
		if err != nil {
			// Leave nothing behind, whatever ctx says now.
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if terr := f.Terminate(tctx); terr != nil {
				log.Error("could not clean up a fleet that failed to start", "run", spec.RunID, "err", terr)
			}
		}
	}()

	ports, err := freePorts(1 + spec.Replicas)
	if err != nil {
		return nil, err
	}
	if spec.Network == NetworkBridge {
		d.network, err = tcnetwork.New(ctx, tcnetwork.WithLabels(d.labels("")))
		if err != nil {
			return nil, fmt.Errorf("create docker network for run %s: %w", spec.RunID, err)
		}
	}

	redisTarget, err := d.startStore(ctx, f, redisImage, ports[0])
	if err != nil {
		return nil, err
	}

	env := make(map[string]string, len(spec.ExtraEnv))
	for k, v := range spec.ExtraEnv {
		env[k] = v
	}
	innerPort := targetPort
	if spec.Custom != nil {
		innerPort = spec.Custom.Port
		f.health = spec.Custom.Health
		d.files = make(map[string][]testcontainers.ContainerFile, spec.Replicas)
		for i := range spec.Replicas {
			d.files[ReplicaMember(i)] = spec.customFiles(spec.customVars(i, ports[1+i], redisTarget))
		}
	}
	errs := make([]error, spec.Replicas)
	var wg sync.WaitGroup
	for i := range spec.Replicas {
		port := ports[1+i]
		f.setAddr(1+i, loopback(port))
		listen := ":" + strconv.Itoa(innerPort)
		if spec.Network == NetworkHost {
			listen = loopback(port)
		}
		args := spec.targetArgs(i, listen, redisTarget, containerRules)
		menv := env
		if spec.Custom != nil {
			menv = spec.customEnv(spec.customVars(i, port, redisTarget))
		}
		wg.Go(func() {
			m, err := d.run(ctx, ReplicaMember(i), targetImage, args, menv, innerPort, port)
			f.members[1+i] = m
			if err == nil {
				err = f.waitReady(ctx, 1+i)
				if err != nil {
					err = d.withLogs(ctx, m, err)
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f.started(begin)
	return f, nil
}

// startStore starts the counter store, one Redis or a cluster, and returns the address
// the replicas reach it on.
func (d *dockerRun) startStore(ctx context.Context, f *fleet, image string, port int) (string, error) {
	if d.spec.Store == StoreCluster {
		// Nodes tell clients and each other their own addresses: on host networking those are
		// the 127.0.0.1 ports the host and the replicas reach too.
		if d.spec.Network != NetworkHost {
			return "", fmt.Errorf("a Redis Cluster store runs on host networking only (--network host): its nodes announce their own addresses")
		}
		err := f.startCluster(ctx, d.spec, "/tmp", func(j, p int, args []string) (member, error) {
			return d.run(ctx, RedisNodeMember(j), image, args, nil, p, p)
		})
		return f.RedisAddr(), err
	}
	redisArgs := []string{"--save", "", "--appendonly", "no", "--protected-mode", "no"}
	redisTarget := redisAlias + ":" + strconv.Itoa(redisPort)
	if d.spec.Network == NetworkHost {
		redisArgs = append(redisArgs, "--bind", "127.0.0.1", "--port", strconv.Itoa(port))
		redisTarget = loopback(port)
	} else {
		redisArgs = append(redisArgs, "--bind", "0.0.0.0", "--port", strconv.Itoa(redisPort))
	}
	f.setAddr(0, loopback(port))
	var err error
	f.members[0], err = d.run(ctx, RedisMember, image, redisArgs, nil, redisPort, port)
	if err != nil {
		return "", err
	}
	if err := f.waitReady(ctx, 0); err != nil {
		return "", d.withLogs(ctx, f.members[0], err)
	}
	return redisTarget, nil
}

// dockerRun is what one fleet holds of Docker.
type dockerRun struct {
	cli     *testcontainers.DockerClient
	log     *slog.Logger
	spec    Spec
	network *testcontainers.DockerNetwork             // nil in host mode
	files   map[string][]testcontainers.ContainerFile // a custom target's files, by member; read-only once members start
}

func (d *dockerRun) labels(member string) map[string]string {
	l := map[string]string{
		LabelFleet: "1",
		LabelRun:   d.spec.RunID,
		LabelOwner: ownerID(),
	}
	if member != "" {
		l[LabelMember] = member
	}
	return l
}

// run creates and starts one member's container. In bridge mode the
// container port is published on 127.0.0.1:hostPort, fixed so that the
// address stays the same after a stop and start; in host mode the member
// listens on hostPort itself.
func (d *dockerRun) run(ctx context.Context, name, image string, args []string, env map[string]string, port, hostPort int) (member, error) {
	req := testcontainers.ContainerRequest{
		Image:  image,
		Name:   "rlharness-" + d.spec.RunID + "-" + name,
		Cmd:    args,
		Env:    env,
		Labels: d.labels(name),
	}
	if name != RedisMember && !strings.HasPrefix(name, "redis-node-") && len(d.spec.Rules) > 0 {
		req.Files = []testcontainers.ContainerFile{{
			Reader:            bytes.NewReader(d.spec.Rules),
			ContainerFilePath: containerRules,
			FileMode:          0o444,
		}}
	}
	req.Files = append(req.Files, d.files[name]...)
	if d.network != nil {
		req.Networks = []string{d.network.Name}
		if name == RedisMember {
			req.NetworkAliases = map[string][]string{d.network.Name: {redisAlias}}
		}
		cport, _ := mobynet.PortFrom(uint16(port), mobynet.TCP)
		req.ExposedPorts = []string{cport.String()}
		req.HostConfigModifier = func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{cport: {{
				HostIP:   netip.AddrFrom4([4]byte{127, 0, 0, 1}),
				HostPort: strconv.Itoa(hostPort),
			}}}
		}
	} else {
		req.HostConfigModifier = func(hc *container.HostConfig) { hc.NetworkMode = "host" }
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req,
		Started:          true,
		Logger:           tcLogger{d.log},
	})
	if err != nil {
		// A container created but not started still carries the run label:
		// teardown finds it.
		return nil, fmt.Errorf("start %s container from %s: %w", name, image, err)
	}
	dc := ctr.(*testcontainers.DockerContainer)
	return &dockerMember{cli: d.cli, ctr: dc, port: port, bridge: d.network != nil}, nil
}

// withLogs adds the tail of a member's output to a readiness error: that is
// where a replica says why it is not ready.
func (d *dockerRun) withLogs(ctx context.Context, m member, err error) error {
	dm, ok := m.(*dockerMember)
	if !ok || dm == nil {
		return err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rc, lerr := dm.ctr.Logs(lctx)
	if lerr != nil {
		return err
	}
	defer rc.Close()
	return fmt.Errorf("%w\n%s", err, tail(rc, 20))
}

// teardown removes every container and the network of the run, found by
// label as well as by handle so that a half-started run goes too.
func (d *dockerRun) teardown(ctx context.Context) error {
	var errs []error
	if _, err := removeLabelled(ctx, d.cli, LabelRun+"="+d.spec.RunID, nil); err != nil {
		errs = append(errs, err)
	}
	if d.network != nil {
		if err := d.network.Remove(ctx); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", d.network.Name, err))
		}
	}
	return errors.Join(errs...)
}

// dockerMember is one container of a fleet.
type dockerMember struct {
	cli    *testcontainers.DockerClient
	ctr    *testcontainers.DockerContainer
	port   int // inside the container
	bridge bool
	paused bool
}

func (m *dockerMember) stop(ctx context.Context, grace time.Duration) error {
	if m.paused {
		// A paused process cannot act on SIGTERM.
		if err := m.unpause(ctx); err != nil {
			return err
		}
	}
	return m.ctr.Stop(ctx, &grace)
}

func (m *dockerMember) start(ctx context.Context) (string, error) {
	st, err := m.ctr.State(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case st.Paused:
		m.paused = true
		return "", m.unpause(ctx)
	case st.Running:
		return "", nil
	}
	if err := m.ctr.Start(ctx); err != nil {
		return "", err
	}
	if !m.bridge {
		return "", nil
	}
	// Bindings are fixed, but read back what Docker did rather than assume.
	ins, err := m.ctr.Inspect(ctx)
	if err != nil {
		return "", err
	}
	cport, _ := mobynet.PortFrom(uint16(m.port), mobynet.TCP)
	for _, b := range ins.NetworkSettings.Ports[cport] {
		if b.HostIP.IsLoopback() {
			return loopback(mustAtoi(b.HostPort)), nil
		}
	}
	return "", fmt.Errorf("container %s has no port published on 127.0.0.1 after start", m.ctr.GetContainerID()[:12])
}

func (m *dockerMember) exited(ctx context.Context) error {
	st, err := m.ctr.State(ctx)
	if err != nil || st.Running {
		return nil // unknown is not dead: let the probe decide
	}
	msg := fmt.Sprintf("container %s %s with code %d", m.ctr.GetContainerID()[:12], st.Status, st.ExitCode)
	if st.Error != "" {
		msg += ": " + st.Error
	}
	return errors.New(msg)
}

func (m *dockerMember) pause(ctx context.Context) error {
	if _, err := m.cli.ContainerPause(ctx, m.ctr.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		return err
	}
	m.paused = true
	return nil
}

func (m *dockerMember) unpause(ctx context.Context) error {
	if _, err := m.cli.ContainerUnpause(ctx, m.ctr.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return err
	}
	m.paused = false
	return nil
}

// errReaper is what a fleet says when Testcontainers would start its reaper: the reaper's
// image must be pulled, and the fleet cleans up by label itself.
var errReaper = errors.New("Testcontainers' reaper (Ryuk) is enabled, and its image cannot be pulled without a registry: " +
	"set TESTCONTAINERS_RYUK_DISABLED=true (the harness and its test binaries set it when unset); the fleet removes its containers by label")

// dockerClient connects to the Docker daemon the way testcontainers does.
func dockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	// testcontainers-go reads its settings from the environment and the properties file only,
	// once per process; the fleet changes neither, and says what to set.
	if !testcontainers.ReadConfig().Config.RyukDisabled {
		return nil, errReaper
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the Docker daemon (is it running, and may this user use it? or use the local provider): %w", err)
	}
	return cli, nil
}

// removeLabelled force-removes the containers that carry label (key=value)
// and for which keep returns false, then the networks likewise; it returns
// how many it removed.
func removeLabelled(ctx context.Context, cli *testcontainers.DockerClient, label string, keep func(labels map[string]string) bool) (int, error) {
	filters := make(client.Filters).Add("label", label)
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filters})
	if err != nil {
		return 0, fmt.Errorf("list containers labelled %s: %w", label, err)
	}
	var removed atomic.Int64
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range ctrs.Items {
		if keep != nil && keep(c.Labels) {
			continue
		}
		wg.Go(func() {
			_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			switch {
			case err == nil:
				removed.Add(1)
			case !cerrdefs.IsNotFound(err):
				mu.Lock()
				errs = append(errs, fmt.Errorf("remove container %s: %w", strings.Join(c.Names, ","), err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: filters})
	if err != nil {
		return int(removed.Load()), errors.Join(append(errs, fmt.Errorf("list networks labelled %s: %w", label, err))...)
	}
	for _, n := range nets.Items {
		if keep != nil && keep(n.Labels) {
			continue
		}
		_, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		switch {
		case err == nil:
			removed.Add(1)
		case !cerrdefs.IsNotFound(err):
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return int(removed.Load()), errors.Join(errs...)
}

// tcLogger sends testcontainers' messages to slog at Debug level.
type tcLogger struct{ log *slog.Logger }

func (l tcLogger) Printf(format string, v ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)), "from", "testcontainers")
}

// tail returns the last n lines of r.
func tail(r io.Reader, n int) string {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return "last output:\n  " + strings.Join(lines, "\n  ")
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
