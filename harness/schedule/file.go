package schedule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A schedule file holds a schedule as a value on disk: every request's offset, client and
// replica, the clients' declared limits, and the conditions a replay needs. harness hunt
// writes one per family (the traffic that did the most harm); harness loadtest --schedule
// and harness attack --schedule send it again exactly. The layout is JSON (docs/hunt.md):
//
//	{
//	  "format": "rlharness-schedule",
//	  "version": 1,
//	  "name": "slice-drop",
//	  ...                                    the Header's other fields
//	  "duration_ns": 24000000000,
//	  "clients": [{"id": "hunt-...", "limit": 600, "window_ns": 12000000000, ...}],
//	  "requests": [
//	    [11700000000, 0, 3],                 offset in ns from the origin, client, replica
//	    ...
//	  ]
//	}
const (
	FileFormat  = "rlharness-schedule"
	FileVersion = 1
)

// Header is everything in a schedule file but the requests and clients: where the traffic
// came from and what a replay needs besides it.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Name names the traffic, e.g. the hunt family that made it.
	Name string `json:"name"`
	// Target is the system it was aimed at: "replica" (the built-in design) or a target
	// file's name; Design is the built-in replica's --design when one was set.
	Target string `json:"target,omitempty"`
	Design string `json:"design,omitempty"`
	// TimeScale is the run's time scale: a target's window over the documents' 60 s, or
	// the built-in replica's --time-scale.
	TimeScale float64 `json:"time_scale"`
	// Align is the phase of the offsets: the run's origin is a whole multiple of Align
	// since the Unix epoch (the clients' window), as harness loadtest starts its runs.
	Align time.Duration `json:"align_ns"`
	// Replicas is how many replicas the hunt's fleet had; the requests name at most that
	// many.
	Replicas int `json:"replicas"`
	// Fault, when set, is a store fault the traffic was aimed at; a replay injects it at
	// the same offsets.
	Fault *Fault `json:"fault,omitempty"`
	// Params are the generator's parameters, in its order.
	Params []Param `json:"params,omitempty"`
	Seed   uint64  `json:"seed,omitempty"`
	// Note is free text for a reader: what the traffic found when it was made.
	Note string `json:"note,omitempty"`
}

// Fault is a store fault as a schedule file records it: what was done to the store and
// when, in offsets from the run's origin.
type Fault struct {
	Kind string        `json:"kind"` // stop | pause (harness loadtest's fault names)
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// Param is one named parameter of the generator that made a schedule.
type Param struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// File is a schedule with its header.
type File struct {
	Header
	Schedule Schedule
}

type fileClient struct {
	ID      string        `json:"id"`
	Limit   int           `json:"limit"`
	Window  time.Duration `json:"window_ns"`
	Pattern string        `json:"pattern,omitempty"`
	Probe   bool          `json:"probe,omitempty"`
}

// fileHead is the JSON object before the requests.
type fileHead struct {
	Header
	Duration time.Duration `json:"duration_ns"`
	Clients  []fileClient  `json:"clients"`
}

// fileBody is the whole file as it is read.
type fileBody struct {
	fileHead
	Requests [][3]int64 `json:"requests"`
}

// Encode writes f in the schedule file layout. The same file always encodes to the same
// bytes: Encode(Decode(Encode(f))) is Encode(f).
func Encode(w io.Writer, f *File) error {
	if err := f.Schedule.Validate(); err != nil {
		return fmt.Errorf("write a schedule file: %w", err)
	}
	h := fileHead{Header: f.Header, Duration: f.Schedule.Duration, Clients: make([]fileClient, len(f.Schedule.Clients))}
	h.Format, h.Version = FileFormat, FileVersion
	for i, c := range f.Schedule.Clients {
		h.Clients[i] = fileClient{ID: c.ID, Limit: c.Limit, Window: c.Window, Pattern: c.Pattern, Probe: c.Probe}
	}
	head, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("write a schedule file: %w", err)
	}
	// The head ends in "\n}"; the requests go inside it, one to a line.
	bw := bufio.NewWriter(w)
	bw.Write(bytes.TrimSuffix(head, []byte("\n}")))
	bw.WriteString(",\n  \"requests\": [")
	var line []byte
	for i, r := range f.Schedule.Requests {
		line = line[:0]
		if i > 0 {
			line = append(line, ',')
		}
		line = append(line, "\n    ["...)
		line = strconv.AppendInt(line, int64(r.At), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r.Client), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r.Replica), 10)
		line = append(line, ']')
		bw.Write(line)
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}

// Decode reads a schedule file written by Encode and checks it is a usable schedule.
func Decode(r io.Reader) (File, error) {
	var b fileBody
	dec := json.NewDecoder(bufio.NewReader(r))
	if err := dec.Decode(&b); err != nil {
		return File{}, fmt.Errorf("not a schedule file: %w", err)
	}
	switch {
	case b.Format != FileFormat:
		return File{}, fmt.Errorf("not a schedule file: format %q, want %q (harness hunt writes them)", b.Format, FileFormat)
	case b.Version < 1 || b.Version > FileVersion:
		return File{}, fmt.Errorf("schedule file version %d: this harness reads version 1 to %d; use the harness that wrote it", b.Version, FileVersion)
	}
	f := File{Header: b.Header}
	s := &f.Schedule
	s.Duration = b.Duration
	s.Clients = make([]Client, len(b.Clients))
	for i, c := range b.Clients {
		s.Clients[i] = Client{ID: c.ID, Limit: c.Limit, Window: c.Window, Pattern: c.Pattern, Probe: c.Probe}
	}
	s.Requests = make([]Request, len(b.Requests))
	for i, q := range b.Requests {
		if q[1] < 0 || q[1] > 1<<31-1 || q[2] < 0 || q[2] > 1<<15-1 {
			return File{}, fmt.Errorf("request %d: client %d or replica %d out of range", i, q[1], q[2])
		}
		s.Requests[i] = Request{At: time.Duration(q[0]), Client: int32(q[1]), Replica: int16(q[2])}
	}
	if err := s.Validate(); err != nil {
		return File{}, err
	}
	if b.Align < 0 || b.Replicas < 0 {
		return File{}, fmt.Errorf("align %v and replicas %d must be >= 0", b.Align, b.Replicas)
	}
	if need := s.Replicas(); b.Replicas > 0 && need > b.Replicas {
		return File{}, fmt.Errorf("the requests name %d replicas but the file says the fleet had %d", need, b.Replicas)
	}
	if fl := b.Fault; fl != nil && (fl.To <= fl.From || fl.From < 0) {
		return File{}, fmt.Errorf("fault %s from %v to %v: want 0 <= from < to", fl.Kind, fl.From, fl.To)
	}
	return f, nil
}

// WriteFile writes f to path through a temporary file renamed into place, creating the
// directory.
func WriteFile(path string, f *File) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = Encode(tmp, f)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadFile reads a schedule file; errors name the path.
func ReadFile(path string) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return File{}, fmt.Errorf("schedule file %s does not exist (harness hunt writes them under its --out, schedules/)", path)
		}
		return File{}, err
	}
	defer fh.Close()
	f, err := Decode(fh)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
