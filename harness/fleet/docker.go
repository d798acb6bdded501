package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
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

	"github.com/edgeproof/rlharness/harness/result"
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
func (p DockerProvider) Start(ctx context.Context, spec Spec) (Fleet, error) {
	return start(ctx, spec, p.Logger, "docker", target.StartDocker, &dockerRun{redisImage: p.RedisImage})
}

// dockerRun is what one fleet holds of Docker: its backend in start.
type dockerRun struct {
	cli                     *testcontainers.DockerClient
	log                     *slog.Logger
	spec                    Spec
	redisImage, targetImage string
	network                 *testcontainers.DockerNetwork // nil in host mode
}

// prepare connects to Docker, removes leftovers of killed runs and checks that
// both images are here: none is ever pulled.
func (d *dockerRun) prepare(ctx context.Context, spec Spec, log *slog.Logger) (result.Conditions, error) {
	d.spec, d.log = spec, log
	if d.redisImage == "" {
		d.redisImage = DefaultRedisImage
	}
	d.targetImage = spec.Image
	if d.targetImage == "" {
		d.targetImage = "rlharness/" + spec.Target + ":dev"
	}
	cli, err := dockerClient(ctx)
	if err != nil {
		return result.Conditions{}, err
	}
	d.cli = cli
	if err := cleanupOrphans(ctx, cli, log); err != nil {
		log.Warn("could not remove leftovers of earlier runs", "err", err)
	}
	images := []string{d.redisImage, d.targetImage}
	if spec.NoStore {
		images, d.redisImage = images[1:], ""
	}
	for _, img := range images {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			if cerrdefs.IsNotFound(err) {
				return result.Conditions{}, fmt.Errorf("docker image %s not found: run scripts/build-images.sh (this machine pulls nothing from a registry)", img)
			}
			return result.Conditions{}, fmt.Errorf("inspect docker image %s: %w", img, err)
		}
	}
	cond := spec.conditions("docker", spec.Network)
	cond.RedisImage, cond.TargetImage = d.redisImage, d.targetImage
	return cond, nil
}

// setup creates the run's bridge network, labelled like its containers.
func (d *dockerRun) setup(ctx context.Context, _ *fleet) error {
	// Nodes tell clients and each other their own addresses: on host networking those are
	// the 127.0.0.1 ports the host and the replicas reach too.
	if d.spec.Store == StoreCluster && d.spec.Network != NetworkHost {
		return fmt.Errorf("a Redis Cluster store runs on host networking only (--network host): its nodes announce their own addresses")
	}
	if d.spec.Network != NetworkBridge {
		return nil
	}
	var err error
	d.network, err = tcnetwork.New(ctx, tcnetwork.WithLabels(d.labels("")))
	if err != nil {
		return fmt.Errorf("create docker network for run %s: %w", d.spec.RunID, err)
	}
	return nil
}

// redis starts the one Redis: on a bridge network the replicas reach it by its
// alias, on the host's network at its host port.
func (d *dockerRun) redis(ctx context.Context, port int) (member, string, error) {
	args := []string{"--save", "", "--appendonly", "no", "--protected-mode", "no"}
	redis := redisAlias + ":" + strconv.Itoa(redisPort)
	if d.spec.Network == NetworkHost {
		args = append(args, "--bind", "127.0.0.1", "--port", strconv.Itoa(port))
		redis = loopback(port)
	} else {
		args = append(args, "--bind", "0.0.0.0", "--port", strconv.Itoa(redisPort))
	}
	m, err := d.run(ctx, RedisMember, d.redisImage, args, nil, nil, nil, redisPort, port)
	return m, redis, err
}

// storeCPUQuota is the CFS period and quota (µs) that give a container share of one core:
// the shortest period whose quota is Docker's least, 1 ms, and at most 20 ms, so that the
// store stalls for less than a store timeout at a time.
func storeCPUQuota(share float64) (period, quota int64) {
	period = max(20_000, int64(math.Ceil(1_000/share)))
	return period, int64(math.Round(share * float64(period)))
}

func (d *dockerRun) node(ctx context.Context, j, port int, args []string) (member, error) {
	return d.run(ctx, RedisNodeMember(j), d.redisImage, args, nil, nil, nil, port, port)
}

// dataDir is inside the node's container.
func (d *dockerRun) dataDir() string { return "/tmp" }

// proxyHost is where containers reach a process of the host: on host networking its
// loopback, on the run's bridge network the network's gateway, the host's own address on
// that bridge (reachable from the run's containers only, not from other machines).
func (d *dockerRun) proxyHost(ctx context.Context) (string, error) {
	if d.network == nil {
		return "127.0.0.1", nil
	}
	ins, err := d.cli.NetworkInspect(ctx, d.network.ID, client.NetworkInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspect the run's network for its gateway (the store proxy listens there): %w", err)
	}
	for _, c := range ins.Network.IPAM.Config {
		if c.Gateway.Is4() {
			return c.Gateway.String(), nil
		}
	}
	return "", fmt.Errorf("the run's network %s has no IPv4 gateway for the store proxy to listen on", d.network.Name)
}

// replica starts replica i with the rule file and, for a custom target, its
// own files and environment.
func (d *dockerRun) replica(ctx context.Context, i int, at layout, redis string) (member, error) {
	port := at.ports[i]
	spec := d.spec
	inner := targetPort
	if spec.Custom != nil {
		inner = spec.Custom.Port
	}
	listen := ":" + strconv.Itoa(inner)
	if spec.Network == NetworkHost {
		listen = loopback(port)
	}
	var files []testcontainers.ContainerFile
	if len(spec.Rules) > 0 {
		files = append(files, testcontainers.ContainerFile{
			Reader:            bytes.NewReader(spec.Rules),
			ContainerFilePath: containerRules,
			FileMode:          0o444,
		})
	}
	env := maps.Clone(spec.ExtraEnv)
	if spec.Custom != nil {
		v := spec.customVars(i, at, redis)
		files = append(files, spec.customFiles(v)...)
		env = spec.customEnv(v)
		return d.run(ctx, ReplicaMember(i), d.targetImage, spec.customArgs(v), env, files, spec.peerHosts(i, at), inner, port)
	}
	args := spec.targetArgs(i, listen, redis, containerRules)
	return d.run(ctx, ReplicaMember(i), d.targetImage, args, env, files, nil, inner, port)
}

// containerName is the name of a member's container, by which the other containers on the
// run's network reach it.
func (s Spec) containerName(member string) string { return "rlharness-" + s.RunID + "-" + member }

func (d *dockerRun) labels(member string) map[string]string {
	return Labels(d.spec.RunID, member)
}

// Labels are the labels of a Docker resource this process starts for run (member empty: one
// the whole run shares, its network): owned by this process, so that Cleanup in another
// harness process on this host leaves it alone while this one runs and removes it once this
// one is gone. A container without them is taken for a killed run's leftover.
func Labels(run, member string) map[string]string {
	l := map[string]string{
		LabelFleet: "1",
		LabelOwner: ownerID(),
	}
	if run != "" {
		l[LabelRun] = run
	}
	if member != "" {
		l[LabelMember] = member
	}
	return l
}

// run creates and starts one member's container with files copied in and hosts ("name:address")
// added to its hosts file. In bridge mode the container port is published on
// 127.0.0.1:hostPort, fixed so that the address stays the same after a stop and start; in host
// mode the member listens on hostPort itself.
func (d *dockerRun) run(ctx context.Context, name, image string, args []string, env map[string]string, files []testcontainers.ContainerFile, hosts []string, port, hostPort int) (member, error) {
	req := testcontainers.ContainerRequest{
		Image:  image,
		Name:   d.spec.containerName(name),
		Cmd:    args,
		Env:    env,
		Labels: d.labels(name),
		Files:  files,
	}
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
			hc.ExtraHosts = hosts
		}
	} else {
		req.HostConfigModifier = func(hc *container.HostConfig) { hc.NetworkMode, hc.ExtraHosts = "host", hosts }
		// Each its own name, not the host's: peers that gossip (gubernator's memberlist) name
		// a node by its hostname.
		req.Hostname = req.Name
	}
	if name == RedisMember && d.spec.StoreCPU > 0 {
		period, quota := storeCPUQuota(d.spec.StoreCPU)
		modify := req.HostConfigModifier
		req.HostConfigModifier = func(hc *container.HostConfig) {
			modify(hc)
			hc.CPUPeriod, hc.CPUQuota = period, quota
		}
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

// withLogs adds the tail of the container's log to err.
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

func (m *dockerMember) kill(ctx context.Context) error {
	st, err := m.ctr.State(ctx)
	if err != nil {
		return err
	}
	if !st.Running {
		return nil
	}
	if _, err := m.cli.ContainerKill(ctx, m.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return err
	}
	m.paused = false // a paused container's processes die too
	// The daemon answers once the signal is sent; wait until the container has exited, so
	// that the caller's "down" is true.
	deadline := time.Now().Add(stopTimeout)
	for {
		st, err := m.ctr.State(ctx)
		if err != nil {
			return err
		}
		if !st.Running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container %s still runs %v after SIGKILL", m.ctr.GetContainerID()[:12], stopTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
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

// pid is the container's first process as this host sees it: Docker's State.Pid, 0 while
// the container does not run.
func (m *dockerMember) pid(ctx context.Context) (int, error) {
	st, err := m.ctr.State(ctx)
	if err != nil {
		return 0, err
	}
	if !st.Running || st.Pid <= 0 {
		return 0, fmt.Errorf("container %s does not run (%s)", m.ctr.GetContainerID()[:12], st.Status)
	}
	return st.Pid, nil
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
