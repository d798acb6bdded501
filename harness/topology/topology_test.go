package topology

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParse(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		in    string
		want  []Zone
		err   string
		round string
	}{
		{in: "near:4:0.5ms,far:4:40ms±10ms", want: []Zone{{"near", 4, 500 * time.Microsecond, 0}, {"far", 4, 40 * ms, 10 * ms}}, round: "near:4:500µs,far:4:40ms±10ms"},
		{in: " a:1:0s , b:2:80ms+-5ms", want: []Zone{{"a", 1, 0, 0}, {"b", 2, 80 * ms, 5 * ms}}, round: "a:1:0s,b:2:80ms±5ms"},
		{in: "", want: nil},
		{in: "far:4", err: "give name:replicas:latency"},
		{in: "far:x:40ms", err: `replicas "x" is not a whole number`},
		{in: "far:0:40ms", err: "replicas must be > 0 (got 0)"},
		{in: "far:4:forty", err: `latency "forty"`},
		{in: "far:4:40ms±ten", err: `jitter "ten"`},
		{in: "far:4:10ms±20ms", err: "jitter 20ms is more than the latency 10ms"},
		{in: "far:4:40.05ms", err: "steps of 0.1 ms"},
		{in: "a:1:1ms,a:1:2ms", err: `zone "a" is declared twice`},
		{in: "a b:1:1ms", err: "name it with letters"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): err %v, want it to say %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if len(got.Zones) != len(tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got.Zones, tc.want)
			continue
		}
		for i := range tc.want {
			if got.Zones[i] != tc.want[i] {
				t.Errorf("Parse(%q) zone %d = %+v, want %+v", tc.in, i, got.Zones[i], tc.want[i])
			}
		}
		if got.String() != tc.round {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got.String(), tc.round)
		}
	}
}

func TestPlacement(t *testing.T) {
	top, err := Parse("a:2:1ms,b:3:30ms±5ms,c:1:10ms")
	if err != nil {
		t.Fatal(err)
	}
	if top.Replicas() != 6 {
		t.Errorf("Replicas() = %d, want 6", top.Replicas())
	}
	for i, want := range []int{0, 0, 1, 1, 1, 2, -1} {
		if got := top.ZoneOf(i); got != want {
			t.Errorf("ZoneOf(%d) = %d, want %d", i, got, want)
		}
	}
	if m := top.Members(1); len(m) != 3 || m[0] != 2 || m[2] != 4 {
		t.Errorf("Members(1) = %v, want [2 3 4]", m)
	}
	if k := top.Farthest(); k != 1 {
		t.Errorf("Farthest() = %d, want 1 (b, 30 ms ± 5 ms)", k)
	}
	if top.Index("c") != 2 || top.Index("d") != -1 {
		t.Errorf("Index(c) = %d, Index(d) = %d", top.Index("c"), top.Index("d"))
	}
	if l, j := top.Between(1, 2); l != 40*time.Millisecond || j != 5*time.Millisecond {
		t.Errorf("Between(b, c) = %v±%v, want 40ms±5ms", l, j)
	}
	for k, want := range []int{2, 0, 0} { // a and c are 11 ms apart, b is 31 or 40 ms from them
		if got := top.NearestTo(k); got != want {
			t.Errorf("NearestTo(%d) = %d, want %d", k, got, want)
		}
	}
	if one := (Topology{Zones: top.Zones[:1]}); one.NearestTo(0) != -1 {
		t.Errorf("NearestTo(0) of one zone = %d, want -1", one.NearestTo(0))
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		doc, want, err string
	}{
		{doc: `"near:4:1ms,far:4:40ms±10ms"`, want: "near:4:1ms,far:4:40ms±10ms"},
		{doc: "zones:\n  - {name: near, replicas: 4, latency: 0.5ms}\n  - {name: far, replicas: 4, latency: 40ms, jitter: 10ms}\n", want: "near:4:500µs,far:4:40ms±10ms"},
		{doc: "- {name: us, replicas: 2, latency: 1ms}\n", want: "us:2:1ms"},
		{doc: "zones: []\n", err: "declares no zone"},
		{doc: "regions: x\n", err: "list of zones under zones:"},
		{doc: "- {name: us, replicas: 2, latency: soon}\n", err: `zone "us": latency "soon"`},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tc.doc), &n); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(n.Content[0])
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Decode(%q): err %v, want it to say %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("Decode(%q) = %q, %v; want %q", tc.doc, got, err, tc.want)
		}
	}
}
