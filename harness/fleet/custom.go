package fleet

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/testcontainers/testcontainers-go"

	"github.com/edgeproof/rlharness/harness/target"
)

// TargetCustom is a limiter the harness did not write, started as a target file says
// (Spec.Custom): an image run by the Docker provider or an executable run by the local one.
const TargetCustom = "custom"

// customSpec fills in what a custom target implies.
func (s Spec) customDefaults() (Spec, error) {
	c := s.Custom
	s.Target = TargetCustom
	switch c.Kind {
	case target.StartDocker:
		s.Image = c.Image
	case target.StartProcess:
		if len(c.Command) == 0 {
			return s, fmt.Errorf("custom target: no command to run")
		}
		s.Binary = c.Command[0]
	default:
		return s, fmt.Errorf("custom target: the fleet starts docker and process targets, not %q", c.Kind)
	}
	return s, nil
}

// customFor says whether a provider that starts kind can start spec's custom target.
func (s Spec) customFor(provider, kind string) error {
	if s.Custom != nil && s.Custom.Kind != kind {
		return fmt.Errorf("the target file starts a %s target, which the %s provider cannot: use --provider %s",
			s.Custom.Kind, provider, map[string]string{target.StartDocker: "docker", target.StartProcess: "local"}[s.Custom.Kind])
	}
	// The recording backend listens on this host's loopback, which a container on a bridge
	// network does not reach.
	if s.RecordBackend && s.Custom != nil && s.Custom.Kind == target.StartDocker && s.Network == NetworkBridge {
		return fmt.Errorf("the target file proxies to the recording backend (%s), which runs on this host's loopback: use --network host", target.VarBackend)
	}
	// The links between nodes listen on this host's loopback, and lead to the replicas' ports
	// there: a container on a bridge network has neither.
	if s.NoStore && !s.Zones.IsZero() && s.Custom != nil && s.Custom.Kind == target.StartDocker && s.Network == NetworkBridge {
		return fmt.Errorf("zones between the nodes of a limiter without a store are links on this host's loopback: use --network host")
	}
	// A name leads each replica to its own zone's link only through its own hosts file,
	// which a local process does not have: it shares this host's, and every process would
	// reach a peer at one address.
	if s.NoStore && !s.Zones.IsZero() && s.Custom != nil && s.Custom.Kind == target.StartProcess && s.Custom.Named() {
		return fmt.Errorf("the target file's nodes announce themselves by name (%s), which each replica resolves to its zone's link in its container's hosts file; a local process shares this host's, so no link can stand between two zones' nodes: run it as a docker target with --network host, or without --zones", target.VarPeerName)
	}
	return nil
}

// customVars are replica i's placeholder values: it listens inside its container on a
// bridge network, else on its own host port on 127.0.0.1; its peers reach it by its
// container's name on a bridge network, else on 127.0.0.1.
func (s Spec) customVars(i int, at layout, redis string) target.Vars {
	v := target.Vars{Port: at.ports[i], Host: "127.0.0.1", Listen: loopback(at.ports[i]), Redis: redis, Backend: at.backend, Node: i, Nodes: cmp.Or(s.NodeCount, s.Replicas),
		PeerName: s.peerName(i)}
	bridge := s.Network == NetworkBridge && s.Custom.Kind == target.StartDocker
	if bridge {
		v.Port, v.Host, v.Listen = s.Custom.Port, "0.0.0.0", ":"+strconv.Itoa(s.Custom.Port)
	}
	if len(at.peerPorts) > i {
		v.PeerPort = at.peerPorts[i]
		v.Peers = make([]target.Peer, len(at.peerPorts))
		for j, pp := range at.peerPorts {
			v.Peers[j] = target.Peer{Node: j, Host: "127.0.0.1", Port: at.ports[j], PeerPort: pp}
			if bridge {
				v.Peers[j].Host, v.Peers[j].Port = s.containerName(ReplicaMember(j)), s.Custom.Port
			}
			if i < len(at.via) && at.via[i][j].IsValid() { // another zone's replica, through the link between them
				v.Peers[j].Host, v.Peers[j].PeerPort = at.via[i][j].Addr().String(), int(at.via[i][j].Port())
			}
		}
	}
	return v
}

// peerName is replica i's name as its peers know it ({{peer_name}}): in a container on host
// networking a name of its own, which every replica's hosts file leads to where that replica
// reaches it (peerHosts); on a bridge network its container's name, which the run's network
// resolves; a local process has no hosts file of its own, and is 127.0.0.1.
func (s Spec) peerName(i int) string {
	switch {
	case s.Custom == nil || s.Custom.Kind != target.StartDocker:
		return "127.0.0.1"
	case s.Network == NetworkBridge:
		return s.containerName(ReplicaMember(i))
	}
	return fmt.Sprintf("node-%d.peers.rlharness", i)
}

// peerHosts are replica i's hosts file entries (Docker's ExtraHosts, "name:address") for a
// target whose nodes announce themselves by name, in a container on host networking: every
// replica's name, and where replica i reaches it, 127.0.0.1 (its own zone's, or without
// zones) or the loopback address of the link from i's zone to that replica's, which listens
// on that replica's own peer port (startPeerLinks): a name maps to an address, not a port,
// and every node is told the same port. Nil where no name is given.
func (s Spec) peerHosts(i int, at layout) []string {
	if s.Custom == nil || s.Custom.Kind != target.StartDocker || s.Network != NetworkHost || !s.Custom.Named() {
		return nil
	}
	out := make([]string, len(at.peerPorts))
	for j := range at.peerPorts {
		addr := "127.0.0.1"
		if i < len(at.via) && at.via[i][j].IsValid() {
			addr = at.via[i][j].Addr().String()
		}
		out[j] = s.peerName(j) + ":" + addr
	}
	return out
}

// customArgs is replica i's command line with its placeholders filled: the container's
// command (docker), or the arguments after the executable (process).
func (s Spec) customArgs(v target.Vars) []string {
	cmd := s.Custom.Command
	if s.Custom.Kind == target.StartProcess {
		cmd = cmd[1:]
	}
	out := make([]string, len(cmd))
	for k, a := range cmd {
		out[k] = v.Expand(a)
	}
	return out
}

// customEnv is replica i's extra environment with its placeholders filled.
func (s Spec) customEnv(v target.Vars) map[string]string {
	env := make(map[string]string, len(s.ExtraEnv)+len(s.Custom.Env))
	for k, v := range s.ExtraEnv {
		env[k] = v
	}
	for k, val := range s.Custom.Env {
		env[k] = v.Expand(val)
	}
	return env
}

// customFiles are replica i's files with their placeholders filled, for a container.
func (s Spec) customFiles(v target.Vars) []testcontainers.ContainerFile {
	out := make([]testcontainers.ContainerFile, 0, len(s.Custom.Files))
	for _, f := range s.Custom.Files {
		out = append(out, testcontainers.ContainerFile{
			Reader:            bytes.NewReader([]byte(v.Expand(string(f.Content)))),
			ContainerFilePath: f.Path,
			FileMode:          0o444,
		})
	}
	return out
}

// writeCustomFiles writes replica i's files under dir/node-i, the directory it runs in.
func (s Spec) writeCustomFiles(dir string, v target.Vars) (string, error) {
	i := v.Node
	home := filepath.Join(dir, "node-"+strconv.Itoa(i))
	for _, f := range s.Custom.Files {
		p := filepath.Join(home, filepath.Clean("/"+f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("write %s for %s: %w", f.Path, ReplicaMember(i), err)
		}
		if err := os.WriteFile(p, []byte(v.Expand(string(f.Content))), 0o644); err != nil {
			return "", fmt.Errorf("write %s for %s: %w", f.Path, ReplicaMember(i), err)
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", fmt.Errorf("create the directory of %s: %w", ReplicaMember(i), err)
	}
	return home, nil
}

// HealthAt answers nil once GET baseURL+path answers 200: the readiness check of a
// custom target, whose health path its target file names.
func HealthAt(ctx context.Context, baseURL, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s", baseURL, path, resp.Status)
	}
	return nil
}
