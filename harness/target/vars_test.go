package target

import (
	"strings"
	"testing"
)

// Every placeholder of one replica, as the harness fills it for node 1 of 3 on loopback.
func TestExpand(t *testing.T) {
	v := Vars{Port: 41001, Host: "127.0.0.1", Listen: "127.0.0.1:41001", Redis: "127.0.0.1:6400", Node: 1, Nodes: 3, PeerPort: 42001, PeerName: "node-1.peers.rlharness",
		Peers: []Peer{{0, "127.0.0.1", 41000, 42000}, {1, "127.0.0.1", 41001, 42001}, {2, "127.0.0.1", 41002, 42002}}}
	tests := []struct {
		name, in, want string
	}{
		{"port", "{{port}}", "41001"},
		{"host", "{{host}}", "127.0.0.1"},
		{"listen", "--listen={{listen}}", "--listen=127.0.0.1:41001"},
		{"redis", "redis://{{redis}}/0", "redis://127.0.0.1:6400/0"},
		{"node of nodes", "node-{{node}} of {{nodes}}", "node-1 of 3"},
		{"peer port", "bind 127.0.0.1:{{peer_port}}", "bind 127.0.0.1:42001"},
		{"peer name", "{{peer_name}}:{{peer_port}}", "node-1.peers.rlharness:42001"},
		{"peers, its own included", "{{peers}}", "127.0.0.1:42000,127.0.0.1:42001,127.0.0.1:42002"},
		{"a repeated line, once per replica in node order",
			"peers rl\n    peer node-{{each.node}} {{each.peer}}\nbackend b\n",
			"peers rl\n    peer node-0 127.0.0.1:42000\n    peer node-1 127.0.0.1:42001\n    peer node-2 127.0.0.1:42002\nbackend b\n"},
		{"a repeated line mixes its replica's values with this one's",
			"server s{{each.node}} {{each.listen}} # from {{node}}, peer port {{each.peer_port}}",
			"server s0 127.0.0.1:41000 # from 1, peer port 42000server s1 127.0.0.1:41001 # from 1, peer port 42001server s2 127.0.0.1:41002 # from 1, peer port 42002"},
		{"a last line without a newline is repeated too", "a\nx {{each.node}}", "a\nx 0x 1x 2"},
		{"a client's placeholder is not a replica's", "{{client}}", "{{client}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := v.Expand(tt.in); got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A container on a bridge network reaches the others by name: the peer addresses say so.
func TestPeerAddr(t *testing.T) {
	for _, tt := range []struct {
		p    Peer
		want string
	}{
		{Peer{Node: 0, Host: "127.0.0.1", Port: 8080, PeerPort: 10000}, "127.0.0.1:10000"},
		{Peer{Node: 3, Host: "rlharness-r1-replica-3", Port: 8080, PeerPort: 10003}, "rlharness-r1-replica-3:10003"},
	} {
		if got := tt.p.Addr(); got != tt.want {
			t.Errorf("%+v: Addr() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// A placeholder the harness does not fill where it is written is an error naming the field:
// a misspelt one would reach the limiter as it is.
func TestParsePlaceholders(t *testing.T) {
	base := func(start string) string {
		return "name: x\nstart:\n" + start + "request: {client: {header: X}}\nresponses: {accepted: [200], rejected: [429]}\nclients: [{limit: 1, window: 1s}]\n"
	}
	tests := []struct {
		name  string
		start string
		want  string // "" parses
	}{
		{"peer placeholders in a process's command and file",
			"  replicas: 2\n  process:\n    command: [haproxy, -f, h.cfg, -L, 'node-{{node}}']\n    files:\n      - {path: h.cfg, content: \"bind :{{port}}\\nbind :{{peer_port}}\\n  peer node-{{each.node}} {{each.peer}}\\n\"}\n", ""},
		{"the port in a file alone is enough",
			"  process:\n    command: [nginx, -c, n.conf]\n    files: [{path: n.conf, content: 'listen {{listen}};'}]\n", ""},
		{"no port anywhere",
			"  process:\n    command: [nginx, -c, n.conf]\n    files: [{path: n.conf, content: 'listen 80;'}]\n", "start.process.command: must pass {{port}} or {{listen}}"},
		{"a misspelt placeholder in the command",
			"  process: {command: [x, '{{prot}}', '{{port}}']}\n", "start.process.command[1]: unknown placeholder {{prot}}"},
		{"a misspelt placeholder in env",
			"  docker: {image: i, env: {P: '{{peer-port}}', Q: '{{peerport}}'}}\n", "start.docker.env.Q: unknown placeholder {{peerport}}"},
		{"a repeated line's placeholder in env",
			"  docker: {image: i, env: {P: '{{each.peer}}'}}\n", "start.docker.env.P: {{each.peer}} repeats a line of a file once per replica"},
		{"a client's placeholder in a file",
			"  docker: {image: i, files: [{path: /a, content: '{{client}}'}]}\n", "start.docker.files[0]: {{client}} is a client's ID"},
		{"the harness's Redis without a managed store",
			"  docker: {image: i, command: ['--redis={{redis}}']}\n", "start: {{redis}} is the Redis the harness runs for the target: declare store: {redis: managed}"},
		{"a misspelt repeated placeholder in a file",
			"  docker: {image: i, files: [{path: /a, content: 'peer {{each.addr}}'}]}\n", "start.docker.files[0]: unknown placeholder {{each.addr}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(base(tt.start)))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
