// Package replica is the limiter replica, the service under test: an HTTP server on which
// every request is one decision for one client (200 allowed, 429 rejected), answered with
// the IETF RateLimit-Policy and RateLimit header fields, rules from a YAML file, and the
// project's limiters in central, split or delayed-sync mode over Redis (or, for comparison
// only, a peer: go-redis/redis_rate's GCRA in mode peer-gcra).
//
// The store going down never rejects a request: every store call runs under a short
// timeout and a circuit breaker, and while the store is unreachable a replica decides from
// what it knows (delayed sync: the last shared view plus its own count; central: a local
// limiter with the full rule). The replica logs each outage's start, end and the number of
// decisions made degraded.
package replica

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/limiters"
)

const (
	// shutdownGrace bounds how long in-flight requests may finish after SIGTERM; a fleet
	// stops members with a similar timeout before it sends SIGKILL.
	shutdownGrace = 5 * time.Second
	// pruneEvery is how often a replica forgets clients idle for a window (a walk over every
	// client under the limiter's lock: rare, unlike the delayed-sync exchange).
	pruneEvery = 5 * time.Second
)

// Option adjusts a Replica beyond its Config.
type Option func(*options)

type options struct {
	now      func() time.Time
	log      *slog.Logger
	instance string
}

// WithInstance names this run of the replica to the counter store (delayed mode): with its
// node index it tells the store whose push a count is, so a push the replica sends again
// after an exchange that timed out but landed is counted once (limiters.NodeID). It must
// differ between runs, since a restarted replica starts counting anew; the default is random.
func WithInstance(id string) Option { return func(o *options) { o.instance = id } }

// WithClock makes the replica take the time of every decision, sync and prune from now
// (time.Now by default), so a test can run the same code on a clock it controls.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogger sends the replica's log to l (slog.Default() by default).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// Replica is one limiter replica: an http.Handler plus the background work of its mode
// (the sync loop in delayed mode, pruning in the others). Create it with New and release
// it with Close, or run it with Serve.
type Replica struct {
	cfg    Config
	header string // canonical client header
	now    func() time.Time
	log    *slog.Logger
	rules  atomic.Pointer[Rules]

	// limiter decides in the replica's mode; central and peer are wrapped in failOpen. What
	// else a mode's limiter does is found by type assertion once, in New: a syncer
	// exchanges with the store in the background (delayed), a pruner forgets idle clients.
	limiter limiters.Limiter
	syncer  syncer
	pruner  pruner
	// guardedSync says the syncer runs each of its store calls through the store guard
	// itself (the bounded design: the epoch read and each chunk of pushes, each with its
	// own timeout), so a sync is not put under one more.
	guardedSync bool
	ulule       *ulule // peer-ulule's decisions, made by ulule/limiter's middleware instead (ulule.go)

	rdb      redis.UniversalClient
	guard    *storeGuard
	m        *metrics
	scrape   http.Handler
	lastSync atomic.Int64 // Unix ns, on the replica's clock, of the last good exchange
	blind    *blindness

	stop      context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New builds a replica from its configuration and rules (nil: the embedded default rules)
// and starts its background work. It does not wait for the store: a replica whose store
// is down starts degraded and decides fail-open.
func New(cfg Config, rules *Rules, opts ...Option) (*Replica, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rules == nil {
		rules = DefaultRules()
	}
	if cfg.StoreWait == 0 {
		cfg.StoreWait = limiters.DefaultStoreWait
	}
	o := options{now: time.Now, log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.instance == "" {
		o.instance = rand.Text()[:6] // 30 random bits: two runs of one node index share one about once in a billion
	}
	r := &Replica{
		cfg:    cfg,
		header: cfg.clientHeaderKey(),
		now:    o.now,
		log:    o.log.With("mode", string(cfg.Mode), "node", cfg.NodeIndex),
	}
	r.rules.Store(rules)
	r.blind = newBlindness(cfg.SyncInterval, r.now)
	r.m = newMetrics(cfg, r.syncLag, r.trackedClients, r.blindSeconds)
	r.scrape = promhttp.HandlerFor(r.m.reg, promhttp.HandlerOpts{})
	wait := cfg.StoreTimeout // only the bounded design's decisions wait longer
	if cfg.Mode == limiters.ModeDelayed && cfg.Design == DesignBounded {
		wait = cfg.StoreWait
	}
	r.guard = newStoreGuard(cfg.StoreTimeout, wait, r.m, r.log, r.now)
	if cfg.Mode == limiters.ModeDelayed && cfg.Design == DesignBounded {
		r.guard.followLink() // its store timeout and wait follow the link to the store
	}
	r.m.reg.MustRegister(r.guard.collectors()...)
	switch cfg.Mode {
	case limiters.ModeCentral:
		r.rdb = newRedisClient(cfg.Redis, cfg.StoreTimeout, 0)
		r.limiter = &failOpen{store: limiters.NewCentral(limiters.NewRedisStore(r.rdb)), local: limiters.NewLocal(), guard: r.guard}
	case limiters.ModeDelayed:
		node := strconv.Itoa(cfg.NodeIndex) + "-" + o.instance
		if cfg.Design == DesignBounded {
			// The bounded design (docs/design-bound.md), the default: decisions past a node's
			// unsynced budget go to the store, each waiting up to the store wait, and so does
			// each part of a sync, under the store timeout, every call under the guard's
			// breaker; a decision whose call fails falls back on the node's own count.
			r.rdb = newRedisClient(cfg.Redis, cfg.StoreTimeout, cfg.StoreWait)
			r.limiter = limiters.NewBoundedSync(limiters.NewRedisStore(r.rdb), limiters.BoundedNode(node, cfg.NodeCount),
				limiters.BoundedObserve(r.m), limiters.StoreCalls(r.guard.bounded))
			r.guardedSync = true
			break
		}
		r.rdb = newRedisClient(cfg.Redis, cfg.StoreTimeout, 0)
		r.limiter = limiters.NewDelayedSync(limiters.NewRedisStore(r.rdb), limiters.NodeID(node), limiters.Observe(r.m))
	case limiters.ModeSplit:
		r.limiter = limiters.NewSplit(cfg.NodeCount)
	case limiters.ModePeerGCRA:
		r.rdb = newRedisClient(cfg.Redis, cfg.StoreTimeout, 0)
		r.limiter = &failOpen{store: peer{redis_rate.NewLimiter(r.rdb)}, local: limiters.NewLocal(), guard: r.guard}
	case limiters.ModePeerUlule:
		r.rdb = newRedisClient(cfg.Redis, cfg.StoreTimeout, 0)
		r.ulule = newUlule(r.rdb, r.header, cfg.ClientHeader, r.Rules)
	}
	r.syncer, _ = r.limiter.(syncer)
	r.pruner, _ = r.limiter.(pruner)
	r.lastSync.Store(r.now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	if r.syncer != nil {
		r.wg.Go(func() { r.syncLoop(ctx) })
	}
	r.wg.Go(func() { r.pruneLoop(ctx) })
	if _, ok := r.limiter.(*failOpen); ok {
		r.wg.Go(func() { r.probeLoop(ctx) })
	}
	r.log.Info("replica ready", "rules", rules.Source, "named_rules", len(rules.Named),
		"default_rule", fmt.Sprintf("%d per %s, %s", rules.Default.Limit, rules.Default.Window, rules.Default.Algorithm),
		"design", r.design(), "redis", cfg.Redis, "node_count", cfg.NodeCount, "sync_interval", cfg.SyncInterval.String(),
		"store_timeout", cfg.StoreTimeout.String(), "store_wait", cfg.StoreWait.String(), "client_header", cfg.ClientHeader)
	return r, nil
}

// design is delayed mode's design in force, empty in other modes.
func (r *Replica) design() string {
	if r.cfg.Mode != limiters.ModeDelayed {
		return ""
	}
	return string(r.cfg.Design)
}

// Rules returns the rules in force.
func (r *Replica) Rules() *Rules { return r.rules.Load() }

// Degraded reports whether the replica is deciding without its counter store now.
func (r *Replica) Degraded() bool { return r.guard.degraded() }

// Reload reads the rule file (--rules) again and puts it in force; it is what SIGHUP does.
// An invalid file changes nothing: the old rules stay, and the log and the error say why.
func (r *Replica) Reload() error {
	path := r.cfg.RulesPath
	if path == "" {
		r.log.Info("rule reload: no rule file was given (--rules), the embedded default rules stay")
		return nil
	}
	rules, err := LoadRules(path)
	if err != nil {
		r.m.reloads.WithLabelValues("error").Inc()
		r.log.Error("rule reload failed: keeping the old rules", "file", path, "err", err.Error())
		return err
	}
	r.rules.Store(rules)
	r.m.reloads.WithLabelValues("ok").Inc()
	r.log.Info("rules reloaded", "file", path, "named_rules", len(rules.Named))
	return nil
}

// ServeHTTP answers GET /healthz, GET /metrics, and takes every other request as a decision.
func (r *Replica) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	case "/metrics":
		r.scrape.ServeHTTP(w, req)
	default:
		if r.ulule != nil {
			r.ulule.ServeHTTP(w, req)
			return
		}
		r.decide(w, req)
	}
}

func (r *Replica) decide(w http.ResponseWriter, req *http.Request) {
	id, problem := clientID(req.Header, r.header, r.cfg.ClientHeader)
	if problem != "" {
		r.m.badRequests.Inc()
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": problem})
		return
	}
	rules := r.rules.Load()
	rule := rules.For(id, req.Header.Get(ClassHeader))
	dec := r.allow(req.Context(), id, rule, r.now())

	// The field names in Go's canonical form, so that setting them allocates no key; the
	// policy's value is made once per rule. On the wire both are the same as before.
	h := w.Header()
	h[headerPolicy] = rules.policyHeader(rule)
	if !dec.At.IsZero() {
		h[DecidedAtHeader] = []string{strconv.FormatInt(dec.At.UnixNano(), 10)}
	}
	if dec.Allowed {
		r.m.decisions.WithLabelValues(rule.Name, outcomeAllowed).Inc()
		h.Set(headerLimit, limitField(rule.Name, dec.Remaining, ceilSeconds(dec.ResetAfter)))
		h.Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	r.m.decisions.WithLabelValues(rule.Name, outcomeRejected).Inc()
	// The draft asks that Retry-After not point before the end of the effective window,
	// so with nothing left both say when the next request can pass.
	retry := max(ceilSeconds(dec.RetryAfter), 1)
	h.Set(headerLimit, limitField(rule.Name, dec.Remaining, retry))
	h.Set("Retry-After", strconv.FormatInt(retry, 10))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"error": "rate limit exceeded", "rule": rule.Name, "retry_after": retry,
	})
}

// syncer is a limiter that exchanges counts with the store in the background.
type syncer interface {
	Sync(ctx context.Context, now time.Time) error
	Clients() int
}

// flusher is a syncer whose final sync pushes more than a periodic one (BoundedSync: the
// counts of clients within their budgets too).
type flusher interface {
	Flush(ctx context.Context, now time.Time) error
}

// pruner is a limiter that forgets clients idle for a window, returning how many remain.
type pruner interface {
	Prune(now time.Time) int
}

// allow decides one request in the replica's mode. It cannot fail: a store error turns
// into a decision made without the store.
func (r *Replica) allow(ctx context.Context, id string, rule *limiters.Rule, now time.Time) limiters.Decision {
	d, _ := r.limiter.Allow(ctx, id, rule, now) // split and delayed never fail; failOpen falls back
	if r.syncer != nil && r.guard.degraded() {
		r.guard.countDegraded()
	}
	return d
}

// failOpen decides with a limiter that calls the store on every decision (central, peer),
// under the store guard's timeout and circuit breaker, and with a local limiter holding the
// full rule when the store fails. The local limiter counts this node's own acceptances all
// along, so a fallback starts from what this node already let through in the window, not
// from zero.
type failOpen struct {
	store limiters.Limiter
	local *limiters.Local
	guard *storeGuard
}

// Allow implements limiters.Limiter; it never fails.
func (f *failOpen) Allow(ctx context.Context, id string, rule *limiters.Rule, now time.Time) (limiters.Decision, error) {
	var d limiters.Decision
	err := f.guard.call(ctx, opTake, func(ctx context.Context) error {
		var err error
		d, err = f.store.Allow(ctx, id, rule, now)
		return err
	})
	if err != nil {
		f.guard.countDegraded()
		return f.local.Take(id, rule, now), nil
	}
	if d.Allowed {
		f.local.Take(id, rule, now)
	}
	return d, nil
}

// Prune forgets the fallback's idle clients (the store's expire by themselves).
func (f *failOpen) Prune(now time.Time) int { return f.local.Prune(now) }

// peer decides with go-redis/redis_rate: GCRA in one Lua script on the store's clock
// (TIME), so the replica's clock plays no part. The rule becomes Limit per Window with the
// token bucket's burst, or the whole limit as burst for a window rule.
type peer struct{ l *redis_rate.Limiter }

// Allow implements limiters.Limiter.
func (p peer) Allow(ctx context.Context, id string, rule *limiters.Rule, _ time.Time) (limiters.Decision, error) {
	burst := rule.Limit
	if rule.Algorithm == limiters.TokenBucket {
		burst = rule.Burst
	}
	res, err := p.l.Allow(ctx, limiters.Key(id, rule), redis_rate.Limit{Rate: int(rule.Limit), Burst: int(burst), Period: rule.Window})
	if err != nil {
		return limiters.Decision{}, fmt.Errorf("redis_rate for %q: %w", id, err)
	}
	return limiters.Decision{
		Allowed: res.Allowed > 0, Limit: rule.Limit, Remaining: int64(res.Remaining),
		ResetAfter: max(res.ResetAfter, 0), RetryAfter: max(res.RetryAfter, 0),
	}, nil
}

// clientID reads the client ID from the header key (canonical form); a non-empty problem
// says why the request cannot be counted, naming the header as the user spelled it.
func clientID(h http.Header, key, name string) (id, problem string) {
	vals := h[key]
	switch {
	case len(vals) == 0:
		return "", fmt.Sprintf("missing client ID: send it in the %s header", name)
	case len(vals) > 1:
		return "", fmt.Sprintf("the %s header appears %d times: send exactly one client ID", name, len(vals))
	case vals[0] == "":
		return "", fmt.Sprintf("empty client ID in the %s header", name)
	case len(vals[0]) > MaxClientIDBytes:
		return "", fmt.Sprintf("client ID in the %s header is %d bytes: at most %d are allowed", name, len(vals[0]), MaxClientIDBytes)
	}
	return vals[0], ""
}

// The RateLimit header fields' names as http.Header keys (canonical form).
const (
	headerPolicy = "Ratelimit-Policy" // RateLimit-Policy
	headerLimit  = "Ratelimit"        // RateLimit
)

// DecidedAtHeader carries when the limiter decided the request, on its own clock, in Unix
// nanoseconds: the harness judges the promises on it (the decision clock) rather than on
// the bounds of the request's send and answer. A limiter that does not say (the redis_rate
// peer decides on Redis's clock) sends none.
const DecidedAtHeader = "X-Ratelimit-Decided-At" // X-RateLimit-Decided-At

// policyField is the RateLimit-Policy field value (draft-ietf-httpapi-ratelimit-headers-11
// §3): the rule's name as an sf-string, its quota and window in seconds. Rule names are
// restricted to characters that need no escaping in an sf-string.
func policyField(rule *limiters.Rule) string {
	b := make([]byte, 0, 48)
	b = append(b, '"')
	b = append(b, rule.Name...)
	b = append(b, `";q=`...)
	b = strconv.AppendInt(b, rule.Limit, 10)
	b = append(b, ";w="...)
	b = strconv.AppendInt(b, max(ceilSeconds(rule.Window), 1), 10)
	return string(b)
}

// limitField is the RateLimit field value (draft §4): the available quota and the
// effective window, the seconds within which no more than that is available.
func limitField(name string, remaining, t int64) string {
	b := make([]byte, 0, 48)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `";r=`...)
	b = strconv.AppendInt(b, remaining, 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, t, 10)
	return string(b)
}

// ceilSeconds rounds a duration up to whole seconds: a client told to wait less than it
// must would be rejected again.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// syncLoop exchanges counts with the store every sync interval (delayed mode).
func (r *Replica) syncLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = r.syncOnce(ctx) // a failure is counted, logged at the outage's start, and retried next tick
		}
	}
}

// syncOnce is one exchange: push this node's counts, pull the shared view. With no client
// to sync it pings instead, so that an outage's end is noticed without traffic.
func (r *Replica) syncOnce(ctx context.Context) error {
	now := r.now()
	var err error
	if r.syncer.Clients() == 0 {
		err = r.guard.call(ctx, opPing, func(ctx context.Context) error { return r.rdb.Ping(ctx).Err() })
	} else {
		before := r.m.exchanged.Load()
		start := time.Now() // wall time, whatever clock the replica decides on
		if r.guardedSync {
			err = r.syncer.Sync(ctx, now)
		} else {
			err = r.guard.call(ctx, opExchange, func(ctx context.Context) error { return r.syncer.Sync(ctx, now) })
		}
		if r.m.exchanged.Load() != before { // an exchange was sent (not skipped by the breaker, not empty)
			r.m.syncDuration.Observe(time.Since(start).Seconds())
			r.m.syncExchanges.WithLabelValues(exchangeResult(err)).Inc()
		}
	}
	if err == nil {
		r.lastSync.Store(now.UnixNano())
		r.blind.ok()
	}
	return err
}

// exchangeResult is an exchange's rlreplica_sync_exchanges_total label: a partial exchange
// (some shards of a cluster failed) is a failure.
func exchangeResult(err error) string {
	switch {
	case err == nil:
		return exchangeOK
	case reason(err) == reasonTimeout:
		return exchangeTimeout
	}
	return exchangeFailed
}

// blindSeconds is rlreplica_sync_blind_seconds_total's value (0 outside delayed mode).
func (r *Replica) blindSeconds() float64 {
	if r.syncer == nil {
		return 0
	}
	return r.blind.seconds()
}

// probeLoop pings the store while it is unreachable (central and peer modes), so the outage's end is
// noticed, logged and shown by the gauge without waiting for traffic.
func (r *Replica) probeLoop(ctx context.Context) {
	t := time.NewTicker(breakerOpen / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if r.guard.degraded() {
				_ = r.guard.call(ctx, opPing, func(ctx context.Context) error { return r.rdb.Ping(ctx).Err() })
			}
		}
	}
}

// pruneLoop keeps memory bounded by the clients active in the last window (central, split).
func (r *Replica) pruneLoop(ctx context.Context) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.trackedClients()
		}
	}
}

func (r *Replica) syncLag() float64 {
	if r.syncer == nil {
		return 0
	}
	return r.now().Sub(time.Unix(0, r.lastSync.Load())).Seconds()
}

// trackedClients is read at scrape time; pruning first makes the figure current.
func (r *Replica) trackedClients() float64 {
	if r.pruner == nil {
		return 0
	}
	return float64(r.pruner.Prune(r.now()))
}

// Close stops the background work and, in delayed mode, flushes: one last exchange so the
// counts this replica made since its last sync reach the store. It then closes the store
// connection. Calling it again returns the first call's result.
func (r *Replica) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.stop()
		r.wg.Wait()
		if r.syncer != nil {
			r.closeErr = r.flush(ctx)
		}
		if r.rdb != nil {
			_ = r.rdb.Close()
		}
	})
	return r.closeErr
}

// flush is the final exchange. It goes around the circuit breaker: it is the last chance
// to deliver the counts, and the store may be back although the breaker is still open.
func (r *Replica) flush(ctx context.Context) error {
	if r.syncer.Clients() == 0 {
		return nil
	}
	r.m.roundTrips.WithLabelValues(opExchange).Inc()
	cctx, cancel := context.WithTimeout(ctx, r.cfg.StoreTimeout)
	defer cancel()
	sync := r.syncer.Sync
	if f, ok := r.syncer.(flusher); ok {
		sync = f.Flush
	}
	if err := sync(cctx, r.now()); err != nil {
		r.m.storeErrors.WithLabelValues(opExchange, reason(err)).Inc()
		r.log.Error("final sync failed: counts made since the last sync are lost", "err", err.Error())
		return fmt.Errorf("final sync with the counter store at %s: %w", r.cfg.Redis, err)
	}
	r.log.Info("final sync done: local counts flushed to the store")
	return nil
}

// Serve answers on ln until ctx ends, then drains in-flight requests (http.Server.Shutdown,
// at most 5 s) and closes the replica, which flushes local counts in delayed mode.
func (r *Replica) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(r.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	r.log.Info("replica listening", "addr", ln.Addr().String())
	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		r.log.Info("shutting down: draining in-flight requests")
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := srv.Shutdown(sctx); err != nil {
			serveErr = fmt.Errorf("drain in-flight requests: %w", err)
		}
		cancel()
	}
	closeErr := r.Close(context.Background())
	if serveErr == nil && closeErr == nil {
		r.log.Info("replica stopped")
	}
	return errors.Join(serveErr, closeErr)
}

// Run is the whole replica process: it loads the rules (the embedded default without
// --rules), listens, reloads the rules on SIGHUP, and serves until ctx ends (SIGTERM in
// main), then drains and flushes. A bad rule file stops it before it listens, with an
// error of the form "file:line: what is wrong".
func Run(ctx context.Context, cfg Config, opts ...Option) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	rules := DefaultRules()
	if cfg.RulesPath != "" {
		var err error
		if rules, err = LoadRules(cfg.RulesPath); err != nil {
			return err
		}
	}
	r, err := New(cfg, rules, opts...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = r.Close(ctx)
		return fmt.Errorf("listen on %s: %w (is the port taken? pass --listen or REPLICA_LISTEN)", cfg.Listen, err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = r.Reload() // logged; the old rules stay on error
			}
		}
	}()
	return r.Serve(ctx, ln)
}
