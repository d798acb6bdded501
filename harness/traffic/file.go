package traffic

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// OutcomesFile is the name of the outcome file in a run directory.
const OutcomesFile = "outcomes.csv"

// outcomeHeader names the columns; durations are integer nanoseconds. decided_ns, the
// limiter's decision time (Outcome.DecidedAt), is empty where the limiter did not say; a
// file written before it was recorded (oldHeader) has no such column.
const (
	outcomeHeader = "index,code,err,sent_ns,latency_ns,lateness_ns,decided_ns"
	oldHeader     = "index,code,err,sent_ns,latency_ns,lateness_ns"
)

// flushEvery bounds what a crash loses: at most this much wall time of
// outcomes sits in the buffer.
const flushEvery = time.Second

// Writer appends outcomes to a CSV file, one line each, so that a run that
// crashes keeps what it measured up to its last flush. It is not safe for
// concurrent use; Run calls its sink from one goroutine.
type Writer struct {
	f         *os.File
	w         *bufio.Writer
	line      []byte
	n         int
	lastFlush time.Time
}

// Create opens dir/outcomes.csv for appending, creating dir and the file
// (with its header line) when they do not exist.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	path := filepath.Join(dir, OutcomesFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open outcome file: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 256<<10), lastFlush: time.Now()}
	if st, err := f.Stat(); err != nil {
		f.Close()
		return nil, fmt.Errorf("open outcome file: %w", err)
	} else if st.Size() == 0 {
		w.w.WriteString(outcomeHeader + "\n")
	}
	return w, nil
}

// Replace is Create for a new run: an outcome file an earlier run left in dir (a run
// directory used again, runs/latest) is removed first, so that its outcomes are not read as
// this run's.
func Replace(dir string) (*Writer, error) {
	if err := os.Remove(filepath.Join(dir, OutcomesFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("replace the outcome file of an earlier run: %w", err)
	}
	return Create(dir)
}

// Write appends one outcome; it has the signature of Run's sink.
func (w *Writer) Write(o Outcome) error {
	b := w.line[:0]
	b = strconv.AppendInt(b, int64(o.Index), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(o.Code), 10)
	b = append(b, ',')
	b = append(b, o.Err.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.Sent), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.Latency), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.Lateness), 10)
	b = append(b, ',')
	if o.Decided {
		b = strconv.AppendInt(b, int64(o.DecidedAt), 10)
	}
	b = append(b, '\n')
	w.line = b
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("write outcome: %w", err)
	}
	// Reading the clock on every line would cost more than the write.
	if w.n++; w.n%256 == 0 && time.Since(w.lastFlush) >= flushEvery {
		return w.Flush()
	}
	return nil
}

// Flush writes buffered outcomes to the file.
func (w *Writer) Flush() error {
	w.lastFlush = time.Now()
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("flush outcomes: %w", err)
	}
	return nil
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	return errors.Join(w.Flush(), w.f.Close())
}

// ReadFile reads an outcome file written by Writer and calls fn for every
// outcome in file order. A last line without its newline is what a crash
// leaves mid-write; it is skipped, and reported by the returned count.
func ReadFile(path string, fn func(Outcome) error) (skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	skipped, err = Read(f, fn)
	if err != nil {
		return skipped, fmt.Errorf("%s:%w", path, err)
	}
	return skipped, nil
}

// Read is ReadFile on a reader; errors begin with the line number.
func Read(r io.Reader, fn func(Outcome) error) (skipped int, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("%d: line longer than %d bytes; not an outcome file", n, br.Size())
		}
		if err == io.EOF {
			if len(line) > 0 {
				return 1, nil
			}
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%d: %w", n, err)
		}
		line = line[:len(line)-1]
		if n == 1 && (string(line) == outcomeHeader || string(line) == oldHeader) {
			continue
		}
		o, err := parseOutcome(line)
		if err != nil {
			return 0, fmt.Errorf("%d: %w", n, err)
		}
		if err := fn(o); err != nil {
			return 0, err
		}
	}
}

// parseOutcome reads one line: six fields (a file written before decided_ns) or seven.
func parseOutcome(line []byte) (Outcome, error) {
	var f [7][]byte
	n := 0
	for ; n < len(f); n++ {
		k := bytes.IndexByte(line, ',')
		if k < 0 || n == len(f)-1 {
			f[n] = line
			n++
			break
		}
		f[n], line = line[:k], line[k+1:]
	}
	if n < len(f)-1 {
		return Outcome{}, fmt.Errorf("%d fields, want %d (%s)", n, len(f), outcomeHeader)
	}
	var nums [5]int64
	for i, j := range []int{0, 1, 3, 4, 5} {
		v, err := strconv.ParseInt(string(f[j]), 10, 64)
		if err != nil {
			return Outcome{}, fmt.Errorf("field %d: %w", j+1, err)
		}
		nums[i] = v
	}
	kind, ok := parseErrKind(string(f[2]))
	if !ok {
		return Outcome{}, fmt.Errorf("field 3: unknown error kind %q", f[2])
	}
	if nums[0] < 0 || nums[1] < 0 || nums[1] > 999 {
		return Outcome{}, fmt.Errorf("index %d or code %d out of range", nums[0], nums[1])
	}
	o := Outcome{Index: int(nums[0]), Code: uint16(nums[1]), Err: kind,
		Sent: time.Duration(nums[2]), Latency: time.Duration(nums[3]), Lateness: time.Duration(nums[4])}
	if n == len(f) && len(f[6]) > 0 {
		v, err := strconv.ParseInt(string(f[6]), 10, 64)
		if err != nil {
			return Outcome{}, fmt.Errorf("field 7: %w", err)
		}
		o.DecidedAt, o.Decided = time.Duration(v), true
	}
	return o, nil
}
