package plan

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edgeproof/rlharness/harness/result"
)

// ReferenceDir is where the reference costs live in the repository (make plan-reference).
const ReferenceDir = "harness/plan/reference"

// reference holds the bench.json of every make plan-reference run: the bounded design's
// slice at several rates from each of HS1's two populations at one node, so that a plan
// answers on a fresh clone, before the user has measured anything.
//
//go:embed reference/*/bench.json
var reference embed.FS

// Input is one slice run's bench.json and where it was read from.
type Input struct {
	File  string
	Bench result.Bench
}

// Reference is the reference costs built into the harness, each named by its path in the
// repository, in the order of their directories' names.
func Reference() ([]Input, error) {
	files, err := fs.Glob(reference, "reference/*/bench.json")
	if err != nil {
		return nil, err
	}
	var out []Input
	for _, f := range files {
		b, err := reference.ReadFile(f)
		if err != nil {
			return nil, err
		}
		in, err := decode(b, path.Join(path.Dir(ReferenceDir), f))
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no reference costs are built in: run make plan-reference, or give --from")
	}
	return out, nil
}

// Read reads the slice runs at paths: bench.json files, or directories whose bench.json,
// or whose subdirectories' bench.json, are read.
func Read(paths []string) ([]Input, error) {
	var out []Input
	for _, p := range paths {
		files := []string{p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, result.BenchFile))
			more, _ := filepath.Glob(filepath.Join(p, "*", result.BenchFile))
			files = append(files, more...)
			if len(files) == 0 {
				return nil, fmt.Errorf("%s holds no %s, nor do its directories: give the bench.json of harness bench --slice", p, result.BenchFile)
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", f, err)
			}
			in, err := decode(b, f)
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		}
	}
	return out, nil
}

func decode(b []byte, file string) (Input, error) {
	in := Input{File: file}
	if err := json.Unmarshal(b, &in.Bench); err != nil {
		return in, fmt.Errorf("%s: not a valid %s: %w", file, result.BenchFile, err)
	}
	return in, nil
}

// describe names a set of inputs in a line: the files (their common directory where they
// share one), the commits and the machines' cores.
func describe(ins []Input) string {
	var files, commits []string
	cores := map[int]bool{}
	for _, in := range ins {
		files = append(files, in.File)
		if c := orUnknownCommit(in.Bench.Commit); !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
		cores[in.Bench.Cores] = true
	}
	where := strings.Join(files, ", ")
	if len(files) > 1 {
		if d := commonDir(files); d != "" {
			where = fmt.Sprintf("%d runs in %s", len(files), d)
		}
	}
	var cs []string
	for c := range cores {
		cs = append(cs, fmt.Sprint(c))
	}
	slices.Sort(cs)
	return fmt.Sprintf("%s (commit %s, %s-core machine)", where, strings.Join(commits, ", "), strings.Join(cs, "/"))
}

// commonDir is the directory every file is below, "" when none but the root is.
func commonDir(files []string) string {
	d := filepath.Dir(filepath.Dir(files[0]))
	for d != "." && d != "/" {
		all := true
		for _, f := range files {
			if !strings.HasPrefix(f, d+string(filepath.Separator)) {
				all = false
				break
			}
		}
		if all {
			return d
		}
		d = filepath.Dir(d)
	}
	return ""
}
