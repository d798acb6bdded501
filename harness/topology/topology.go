// Package topology places a fleet's replicas in named zones, each with its own network link
// to the counter store: a one-way latency with jitter per link. A load test builds every
// zone's link (a toxiproxy proxy per zone, run in the harness's process) and gives each
// replica its zone's address for the store, so that the far zone's store calls take the
// round trip a region away would. Zones are declared on the command line (--zones), in a
// topology file (--topology) or in a target file's topology section (docs/zones.md):
//
//	near:4:0.5ms,far:4:40ms±10ms
//
// is four replicas whose store is 0.5 ms away each way and four 40 ms ± 10 ms away.
package topology

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Zone is a group of replicas with one link to the store.
type Zone struct {
	// Name names the zone in the per-zone figures and in the link faults (letters, digits,
	// '-', '_').
	Name string `json:"name" yaml:"name"`
	// Replicas is how many replicas the zone holds; zones hold consecutive node indexes in
	// the order they are declared.
	Replicas int `json:"replicas" yaml:"replicas"`
	// Latency is the link's one-way latency: every byte to the store and every byte back
	// waits that long (a round trip of twice it); Jitter is the most by which each wait
	// varies, either way.
	Latency time.Duration `json:"latency_ns" yaml:"-"`
	Jitter  time.Duration `json:"jitter_ns,omitempty" yaml:"-"`
}

// Topology is the zones of a fleet in declaration order; the zero value is no topology (one
// fleet, no links).
type Topology struct {
	Zones []Zone `json:"zones"`
}

// IsZero reports whether t declares no zone.
func (t Topology) IsZero() bool { return len(t.Zones) == 0 }

// Replicas is how many replicas the zones hold together.
func (t Topology) Replicas() int {
	n := 0
	for _, z := range t.Zones {
		n += z.Replicas
	}
	return n
}

// ZoneOf is the index of the zone that holds replica i, or -1 when none does.
func (t Topology) ZoneOf(i int) int {
	for k, z := range t.Zones {
		if i < z.Replicas {
			return k
		}
		i -= z.Replicas
	}
	return -1
}

// Members are the node indexes zone k holds.
func (t Topology) Members(k int) []int {
	first := 0
	for _, z := range t.Zones[:k] {
		first += z.Replicas
	}
	out := make([]int, t.Zones[k].Replicas)
	for i := range out {
		out[i] = first + i
	}
	return out
}

// Index is the index of the zone named name, or -1.
func (t Topology) Index(name string) int {
	for k, z := range t.Zones {
		if z.Name == name {
			return k
		}
	}
	return -1
}

// Farthest is the index of the zone with the longest link (the first of equals); -1 with no
// zone. A link fault with no zone named hits it.
func (t Topology) Farthest() int {
	k := -1
	for i, z := range t.Zones {
		if k < 0 || z.Latency+z.Jitter > t.Zones[k].Latency+t.Zones[k].Jitter {
			k = i
		}
	}
	return k
}

// Between is the one-way latency and jitter of the link between a replica of zone a and a
// peer of zone b, for a limiter whose nodes keep their counts among themselves: both zones'
// own links to the network between them, added.
func (t Topology) Between(a, b int) (latency, jitter time.Duration) {
	za, zb := t.Zones[a], t.Zones[b]
	return za.Latency + zb.Latency, za.Jitter + zb.Jitter
}

// NearestTo is the index of the zone other than k whose link to k (Between) is the shortest
// (the first of equals); -1 when k is the only zone.
func (t Topology) NearestTo(k int) int {
	n, best := -1, time.Duration(0)
	for i := range t.Zones {
		if i == k {
			continue
		}
		l, j := t.Between(k, i)
		if n < 0 || l+j < best {
			n, best = i, l+j
		}
	}
	return n
}

// String is the topology in the --zones form.
func (t Topology) String() string {
	parts := make([]string, len(t.Zones))
	for i, z := range t.Zones {
		parts[i] = z.String()
	}
	return strings.Join(parts, ",")
}

// String is the zone in the --zones form: name:replicas:latency[±jitter].
func (z Zone) String() string {
	s := fmt.Sprintf("%s:%d:%s", z.Name, z.Replicas, z.Latency)
	if z.Jitter > 0 {
		s += "±" + z.Jitter.String()
	}
	return s
}

// Check says what is wrong with the topology, if anything.
func (t Topology) Check() error {
	var errs []error
	seen := map[string]bool{}
	for _, z := range t.Zones {
		switch {
		case z.Name == "" || strings.ContainsFunc(z.Name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}):
			errs = append(errs, fmt.Errorf("zone %q: name it with letters, digits, '-' and '_'", z.Name))
		case seen[z.Name]:
			errs = append(errs, fmt.Errorf("zone %q is declared twice", z.Name))
		}
		seen[z.Name] = true
		if z.Replicas <= 0 {
			errs = append(errs, fmt.Errorf("zone %q: replicas must be > 0 (got %d)", z.Name, z.Replicas))
		}
		if z.Latency < 0 || z.Jitter < 0 {
			errs = append(errs, fmt.Errorf("zone %q: latency and jitter must be >= 0 (got %v ± %v)", z.Name, z.Latency, z.Jitter))
		}
		if z.Jitter > z.Latency {
			errs = append(errs, fmt.Errorf("zone %q: jitter %v is more than the latency %v: a link cannot answer before it is asked", z.Name, z.Jitter, z.Latency))
		}
		if z.Latency%(100*time.Microsecond) != 0 || z.Jitter%(100*time.Microsecond) != 0 {
			errs = append(errs, fmt.Errorf("zone %q: give latency and jitter in steps of 0.1 ms (got %v ± %v)", z.Name, z.Latency, z.Jitter))
		}
	}
	return errors.Join(errs...)
}

// Parse reads the --zones form: comma-separated zones, each name:replicas:latency with an
// optional ±jitter (or +-jitter), as near:4:0.5ms,far:4:40ms±10ms. Empty is no topology.
func Parse(s string) (Topology, error) {
	var t Topology
	if strings.TrimSpace(s) == "" {
		return t, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		z, err := parseZone(strings.TrimSpace(part))
		if err != nil {
			return Topology{}, fmt.Errorf("--zones %q: %w", s, err)
		}
		t.Zones = append(t.Zones, z)
	}
	if err := t.Check(); err != nil {
		return Topology{}, fmt.Errorf("--zones %q: %w", s, err)
	}
	return t, nil
}

func parseZone(s string) (Zone, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return Zone{}, fmt.Errorf("zone %q: give name:replicas:latency[±jitter], as far:4:40ms±10ms", s)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return Zone{}, fmt.Errorf("zone %q: replicas %q is not a whole number", s, f[1])
	}
	lat, jit, err := parseLink(f[2])
	if err != nil {
		return Zone{}, fmt.Errorf("zone %q: %w", s, err)
	}
	return Zone{Name: f[0], Replicas: n, Latency: lat, Jitter: jit}, nil
}

// parseLink reads latency[±jitter].
func parseLink(s string) (lat, jit time.Duration, err error) {
	l, j, ok := strings.Cut(s, "±")
	if !ok {
		l, j, ok = strings.Cut(s, "+-")
	}
	if lat, err = time.ParseDuration(strings.TrimSpace(l)); err != nil {
		return 0, 0, fmt.Errorf("latency %q: give a duration, as 40ms", l)
	}
	if ok {
		if jit, err = time.ParseDuration(strings.TrimSpace(j)); err != nil {
			return 0, 0, fmt.Errorf("jitter %q: give a duration, as 10ms", j)
		}
	}
	return lat, jit, nil
}

// fileZone is a zone as a topology file or a target file's topology section writes it.
type fileZone struct {
	Name     string `yaml:"name"`
	Replicas int    `yaml:"replicas"`
	Latency  string `yaml:"latency"`
	Jitter   string `yaml:"jitter"`
}

// Decode reads a topology from YAML: either the --zones form as one string, or a list of
// zones, each {name, replicas, latency, jitter}, under the key zones or as the node itself:
//
//	zones:
//	  - {name: near, replicas: 4, latency: 0.5ms}
//	  - {name: far, replicas: 4, latency: 40ms, jitter: 10ms}
func Decode(n *yaml.Node) (Topology, error) {
	if n.Kind == yaml.ScalarNode {
		return Parse(n.Value)
	}
	if n.Kind == yaml.MappingNode {
		var doc struct {
			Zones yaml.Node `yaml:"zones"`
		}
		if err := n.Decode(&doc); err != nil {
			return Topology{}, err
		}
		if doc.Zones.Kind == 0 {
			return Topology{}, errors.New("a topology is a list of zones under zones:, or the --zones form as one string")
		}
		return Decode(&doc.Zones)
	}
	var zs []fileZone
	if err := n.Decode(&zs); err != nil {
		return Topology{}, fmt.Errorf("a topology is a list of zones, each {name, replicas, latency, jitter}: %w", err)
	}
	var t Topology
	for _, fz := range zs {
		z := Zone{Name: fz.Name, Replicas: fz.Replicas}
		link := fz.Latency
		if fz.Jitter != "" {
			link += "±" + fz.Jitter
		}
		var err error
		if z.Latency, z.Jitter, err = parseLink(link); err != nil {
			return Topology{}, fmt.Errorf("zone %q: %w", fz.Name, err)
		}
		t.Zones = append(t.Zones, z)
	}
	if len(t.Zones) == 0 {
		return Topology{}, errors.New("the topology declares no zone")
	}
	return t, t.Check()
}

// Load reads a topology file (Decode's forms, YAML).
func Load(path string) (Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Topology{}, fmt.Errorf("read the topology file: %w", err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return Topology{}, fmt.Errorf("%s: the file is empty: declare zones:", path)
	}
	t, err := Decode(n.Content[0])
	if err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
