package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writers name the command that leaves each result file in a run directory, for the error
// a reader gets when the file is missing.
var writers = map[string]string{
	SummaryFile:    "harness loadtest",
	BenchFile:      "harness bench",
	AutoscaleFile:  "harness run autoscale --out DIR",
	ClaimCheckFile: "harness run claimcheck --out DIR",
	ShardFile:      "harness attack",
	HuntFile:       "harness hunt",
}

// Write writes v as indented JSON to dir/name, creating dir. It writes a temporary file in
// dir and renames it into place, so that a reader (a report, a baseline, a run interrupted
// mid-write) never sees half a file.
func Write(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the run directory %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s in %s: %w", name, dir, err)
	}
	return nil
}

// Read reads dir/name, written by Write, into a T.
func Read[T any](dir, name string) (T, error) {
	var v T
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if w, ok := writers[name]; ok {
			return v, fmt.Errorf("read %s: %w (is %s a run directory written by %s?)", name, err, dir, w)
		}
	}
	if err != nil {
		return v, fmt.Errorf("read %s: %w", name, err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("%s: not a valid %s: %w", path, name, err)
	}
	return v, nil
}
