package claimcheck

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/redis/go-redis/v9"

	cc "github.com/edgeproof/rlharness/claimcheck"
)

// producer is POST /events: the body is the 220-byte event record followed by the
// 40,000-byte proof; 204 acknowledges the event to its sender once it is in the stream.
type producer struct {
	cfg   Config
	rdb   redis.UniversalClient
	log   *slog.Logger
	pipe  *cc.Producer
	plan  lazyPlan
	crash func()
}

// EventBody is the request body a sender posts for event id: its record and its proof.
func EventBody(id uint64) []byte {
	b := make([]byte, 0, cc.EventBytes+cc.ProofBytes)
	b = append(b, eventRecord(id)...)
	return append(b, cc.NewProof(id).Bytes...)
}

// eventRecord is the record as the message will carry it; the producer reads the ID back
// with the message decoder, so sender and pipeline agree on one format.
func eventRecord(id uint64) []byte {
	m := cc.Message{Event: cc.Event{ID: id}, Placement: cc.Attach, Proof: cc.Proof{Bytes: make([]byte, cc.ProofBytes)}}
	b, _ := m.Encode()
	return b[:cc.EventBytes]
}

func (p *producer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, cc.EventBytes+cc.ProofBytes+1))
	if err != nil {
		http.Error(w, "read the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) != cc.EventBytes+cc.ProofBytes {
		http.Error(w, fmt.Sprintf("the body must be the %d-byte event record and the %d-byte proof (got %d bytes)",
			cc.EventBytes, cc.ProofBytes, len(body)), http.StatusBadRequest)
		return
	}
	m, err := cc.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := m.Event.ID
	plan, err := p.plan.get(r.Context(), p.rdb)
	if err != nil {
		http.Error(w, "load the crash plan: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	crash := func() bool {
		if !plan.Crash(id) {
			return false
		}
		// The fault log is written before the crash: it is the injector's record, not the
		// pipeline's, and the harness reads it to tell a crash from a refused connection.
		if err := p.rdb.SAdd(r.Context(), cc.ProducerCrash, id).Err(); err != nil {
			p.log.Error("could not log an injected crash", "event", id, "err", err)
		}
		p.log.Warn("injected crash between the two writes", "event", id, "placement", p.cfg.Placement)
		p.crash()
		return true
	}
	err = p.pipe.Produce(r.Context(), m.Event, m.Proof, crash)
	switch {
	case errors.Is(err, cc.ErrCrashed):
		// Only reached when the crash hook does not exit (tests): die as a process would,
		// without an answer.
		panic(http.ErrAbortHandler)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("X-Event-ID", strconv.FormatUint(id, 10))
	w.WriteHeader(http.StatusNoContent)
}
