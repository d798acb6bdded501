package rediscluster

import (
	"slices"
	"testing"
)

// CLUSTER NODES of a 3 + 3 cluster whose first master has failed and whose replica took
// its slots over, with one slot being migrated.
const nodesAfterFailover = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@40004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@40003 master - 0 1426238318243 3 connected 10923-16383 [10923->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@40005 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@40006 master - 0 1426238317741 7 connected 0-5460
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001 myself,master,fail - 0 0 1 connected
`

func TestParseNodesAndRanges(t *testing.T) {
	nodes, err := ParseNodes(nodesAfterFailover)
	if err != nil {
		t.Fatal(err)
	}
	v := View{Nodes: nodes}
	tests := []struct {
		addr            string
		master, replica bool
		failing         bool
		role            string
		slots           [][2]int
	}{
		{"127.0.0.1:30001", true, false, true, "master fail", nil},
		{"127.0.0.1:30004", false, true, false, "replica", nil},
		{"127.0.0.1:30006", true, false, false, "master", [][2]int{{0, 5460}}},
		{"127.0.0.1:30003", true, false, false, "master", [][2]int{{10923, 16383}}},
	}
	for _, tt := range tests {
		n, ok := v.Node(tt.addr)
		if !ok {
			t.Fatalf("%s missing", tt.addr)
		}
		if n.Master() != tt.master || n.Replica() != tt.replica || n.Failing() != tt.failing || n.Role() != tt.role || !slices.Equal(n.Slots, tt.slots) {
			t.Errorf("%s: %+v role %q, want master=%v replica=%v failing=%v role %q slots %v", tt.addr, n, n.Role(), tt.master, tt.replica, tt.failing, tt.role, tt.slots)
		}
	}
	if self, ok := v.Self(); !ok || self.Addr != "127.0.0.1:30001" {
		t.Errorf("Self = %+v, want the node flagged myself", self)
	}
	want := []Range{{0, 5460, "127.0.0.1:30006", false}, {5461, 10922, "127.0.0.1:30002", false}, {10923, 16383, "127.0.0.1:30003", false}}
	if got := v.Ranges(); !slices.Equal(got, want) {
		t.Errorf("Ranges = %v, want %v", got, want)
	}
	if r := ownerOf(want, 7000); r == nil || r.Master != "127.0.0.1:30002" {
		t.Errorf("owner of slot 7000 = %v", r)
	}
	if _, err := ParseNodes("abc 127.0.0.1:1 master"); err == nil {
		t.Error("a short line parsed")
	}
}

func TestFreePortsLeavesTheBusPortFree(t *testing.T) {
	ports, err := FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p+BusOffset > 65535 || seen[p] {
			t.Errorf("port %d: bus port out of range or repeated (%v)", p, ports)
		}
		seen[p] = true
	}
}
