package replica

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
	ulimiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	uredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/edgeproof/rlharness/limiters"
)

// ululePrefix starts every key the mode's store writes, followed by the rule's name.
const ululePrefix = "ulule"

// ulule decides every request with ulule/limiter's middleware (limiters.ModePeerUlule), with
// its Redis store, embedded as an application embeds it, so the load test can put a library
// limiter beside the design: one middleware per rule, each with its own key prefix, made on
// the rule's first request (its store loads its scripts then, so a replica started before
// its store comes up answers 500 until it does). Its store counts in a fixed window that
// starts at a client's first request (INCRBY, then PEXPIRE, in one script). It has no
// fallback: with the store down or slow every decision is an error, answered 500 (the
// middleware's own default error handler panics, which net/http turns into a dropped
// connection): it fails closed.
type ulule struct {
	rdb    redis.UniversalClient
	header string // canonical client header
	name   string // the client header as the user spelled it
	rules  func() *Rules

	mu     sync.Mutex
	byRule map[string]http.Handler // by rule name, limit and window
}

func newUlule(rdb redis.UniversalClient, header, name string, rules func() *Rules) *ulule {
	return &ulule{rdb: rdb, header: header, name: name, rules: rules, byRule: map[string]http.Handler{}}
}

// ServeHTTP takes a request as a decision: 400 without a client ID, else what ulule's
// middleware answers (200, 429, or 500 when the store fails).
func (u *ulule) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	id, problem := clientID(req.Header, u.header, u.name)
	if problem != "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": problem})
		return
	}
	rule := u.rules().For(id, req.Header.Get(ClassHeader))
	h, err := u.handler(rule)
	if err != nil {
		ululeError(w, req, err)
		return
	}
	h.ServeHTTP(w, req)
}

// handler is the middleware for rule, made on first use.
func (u *ulule) handler(rule *limiters.Rule) (http.Handler, error) {
	key := rule.Name + "/" + strconv.FormatInt(rule.Limit, 10) + "/" + rule.Window.String()
	u.mu.Lock()
	defer u.mu.Unlock()
	if h, ok := u.byRule[key]; ok {
		return h, nil
	}
	// Loading the scripts is bounded by the client's store timeout.
	store, err := uredis.NewStoreWithOptions(u.rdb, ulimiter.StoreOptions{Prefix: ululePrefix + ":" + rule.Name})
	if err != nil {
		return nil, fmt.Errorf("ulule/limiter's redis store: %w", err)
	}
	lim := ulimiter.New(store, ulimiter.Rate{Period: rule.Window, Limit: rule.Limit})
	mw := stdlib.NewMiddleware(lim,
		stdlib.WithKeyGetter(func(r *http.Request) string { return r.Header.Get(u.header) }),
		stdlib.WithErrorHandler(ululeError))
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	}))
	u.byRule[key] = h
	return h, nil
}

// ululeError answers a store failure 500, as an application that gives ulule's middleware an
// error handler does.
func ululeError(w http.ResponseWriter, _ *http.Request, err error) {
	writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "rate limiter: " + err.Error()})
}
