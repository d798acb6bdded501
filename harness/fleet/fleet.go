// Package fleet runs the system under test: one Redis and N target replicas,
// as one value with a lifecycle. A load test starts a fleet from a Spec, sends
// traffic to ReplicaURLs, injects faults with Stop, Start, Pause, Unpause and
// Restart, and ends with Terminate.
//
// Two providers satisfy the same interface: DockerProvider runs every member
// as a container (testcontainers-go) on a per-run network, LocalProvider runs
// them as child processes on 127.0.0.1. Either way the host reaches every
// member on 127.0.0.1 only, and the addresses stay the same across restarts.
//
// The package needs a Unix host (process groups and signals).
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/harness/recorder"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/target"
	"github.com/edgeproof/rlharness/harness/topology"
	"github.com/edgeproof/rlharness/limiters"
)

// Defaults applied to a zero Spec beside limiters' (DefaultNodes, ModeDelayed,
// DefaultSyncInterval, DefaultStoreTimeout), which are the replica's own defaults too; the
// fleet passes every value explicitly so a run's conditions are on record.
const (
	DefaultTarget  = TargetReplica
	DefaultNetwork = NetworkBridge
)

// Targets a fleet can run.
const (
	TargetReplica = "replica" // the limiter replica, targets/cmd/replica
	TargetNoop    = "noop"    // the throughput ceiling, targets/cmd/noop
	TargetWorker  = "worker"  // the horizontal-scaling replica, targets/cmd/worker (configured by ExtraEnv WORKER_*)
)

// Network modes of the Docker provider.
const (
	NetworkBridge = "bridge" // per-run Docker network, ports published on 127.0.0.1
	NetworkHost   = "host"   // containers share the host's network, listen on 127.0.0.1
)

// NetworkLoopback is the local provider's networking: every process on 127.0.0.1, whatever
// Spec.Network asks.
const NetworkLoopback = "loopback"

// Networking is what a run's conditions call its networking: the Docker mode asked, or
// loopback for the local provider, which ignores the mode.
func Networking(provider, network string) string {
	if provider == ProviderLocal {
		return NetworkLoopback
	}
	return network
}

// NetworkingNote says why a run's networking is not the Docker mode asked, where it is not:
// the local provider runs every process on 127.0.0.1 whatever --network says. Empty for the
// Docker provider.
func NetworkingNote(provider, network string) string {
	if provider != ProviderLocal {
		return ""
	}
	if network == NetworkHost {
		return "the local provider runs every process on this host's 127.0.0.1, which is what --network host asks of Docker"
	}
	return "the local provider runs every process on this host's 127.0.0.1; --network is the docker provider's"
}

// RedisMember names the Redis member in Stop, Start, Pause, Unpause, Restart.
const RedisMember = "redis"

// ReplicaMember names replica i (its node index) in Stop, Start, Pause,
// Unpause and Restart: "replica-3".
func ReplicaMember(i int) string { return "replica-" + strconv.Itoa(i) }

// Labels every Docker resource of a fleet carries, so leftovers of a killed
// run can be found and removed (Cleanup).
const (
	LabelFleet  = "rlharness"        // "1"
	LabelRun    = "rlharness.run"    // Spec.RunID
	LabelMember = "rlharness.member" // "redis", "replica-3"
	LabelOwner  = "rlharness.owner"  // "<hostname>/<pid>" of the process that started the run
)

// Timeouts of the lifecycle. A member gets readyTimeout to answer its health
// check after it starts; stopTimeout is the grace between SIGTERM and SIGKILL.
const (
	readyTimeout  = 60 * time.Second
	stopTimeout   = 5 * time.Second
	probeInterval = 50 * time.Millisecond
	probeTimeout  = time.Second
)

// Spec says what fleet to run. The zero value, with defaults applied, is
// Redis plus eight delayed-sync replicas on a bridge network.
type Spec struct {
	// RunID labels every resource of the run; generated if empty.
	RunID string
	// Replicas is the number of target replicas; default 8 (HS4).
	Replicas int
	// NodeCount, when set, is the fleet size every replica is told (--node-count, a target
	// file's {{nodes}}) where it differs from Replicas: Replicas 1, NodeCount 8 runs node 0 of
	// 8 alone, one replica's share of a fleet of 8 with that fleet's budgets and sync. It
	// may not be below Replicas; 0 is Replicas.
	NodeCount int
	// Target is "replica" (default), "noop" or "worker".
	Target string
	// Mode is passed to every replica as --mode: central | split | delayed (default) | peer-gcra.
	Mode limiters.Mode
	// Design is passed to every replica in delayed mode as --design: bounded (default: the
	// design with a proven bound, docs/design-bound.md) | document (the document's).
	Design limiters.Design
	// Rules is the YAML rule file given to every replica (--rules); none if empty.
	Rules []byte
	// SyncInterval and StoreTimeout are passed to every replica; defaults 200ms and 50ms.
	SyncInterval, StoreTimeout time.Duration
	// StoreWait, when set, is passed to every replica as --store-wait: how long the bounded
	// design's decision past a node's budget waits for the store. 0 leaves the replica's
	// default (limiters.DefaultStoreWait) and the command line as it was.
	StoreWait time.Duration
	// Network is "bridge" (default: a per-run Docker network, ports published
	// on 127.0.0.1) or "host" (containers use the host's network). The local
	// provider always uses 127.0.0.1 and accepts either.
	Network string
	// ExtraEnv is added to the environment of every replica.
	ExtraEnv map[string]string
	// Image is the target's Docker image; default rlharness/<Target>:dev.
	Image string
	// Binary is the target's executable for the local provider; if empty the
	// provider builds ./targets/cmd/<Target> with go build.
	Binary string
	// Store is "redis" (default: one Redis, member "redis") or "cluster": a Redis Cluster
	// of ClusterMasters masters (default 3) with ClusterReplicas replicas each (default 1),
	// members "redis-node-0" …, created with redis-cli --cluster create; a silent master is
	// failed over after ClusterNodeTimeout (default 2 s). The Docker provider runs a
	// cluster on host networking only: its nodes announce their own 127.0.0.1 ports.
	Store                           string
	ClusterMasters, ClusterReplicas int
	ClusterNodeTimeout              time.Duration
	// StoreProxy puts a TCP proxy run by this process between the replicas and Redis (one
	// Redis only): the replicas are given its address, and SlowStore delays every reply
	// through it (the store-slow fault).
	StoreProxy bool
	// Zones, when set, places the replicas in zones, each with its own link to the store: a
	// proxy run by this process whose every byte waits the zone's latency each way, which
	// SlowLink slows and CutLink cuts for that zone alone (SlowStore slows every link). The
	// zones must hold Replicas replicas together; one Redis only.
	Zones topology.Topology
	// StoreCPU, when set, is the share of one core the single Redis may use (the Docker
	// provider's CFS CPU quota): a store as slow as a busy
	// Redis thread, whose every call takes time in proportion to its work. 0: no limit.
	StoreCPU float64
	// Custom, when set, runs a limiter the harness did not write, as its target file
	// says (Target becomes TargetCustom; Image or Binary come from it). Mode, Rules,
	// SyncInterval and StoreTimeout do not apply.
	Custom *target.Start
	// NoStore runs no Redis: a target file's limiter that keeps its counters to itself (its
	// file declares no managed store). RedisAddr is then empty and the member "redis" is
	// not there to stop.
	NoStore bool
	// RecordBackend runs the recording backend (harness/recorder) on this host for a target
	// file's limiter that proxies to it ({{backend}}): what it admitted reaches the backend,
	// which records when. The fleet's Backend returns it.
	RecordBackend bool
}

// Recorded is a fleet with a recording backend behind its replicas (Spec.RecordBackend).
type Recorded interface {
	// Backend is the recording backend; nil when the fleet runs none.
	Backend() *recorder.Recorder
}

// Fleet is a running Redis plus replicas. Members are named by RedisMember
// and ReplicaMember. Every method is safe for concurrent use.
type Fleet interface {
	// Conditions describes the provider, network mode, replicas and images or binaries.
	Conditions() result.Conditions
	// RedisAddr is Redis's 127.0.0.1:port, reachable from the host; it stays
	// the same when Redis is stopped, started or restarted.
	RedisAddr() string
	// ReplicaURLs are the replicas' base URLs (http://127.0.0.1:port),
	// indexed by node index; they stay the same across restarts.
	ReplicaURLs() []string
	// Stop stops a member (SIGTERM, then SIGKILL after a grace period).
	Stop(ctx context.Context, member string) error
	// Kill ends a member at once with SIGKILL, giving it no chance to flush or say goodbye,
	// and returns once it is gone; Start brings it back. Redis comes back empty (the fleet
	// runs it without persistence).
	Kill(ctx context.Context, member string) error
	// Start starts a stopped member again on the same address and waits until
	// it is healthy; starting a running member does nothing.
	Start(ctx context.Context, member string) error
	// Pause freezes a member: its connections stay open but nothing answers.
	Pause(ctx context.Context, member string) error
	// Unpause resumes a paused member.
	Unpause(ctx context.Context, member string) error
	// Restart stops and starts a member and waits until it is healthy.
	Restart(ctx context.Context, member string) error
	// SlowStore delays every reply of the store by d on its way to the replicas, through the
	// store proxy (Spec.StoreProxy; ErrNoStoreProxy without it); 0 takes the delay away.
	SlowStore(ctx context.Context, d time.Duration) error
	// SlowLink delays every store reply on one zone's link (Spec.Zones) by d more than its
	// latency; 0 takes the delay away. ErrNoZones without zones.
	SlowLink(ctx context.Context, zone string, d time.Duration) error
	// CutLink cuts one zone's link to the store, LinkRefused or LinkBlackhole, while the
	// other zones keep theirs; LinkUp mends it. ErrNoZones without zones.
	CutLink(ctx context.Context, zone, how string) error
	// Terminate removes every member and resource of the fleet. It is safe to
	// call more than once.
	Terminate(ctx context.Context) error
}

// Processes is a fleet whose members run as processes of this host, as both providers'
// fleets do: PID is a member's process id as this host sees it (a container's first
// process, under Docker), for reading what it costs from /proc.
type Processes interface {
	PID(ctx context.Context, member string) (int, error)
}

// Provider starts fleets. Start returns once Redis answers PING and every
// replica's /healthz answers 200; on error nothing of the fleet is left running.
type Provider interface {
	Start(ctx context.Context, spec Spec) (Fleet, error)
}

// Start starts a fleet with the Docker provider and its default images.
func Start(ctx context.Context, spec Spec) (Fleet, error) {
	return DockerProvider{}.Start(ctx, spec)
}

// The providers a command line names.
const (
	ProviderDocker = "docker"
	ProviderLocal  = "local"
)

// Option is a command line's setting of a provider beyond its name.
type Option func(*options)

type options struct{ binDir string }

// WithBinDir runs the local provider's programs from dir (LocalProvider.BinDir, --bin-dir);
// empty is none.
func WithBinDir(dir string) Option { return func(o *options) { o.binDir = dir } }

// NewProvider returns the provider a command line names: "docker" or "local". The Docker
// provider refuses a bin directory: it runs images.
func NewProvider(name string, logger *slog.Logger, opts ...Option) (Provider, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch name {
	case ProviderDocker, "":
		if o.binDir != "" {
			return nil, fmt.Errorf("--bin-dir %s is for --provider local (prebuilt binaries run as processes); the Docker provider runs images", o.binDir)
		}
		return DockerProvider{Logger: logger}, nil
	case ProviderLocal:
		return LocalProvider{Logger: logger, BinDir: o.binDir}, nil
	default:
		return nil, fmt.Errorf("unknown fleet provider %q: use docker or local", name)
	}
}

// withDefaults validates spec and fills in its defaults.
func (s Spec) withDefaults() (Spec, error) {
	if s.RunID == "" {
		s.RunID = newRunID()
	}
	if strings.ContainsFunc(s.RunID, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return s, fmt.Errorf("run id %q: use letters, digits, '-', '_' and '.' only (it names containers)", s.RunID)
	}
	if s.Replicas == 0 {
		s.Replicas = limiters.DefaultNodes
	}
	if s.Replicas < 0 {
		return s, fmt.Errorf("replicas must be > 0 (got %d)", s.Replicas)
	}
	if s.NodeCount == 0 {
		s.NodeCount = s.Replicas
	}
	if s.NodeCount < s.Replicas {
		return s, fmt.Errorf("node count %d is below the %d replicas run: the replicas are nodes 0..%d of the count they are told", s.NodeCount, s.Replicas, s.Replicas-1)
	}
	if s.Target == "" {
		s.Target = DefaultTarget
	}
	if s.Custom != nil {
		var err error
		if s, err = s.customDefaults(); err != nil {
			return s, err
		}
	}
	if s.Target != TargetCustom && s.Target != TargetReplica && s.Target != TargetNoop && s.Target != TargetClaimCheck && s.Target != TargetWorker {
		return s, fmt.Errorf("target %q: use %q, %q or %q", s.Target, TargetReplica, TargetNoop, TargetWorker)
	}
	if s.Mode == "" {
		s.Mode = limiters.ModeDelayed
	}
	switch s.Mode {
	case limiters.ModeCentral, limiters.ModeSplit, limiters.ModeDelayed, limiters.ModePeerGCRA:
	default:
		return s, fmt.Errorf("mode %q: use central, split or delayed (or %s, the peer limiter)", s.Mode, limiters.ModePeerGCRA)
	}
	if s.Mode == limiters.ModeDelayed && s.Design == "" {
		s.Design = limiters.DesignBounded
	}
	if s.Design != "" && !slices.Contains(limiters.Designs(), s.Design) {
		return s, fmt.Errorf("design %q: use %s or %s", s.Design, limiters.DesignBounded, limiters.DesignDocument)
	}
	if s.SyncInterval == 0 {
		s.SyncInterval = limiters.DefaultSyncInterval
	}
	if s.StoreTimeout == 0 {
		s.StoreTimeout = limiters.DefaultStoreTimeout
	}
	if s.StoreCPU < 0 || s.StoreCPU > 1 || s.StoreCPU > 0 && s.Store == StoreCluster {
		return s, fmt.Errorf("store cpu %v: give a share of one core in (0, 1], for one Redis (not a cluster)", s.StoreCPU)
	}
	if s.SyncInterval < 0 || s.StoreTimeout < 0 || s.StoreWait < 0 {
		return s, fmt.Errorf("sync interval, store timeout and store wait must be >= 0 (got %s, %s, %s)", s.SyncInterval, s.StoreTimeout, s.StoreWait)
	}
	if s.Network == "" {
		s.Network = DefaultNetwork
	}
	if s.Network != NetworkBridge && s.Network != NetworkHost {
		return s, fmt.Errorf("network %q: use %q or %q", s.Network, NetworkBridge, NetworkHost)
	}
	if s.NoStore && (s.StoreProxy || s.Store == StoreCluster || s.StoreCPU > 0) {
		return s, errors.New("a fleet without a store has no store to put a proxy in front of, cluster or slow down: leave NoStore off")
	}
	if !s.Zones.IsZero() {
		if err := s.Zones.Check(); err != nil {
			return s, fmt.Errorf("zones: %w", err)
		}
		switch {
		case s.Zones.Replicas() != s.Replicas:
			return s, fmt.Errorf("zones %s hold %d replicas, but the fleet runs %d: make them agree (--replicas)", s.Zones, s.Zones.Replicas(), s.Replicas)
		case s.NoStore && (s.Custom == nil || !s.Custom.Peered()):
			return s, errors.New("zones are links to one Redis, or between the nodes of a limiter without a store that is told where its peers are ({{peers}}, {{each.peer}} or {{each.peer_port}} in its target file) or announces the name the harness gives it ({{peer_name}}:{{peer_port}}, as gubernator's files do): this fleet has neither, so no link can stand between its nodes (announce {{peer_name}} instead of a fixed address)")
		case s.Store == StoreCluster:
			return s, errors.New("zones are links to one Redis: a Redis Cluster's nodes announce their own addresses, which a link cannot stand in front of")
		case s.StoreProxy:
			return s, errors.New("zones give every zone its own link to the store, which store-slow slows all at once: leave StoreProxy off with zones")
		}
	}
	if s.StoreProxy && s.Store == StoreCluster {
		return s, errors.New("a store proxy stands in front of one Redis, not a Redis Cluster (its nodes announce their own addresses): leave StoreProxy off with a cluster store")
	}
	return s.clusterDefaults()
}

// conditions is the part of Conditions that follows from the spec alone.
func (s Spec) conditions(provider, network string) result.Conditions {
	c := result.Conditions{
		Provider:     provider,
		Network:      network,
		RunID:        s.RunID,
		Replicas:     s.Replicas,
		Target:       s.Target,
		NodeCount:    s.nodeCountNote(),
		SyncInterval: s.SyncInterval,
		StoreTimeout: s.StoreTimeout,
		StoreWait:    s.StoreWait,
		StoreCPU:     s.StoreCPU,
	}
	if s.Target == TargetReplica {
		c.Mode = string(s.Mode)
		if s.Mode == limiters.ModeDelayed {
			c.Design = string(s.Design)
		}
	}
	return c
}

// targetArgs is the target's command line for node i, per docs/DESIGN.md.
// The noop and worker targets take --listen only (the worker its settings from ExtraEnv); a
// target file's limiter has its own command line (customArgs).
func (s Spec) targetArgs(i int, listen, redis, rules string) []string {
	args := []string{"--listen", listen}
	if s.Target == TargetClaimCheck {
		return s.claimCheckArgs(args, i, redis)
	}
	if s.Target == TargetNoop || s.Target == TargetWorker {
		return args
	}
	args = append(args,
		"--mode", string(s.Mode),
		"--node-index", strconv.Itoa(i),
		"--node-count", strconv.Itoa(s.NodeCount),
		"--sync-interval", s.SyncInterval.String(),
		"--store-timeout", s.StoreTimeout.String(),
		"--redis", redis,
	)
	if s.Mode == limiters.ModeDelayed && s.Design != "" {
		args = append(args, "--design", string(s.Design))
	}
	if s.StoreWait > 0 {
		args = append(args, "--store-wait", s.StoreWait.String())
	}
	if len(s.Rules) > 0 {
		args = append(args, "--rules", rules)
	}
	return args
}

// nodeCountNote is the node count a run's conditions record: only where the replicas are
// told another size than the fleet runs (one replica's share of a larger fleet).
func (s Spec) nodeCountNote() int {
	if s.NodeCount == s.Replicas {
		return 0
	}
	return s.NodeCount
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// memberIndex parses a member name: -1 for Redis, the node index for a replica.
func memberIndex(member string, replicas int) (int, error) {
	if member == RedisMember {
		return -1, nil
	}
	if s, ok := strings.CutPrefix(member, "replica-"); ok {
		if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < replicas {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown fleet member %q: use %q or replica-0 … replica-%d", member, RedisMember, replicas-1)
}

func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
