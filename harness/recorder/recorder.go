// Package recorder is the recording backend: an HTTP server the harness runs behind a
// limiter that proxies (HAProxy, nginx, Traefik), standing for the service the limiter
// protects. It answers every request 200 and records when each arrived, by the schedule
// index its URL carries (traffic.ParseSeq): what got through the limiter, on the backend's
// clock, which is the harness's own (the same host's wall clock as the generator's).
package recorder

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/harness/traffic"
)

// File is the name of a scenario's backend arrivals file in its run directory.
const File = "backend.csv"

// header names the file's columns: the schedule index and the arrival, in nanoseconds from
// the scenario's origin (the outcomes' clock).
const header = "index,arrived_ns"

// Arrival is one request that reached the backend: its schedule index (-1: its URL carried
// none) and when.
type Arrival struct {
	Index int
	At    time.Time
}

// Recorder is a running recording backend. It is safe for concurrent use.
type Recorder struct {
	srv  *http.Server
	addr string
	done chan struct{}

	mu        sync.Mutex
	recording bool
	arrivals  []Arrival
}

// Start runs a recording backend on 127.0.0.1 on a free port.
func Start() (*Recorder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the recording backend: %w", err)
	}
	r := &Recorder{addr: ln.Addr().String(), done: make(chan struct{})}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln)
	}()
	return r, nil
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	i, ok := traffic.ParseSeq(req.URL.RawQuery)
	if !ok {
		i = -1
	}
	r.mu.Lock()
	if r.recording {
		r.arrivals = append(r.arrivals, Arrival{Index: i, At: at})
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// Addr is the backend's host:port on loopback, for the limiter's configuration ({{backend}}).
func (r *Recorder) Addr() string { return r.addr }

// Record starts recording arrivals: a scenario's traffic from its origin on (what its
// warm-up sent through before is not its own). Until then, and after Take, the backend
// answers without recording, so that a caller that never takes (a hunt, a bench) does not
// make it hold every request it ever served.
func (r *Recorder) Record() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recording, r.arrivals = true, nil
}

// Take stops recording and returns what was recorded since Record, in arrival order.
func (r *Recorder) Take() []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.arrivals
	r.recording, r.arrivals = false, nil
	return out
}

// Close stops the backend; requests in flight are cut off.
func (r *Recorder) Close() error {
	err := r.srv.Close()
	<-r.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// WriteFile writes arrivals to dir/backend.csv as offsets from origin, those without an
// index included (as -1), in arrival order.
func WriteFile(dir string, origin time.Time, arrivals []Arrival) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", File, err)
	}
	f, err := os.Create(filepath.Join(dir, File))
	if err != nil {
		return fmt.Errorf("write %s: %w", File, err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(header + "\n")
	var line []byte
	for _, a := range arrivals {
		line = strconv.AppendInt(line[:0], int64(a.Index), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(a.At.Sub(origin)), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	return errors.Join(w.Flush(), f.Close())
}

// ReadFile calls fn with every arrival of a backend.csv: its schedule index (-1: none) and
// its offset from the scenario's origin. A last line without its newline (a crash mid-write)
// is skipped.
func ReadFile(path string, fn func(index int, at time.Duration)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	for n, line := range lines[:len(lines)-1] {
		if n == 0 && line == header {
			continue
		}
		is, ats, ok := strings.Cut(line, ",")
		i, err1 := strconv.Atoi(is)
		at, err2 := strconv.ParseInt(ats, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%s:%d: %q is not index,arrived_ns", path, n+1, line)
		}
		fn(i, time.Duration(at))
	}
	return nil
}
