// Package worker is the horizontal-scaling document's replica (003): an HTTP service with a
// fixed saturation throughput (M19: 1176.47 req/s, scaled with a run's rate scale) that
// queues a bounded amount of work beyond it and sheds the rest with 503, and exports its
// utilisation as a Prometheus gauge for the controller to scrape.
package worker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edgeproof/rlharness/internal/service"
)

// Saturation is the saturation throughput of one replica, requests/s (M19, an input of 003).
const Saturation = 1176.47

// Defaults of the command line that are not figures of the document.
const (
	DefaultListen     = ":8080"
	DefaultMaxQueue   = 500 * time.Millisecond
	DefaultUtilWindow = time.Second
	// utilSlots is how finely the utilisation window slides.
	utilSlots = 10
	// shutdownGrace bounds the drain after SIGTERM; the queue is shorter.
	shutdownGrace = 5 * time.Second
)

// UtilisationMetric is the gauge the controller scrapes: requests that arrived over the
// utilisation window divided by what the replica can serve in it. It exceeds 1 when the
// offered load is above saturation, as the document's measured utilisation does.
const UtilisationMetric = "worker_utilisation"

// Config is a worker's command line; every flag has a WORKER_* environment fallback.
type Config struct {
	Listen     string
	Saturation float64       // requests/s per replica before scaling; M19 1176.47
	RateScale  float64       // multiplies Saturation: a run that scales its load scales this too
	MaxQueue   time.Duration // work queued ahead beyond which a request is shed (503)
	UtilWindow time.Duration // the utilisation gauge's sliding window
	Warmup     time.Duration // /healthz answers 503 for this long after start: a replica is not ready at once
}

// DefaultConfig is a worker started without flags or environment.
func DefaultConfig() Config {
	return Config{Listen: DefaultListen, Saturation: Saturation, RateScale: 1,
		MaxQueue: DefaultMaxQueue, UtilWindow: DefaultUtilWindow}
}

// Rate is the replica's effective saturation throughput, requests/s.
func (c Config) Rate() float64 { return c.Saturation * c.RateScale }

// Validate says which setting cannot be used.
func (c Config) Validate() error {
	switch {
	case !(c.Saturation > 0):
		return fmt.Errorf("saturation must be > 0 requests/s (got %v); the document's is 1176.47", c.Saturation)
	case !(c.RateScale > 0):
		return fmt.Errorf("rate scale must be > 0 (got %v); 1 is the document's own rate", c.RateScale)
	case c.MaxQueue < 0:
		return fmt.Errorf("max queue must be >= 0 (got %v)", c.MaxQueue)
	case c.UtilWindow < utilSlots:
		return fmt.Errorf("utilisation window must be at least %dns (got %v)", utilSlots, c.UtilWindow)
	case c.Warmup < 0:
		return fmt.Errorf("warmup must be >= 0 (got %v)", c.Warmup)
	}
	return nil
}

// ParseFlags reads a worker's configuration from args; a flag missing from args takes its
// WORKER_* variable from lookupEnv. Usage and errors go to out.
func ParseFlags(name string, args []string, lookupEnv func(string) (string, bool), out io.Writer) (Config, error) {
	c := DefaultConfig()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Listen, "listen", c.Listen, "address to listen on, host:port [env WORKER_LISTEN]")
	fs.Float64Var(&c.Saturation, "saturation", c.Saturation, "saturation throughput per replica, requests/s, before --rate-scale (M19) [env WORKER_SATURATION]")
	fs.Float64Var(&c.RateScale, "rate-scale", c.RateScale, "multiplies --saturation; a run that scales its load down by k passes k [env WORKER_RATE_SCALE]")
	fs.DurationVar(&c.MaxQueue, "max-queue", c.MaxQueue, "work queued ahead beyond which a request is shed with 503 [env WORKER_MAX_QUEUE]")
	fs.DurationVar(&c.UtilWindow, "util-window", c.UtilWindow, "sliding window of the utilisation gauge [env WORKER_UTIL_WINDOW]")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "time after start before /healthz answers 200 [env WORKER_WARMUP]")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := service.EnvFallback(fs, "WORKER_", lookupEnv); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Worker is one replica's handler: work on every path but /healthz and /metrics.
type Worker struct {
	cfg     Config
	now     func() time.Time
	started time.Time
	queue   *Queue
	arrived *Window
	served  *Window
	reg     *prometheus.Registry
	scrape  http.Handler
	total   *prometheus.CounterVec
	wait    func(ctx context.Context, until time.Time) error
	ready   atomic.Bool
}

// Option changes how a Worker is built; for tests.
type Option func(*Worker)

// WithClock gives the worker a clock and a way to wait for it, in place of the wall clock.
func WithClock(now func() time.Time, wait func(ctx context.Context, until time.Time) error) Option {
	return func(w *Worker) { w.now, w.wait = now, wait }
}

// New builds a worker; it is ready once Warmup has passed since New.
func New(cfg Config, opts ...Option) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, now: time.Now, wait: sleepUntil}
	for _, o := range opts {
		o(w)
	}
	w.started = w.now()
	w.queue = NewQueue(cfg.Rate(), cfg.MaxQueue)
	w.arrived = NewWindow(cfg.UtilWindow, utilSlots)
	w.served = NewWindow(cfg.UtilWindow, utilSlots)
	w.reg = prometheus.NewRegistry()
	w.total = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "worker_requests_total",
		Help: "Requests by outcome: served (200) or shed (503, the queue was full).",
	}, []string{"outcome"})
	w.total.WithLabelValues("served")
	w.total.WithLabelValues("shed")
	w.reg.MustRegister(w.total,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: UtilisationMetric,
			Help: "Requests arrived over the utilisation window / requests the replica can serve in it; above 1 when overloaded.",
		}, func() float64 { return w.Utilisation(w.now()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "worker_busy_ratio",
			Help: "Requests served over the utilisation window / requests the replica can serve in it (at most 1).",
		}, func() float64 { return w.ratio(w.served, w.now()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "worker_backlog_seconds",
			Help: "Work queued ahead of a request arriving now.",
		}, func() float64 { return w.queue.Backlog(w.now()).Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "worker_saturation_rps",
			Help: "The replica's saturation throughput after the rate scale, requests/s.",
		}, cfg.Rate),
	)
	w.scrape = promhttp.HandlerFor(w.reg, promhttp.HandlerOpts{})
	return w, nil
}

// Utilisation is the gauge's value at now.
func (w *Worker) Utilisation(now time.Time) float64 { return w.ratio(w.arrived, now) }

func (w *Worker) ratio(win *Window, now time.Time) float64 {
	span := min(win.Covered(now), now.Sub(w.started))
	if span <= 0 {
		return 0
	}
	return win.Sum(now) / (w.cfg.Rate() * span.Seconds())
}

// Ready reports whether the warm-up has passed.
func (w *Worker) Ready(now time.Time) bool {
	if w.ready.Load() {
		return true
	}
	if now.Sub(w.started) >= w.cfg.Warmup {
		w.ready.Store(true)
		return true
	}
	return false
}

// ServeHTTP answers GET /healthz and GET /metrics, and takes every other request as work.
func (w *Worker) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		if !w.Ready(w.now()) {
			http.Error(rw, "warming up", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(rw, "ok\n")
		return
	case "/metrics":
		w.scrape.ServeHTTP(rw, r)
		return
	}
	now := w.now()
	w.arrived.Add(now)
	done, ok := w.queue.Admit(now)
	if !ok {
		w.total.WithLabelValues("shed").Inc()
		rw.Header().Set("Retry-After", "1")
		http.Error(rw, "saturated", http.StatusServiceUnavailable)
		return
	}
	if err := w.wait(r.Context(), done); err != nil {
		return // the client went away; the work slot is spent all the same
	}
	w.served.Add(done)
	w.total.WithLabelValues("served").Inc()
	rw.Header().Set("Content-Length", "3")
	_, _ = io.WriteString(rw, "ok\n")
}

func sleepUntil(ctx context.Context, until time.Time) error {
	d := time.Until(until)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run serves cfg.Listen until ctx ends, then drains in-flight requests.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	w, err := New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is the port taken? pass --listen or WORKER_LISTEN)", cfg.Listen, err)
	}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second}
	log.Info("worker listening", "addr", ln.Addr().String(), "saturation_rps", strconv.FormatFloat(cfg.Rate(), 'f', -1, 64),
		"max_queue", cfg.MaxQueue.String(), "warmup", cfg.Warmup.String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", cfg.Listen, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("worker stopped")
	return nil
}
