package schedule

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func fileFixture(t *testing.T) File {
	t.Helper()
	p := Params{Limit: 600, Window: 60 * time.Second, Scale: 0.2}
	s, err := Probes(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Requests {
		s.Requests[i].Replica = int16(i % 8)
	}
	return File{
		Header: Header{Name: "slice-drop", Target: "replica", Design: "document", TimeScale: 0.2, Align: 12 * time.Second,
			Replicas: 8, Fault: &Fault{Kind: "stop", From: 14 * time.Second, To: 20 * time.Second},
			Params: []Param{{Name: "span", Value: 120, Unit: "ms"}, {Name: "lead", Value: 0.5}}, Seed: 7, Note: "x2.000"},
		Schedule: s,
	}
}

// A written schedule reads back to the same schedule and header, and writes again to the
// same bytes: a replay sends exactly what the hunt sent.
func TestScheduleFileRoundTripsByteIdentically(t *testing.T) {
	f := fileFixture(t)
	path := filepath.Join(t.TempDir(), "s", "slice-drop.json")
	if err := WriteFile(path, &f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Schedule, f.Schedule) {
		t.Fatal("the schedule read back differs from the one written")
	}
	want := f.Header
	want.Format, want.Version = FileFormat, FileVersion
	if !reflect.DeepEqual(g.Header, want) {
		t.Fatalf("header read back %+v, want %+v", g.Header, want)
	}
	var a, b bytes.Buffer
	if err := Encode(&a, &f); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&b, &g); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the schedule read back encodes to other bytes")
	}
	// The layout: one request to a line, offset in ns, client, replica.
	if !strings.Contains(a.String(), "\"requests\": [\n    [0,0,0],\n    [") || strings.Count(a.String(), "\n    [") != len(f.Schedule.Requests) {
		t.Errorf("requests are not one to a line as [offset_ns,client,replica]:\n%.600s", a.String())
	}
}

func TestScheduleFileRefusesWhatItCannotReplay(t *testing.T) {
	good := func() string {
		var b bytes.Buffer
		f := File{Header: Header{Name: "x", Replicas: 2}, Schedule: Schedule{
			Clients:  []Client{{ID: "c", Limit: 1, Window: time.Second}},
			Requests: []Request{{At: 0}, {At: 5, Replica: 1}},
			Duration: 10,
		}}
		if err := Encode(&b, &f); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}()
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"format", `"rlharness-schedule"`, `"k6"`, `format "k6"`},
		{"version", `"version": 1`, `"version": 9`, "version 9"},
		{"unsorted", "[5,0,1]", "[0,0,1]\n,[-1,0,0]", "must be sorted"},
		{"replicas", `"replicas": 2`, `"replicas": 1`, "name 2 replicas"},
		{"client", "[5,0,1]", "[5,3,1]", "names client 3"},
		{"truncated", "\n  ]\n}", "", "not a schedule file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(good, tc.from, tc.to, 1)
			if text == good {
				t.Fatalf("fixture has no %q", tc.from)
			}
			_, err := Decode(strings.NewReader(text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := Decode(strings.NewReader(good)); err != nil {
		t.Fatalf("the good file: %v", err)
	}
}
