package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/edgeproof/rlharness/harness/result"
)

// profileTop is how many functions a profile keeps, by flat share.
const profileTop = 12

// profiled runs f under a CPU profile and takes the allocations it made: the generator's own
// cost per request, whatever the targets cost (they run in other processes). requests is
// what f sent; f's error is returned with what was measured. With dir set, the raw profiles
// are written there too, as <name>.cpu.pprof and <name>.allocs.pprof for go tool pprof.
func profiled(dir, name string, f func() (requests int, err error)) (result.Profile, error) {
	p := result.Profile{Name: name}
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		return p, fmt.Errorf("start the CPU profile: %w (is another profile running?)", err)
	}
	allocsBefore, err := allocProfile()
	if err != nil {
		pprof.StopCPUProfile()
		return p, err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	n, runErr := f()
	wall := time.Since(start)
	runtime.ReadMemStats(&ms1)
	pprof.StopCPUProfile()
	allocsAfter, err := allocProfile()
	if err != nil {
		return p, err
	}
	p.Requests, p.WallSeconds = n, wall.Seconds()
	cp, err := profile.Parse(bytes.NewReader(cpu.Bytes()))
	if err != nil {
		return p, fmt.Errorf("read the CPU profile: %w", err)
	}
	var cpuNs int64
	var cum map[string]int64
	p.CPU, cpuNs, cum = top(cp, "cpu", profileTop)
	p.CPUSeconds = float64(cpuNs) / 1e9
	if cpuNs > 0 {
		// The collector's background workers and the assists it charges allocating code.
		p.GCShare = float64(cum["runtime.gcBgMarkWorker"]+cum["runtime.gcAssistAlloc"]) / float64(cpuNs)
	}
	allocsBefore.Scale(-1)
	delta, err := profile.Merge([]*profile.Profile{allocsAfter, allocsBefore})
	if err != nil {
		return p, fmt.Errorf("subtract the allocation profiles: %w", err)
	}
	p.Alloc, _, _ = top(delta, "alloc_space", profileTop)
	if dir != "" {
		if err := writeProfiles(dir, name, cpu.Bytes(), delta); err != nil {
			return p, err
		}
	}
	if n > 0 {
		p.CPUPerRequestUs = p.CPUSeconds * 1e6 / float64(n)
		p.AllocsPerRequest = float64(ms1.Mallocs-ms0.Mallocs) / float64(n)
		p.AllocBytesPerRequest = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(n)
	}
	return p, runErr
}

func writeProfiles(dir, name string, cpu []byte, allocs *profile.Profile) error {
	base := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the profile directory: %w", err)
	}
	if err := os.WriteFile(base+".cpu.pprof", cpu, 0o644); err != nil {
		return fmt.Errorf("write the CPU profile: %w", err)
	}
	var b bytes.Buffer
	if err := allocs.Write(&b); err != nil {
		return fmt.Errorf("encode the allocation profile: %w", err)
	}
	if err := os.WriteFile(base+".allocs.pprof", b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the allocation profile: %w", err)
	}
	return nil
}

func allocProfile() (*profile.Profile, error) {
	var b bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&b, 0); err != nil {
		return nil, fmt.Errorf("write the allocation profile: %w", err)
	}
	p, err := profile.Parse(&b)
	if err != nil {
		return nil, fmt.Errorf("read the allocation profile: %w", err)
	}
	return p, nil
}

// top is p's n functions with the highest flat share of the sample type typ (a function's
// own samples; cum counts every sample it is on the stack of, once), and typ's total.
func top(p *profile.Profile, typ string, n int) ([]result.ProfileFunc, int64, map[string]int64) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == typ {
			idx = i
		}
	}
	if idx < 0 {
		return nil, 0, nil
	}
	flat, cum := map[string]int64{}, map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v == 0 {
			continue
		}
		total += v
		seen := map[string]bool{}
		for li, loc := range s.Location {
			for k, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := shortName(line.Function.Name)
				if li == 0 && k == 0 {
					flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	if total <= 0 {
		return nil, total, cum
	}
	names := make([]string, 0, len(flat))
	for name := range flat {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if flat[a] != flat[b] {
			return int(min(max(flat[b]-flat[a], -1), 1))
		}
		return strings.Compare(a, b)
	})
	var out []result.ProfileFunc
	for _, name := range names[:min(n, len(names))] {
		out = append(out, result.ProfileFunc{Function: name,
			Flat: float64(flat[name]) / float64(total), Cum: float64(cum[name]) / float64(total)})
	}
	return out, total, cum
}

// shortName drops the module path from our own functions.
func shortName(fn string) string {
	return strings.TrimPrefix(fn, "github.com/edgeproof/rlharness/")
}
