package traffic

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// Pacer is a vegeta.Pacer that releases the schedule's requests at their
// offsets: hit n waits until Requests[n].At and the attack stops after the
// last. A request that is due is released at once, so a generator that has
// fallen behind catches up instead of stretching the schedule.
type Pacer struct {
	reqs   []schedule.Request
	origin atomic.Pointer[time.Time]
	// shift is how long after the origin the attack began, learnt on the
	// first Pace when the origin was given: the attack's elapsed time plus
	// shift is the time since the origin.
	shift    time.Duration
	fixed    bool
	shiftSet bool
}

// NewPacer paces s from the instant the attack begins. It keeps a reference
// to s.Requests, which must not change while the attack runs.
func NewPacer(s *schedule.Schedule) *Pacer {
	return &Pacer{reqs: s.Requests}
}

// NewPacerFrom paces s from origin: hit n waits until origin + Requests[n].At,
// wherever the attack's own clock began. Several generators given the same
// origin send one schedule on one clock.
func NewPacerFrom(s *schedule.Schedule, origin time.Time) *Pacer {
	p := &Pacer{reqs: s.Requests, fixed: true}
	p.origin.Store(&origin)
	return p
}

// Pace implements vegeta.Pacer. Vegeta calls it from one goroutine.
func (p *Pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	switch {
	case !p.fixed && p.origin.Load() == nil:
		// The attack measures elapsed from an origin it does not expose;
		// recover it so that sent times are offsets on the schedule's clock.
		origin := time.Now().Add(-elapsed)
		p.origin.CompareAndSwap(nil, &origin)
	case p.fixed && !p.shiftSet:
		p.shift, p.shiftSet = time.Now().Add(-elapsed).Sub(*p.origin.Load()), true
	}
	if hits >= uint64(len(p.reqs)) {
		return 0, true
	}
	return max(0, p.reqs[hits].At-elapsed-p.shift), false
}

// Rate implements vegeta.Pacer: the number of requests scheduled in the
// second that starts at elapsed.
func (p *Pacer) Rate(elapsed time.Duration) float64 {
	from := sort.Search(len(p.reqs), func(i int) bool { return p.reqs[i].At >= elapsed })
	to := sort.Search(len(p.reqs), func(i int) bool { return p.reqs[i].At >= elapsed+time.Second })
	return float64(to - from)
}

// Origin is the instant the attack's elapsed time counts from, known once
// Pace has been called; the zero time before.
func (p *Pacer) Origin() time.Time {
	if o := p.origin.Load(); o != nil {
		return *o
	}
	return time.Time{}
}

// seqParam is the query parameter that carries a request's schedule index.
// Vegeta numbers results in the order workers take ticks, not in the order
// they call the targeter, so the index must travel with the request.
const seqParam = "seq="

// NewTargeter hands out the schedule's requests in order, one per call:
// GET <urls[Replica]><path>?seq=<index> with header (e.g. X-Client-ID) set to
// the client's ID. It is safe for concurrent use and returns
// vegeta.ErrNoTargets once every request has been handed out.
func NewTargeter(s *schedule.Schedule, urls []string, path, header string) vegeta.Targeter {
	bases := make([]string, len(urls))
	for i, u := range urls {
		bases[i] = strings.TrimSuffix(u, "/") + path + "?" + seqParam
	}
	return targeter(s, func(r schedule.Request) string { return bases[r.Replica] }, header)
}

// targeter is NewTargeter and NewRoutedTargeter: the schedule's requests in order, each a GET
// of base(request) followed by its index, naming its client in header.
func targeter(s *schedule.Schedule, base func(schedule.Request) string, header string) vegeta.Targeter {
	key := http.CanonicalHeaderKey(header)
	ids := clientIDs(s)
	var next atomic.Int64
	return func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		if i >= int64(len(s.Requests)) {
			return vegeta.ErrNoTargets
		}
		r := s.Requests[i]
		t.Method = http.MethodGet
		t.URL = seqURL(base(r), i)
		t.Header = http.Header{key: ids[r.Client : r.Client+1 : r.Client+1]}
		return nil
	}
}

// clientIDs is every client's ID in one slice, so that a target's header value is a
// one-element window on it instead of a slice allocated per request. Vegeta copies a
// target's header values into the request it builds and never writes them.
func clientIDs(s *schedule.Schedule) []string {
	ids := make([]string, len(s.Clients))
	for i, c := range s.Clients {
		ids[i] = c.ID
	}
	return ids
}

// seqURL is base followed by the decimal index, built in one allocation: this runs once
// per request, at up to tens of thousands a second.
func seqURL(base string, i int64) string {
	var buf [96]byte
	return string(strconv.AppendInt(append(buf[:0], base...), i, 10))
}

// ParseSeq extracts the schedule index from a URL made by NewTargeter.
func ParseSeq(url string) (int, bool) {
	k := strings.LastIndex(url, seqParam)
	if k < 0 {
		return 0, false
	}
	digits := url[k+len(seqParam):]
	if end := strings.IndexByte(digits, '&'); end >= 0 {
		digits = digits[:end]
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
