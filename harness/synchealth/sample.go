// Package synchealth scrapes the replicas' Prometheus metrics during a scenario and says
// how their sync with the store went: exchanges by result, how long they took and how many
// clients they carried, how old the view was when a decision was made, and how long each
// node went blind. A figure the replicas do not expose is left out, never given as zero.
package synchealth

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Names say which metric means what. An empty name is a figure the target does not expose.
type Names struct {
	// Path is the metrics path on every replica's address; default /metrics.
	Path string
	// Exchanges is a counter of exchanges by the label "result": ok, failed or timeout
	// (any other value counts as failed).
	Exchanges string
	// Duration is a histogram of exchange durations in seconds.
	Duration string
	// Clients is a histogram of the clients one exchange carried.
	Clients string
	// ViewAge is a histogram of the view's age in seconds when a decision was made.
	ViewAge string
	// Blind is a counter of the seconds a node went without a successful exchange for more
	// than two intervals.
	Blind string
	// SyncLag is a gauge of the seconds since the node's last successful exchange.
	SyncLag string
	// RoundTrips and StoreErrors are counters of store calls and failed store calls by the
	// label "op" (StoreErrors by "reason" too): the built-in replica's, read for its
	// exchanges (op="exchange") when Exchanges is not exposed.
	RoundTrips, StoreErrors string
	// Degraded is a counter of the decisions made without the store (the fail-open
	// fallback); StoreErrors{op="take"} says why (timeout, breaker_open, other).
	Degraded string
}

// The built-in replica's metrics (targets/replica).
const (
	ResultOK      = "ok"
	ResultFailed  = "failed"
	ResultTimeout = "timeout"
	opExchange    = "exchange"
	opTake        = "take"
	reasonTimeout = "timeout"
	// reasonBreakerOpen is an exchange the replica did not make because its circuit
	// breaker was open: attempted, not sent.
	reasonBreakerOpen = "breaker_open"
)

// Replica are the built-in replica's metric names.
func Replica() Names {
	return Names{
		Path:        "/metrics",
		Exchanges:   "rlreplica_sync_exchanges_total",
		Duration:    "rlreplica_sync_exchange_duration_seconds",
		Clients:     "rlreplica_sync_exchange_clients",
		ViewAge:     "rlreplica_decision_view_age_seconds",
		Blind:       "rlreplica_sync_blind_seconds_total",
		SyncLag:     "rlreplica_sync_lag_seconds",
		RoundTrips:  "rlreplica_store_round_trips_total",
		StoreErrors: "rlreplica_store_errors_total",
		Degraded:    "rlreplica_degraded_decisions_total",
	}
}

// Hist is a cumulative histogram as exposed: Counts[i] observations at most Bounds[i]
// (the last bound may be +Inf), Count in all, Sum their sum.
type Hist struct {
	Bounds []float64
	Counts []float64
	Count  float64
	Sum    float64
}

// Sample is one scrape of one node. A nil or absent field is a metric it did not expose.
type Sample struct {
	At time.Duration // since the scenario's origin
	// Exchanges by result: ok, failed (other results too), timeout; HasExchanges says the
	// counter was exposed.
	OK, Failed, TimedOut float64
	HasExchanges         bool
	// Store calls of the exchange op and their errors, by reason (the fallback).
	RoundTrips     float64
	ErrTimeout     float64
	ErrBreakerOpen float64
	ErrOther       float64
	HasRoundTrips  bool

	Duration, Clients, ViewAge *Hist
	Blind, SyncLag             *float64
	// Degraded is the decisions made without the store so far; nil when not exposed. The
	// decision path's store errors (op take), by reason, come with it.
	Degraded                                   *float64
	TakeTimeout, TakeBreakerOpen, TakeErrOther float64
	// TakeCalls are the decision path's store calls made (op take: a decision asked of the
	// store); HasTake says the replica made some.
	TakeCalls float64
	HasTake   bool
}

// Parse reads one scrape in Prometheus text format.
func Parse(r io.Reader, n Names, at time.Duration) (Sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(n.only(r))
	if err != nil {
		return Sample{}, fmt.Errorf("read the metrics: %w", err)
	}
	s := Sample{At: at}
	if f := fams[n.Exchanges]; n.Exchanges != "" && f != nil {
		s.HasExchanges = true
		for _, m := range f.GetMetric() {
			v := value(m)
			switch label(m, "result") {
			case ResultOK:
				s.OK += v
			case ResultTimeout:
				s.TimedOut += v
			default:
				s.Failed += v
			}
		}
	}
	if f := fams[n.RoundTrips]; n.RoundTrips != "" && f != nil {
		for _, m := range f.GetMetric() {
			switch label(m, "op") {
			case opExchange:
				s.RoundTrips += value(m)
				s.HasRoundTrips = true
			case opTake:
				s.TakeCalls += value(m)
				s.HasTake = true
			}
		}
	}
	if f := fams[n.StoreErrors]; n.StoreErrors != "" && f != nil {
		for _, m := range f.GetMetric() {
			timeout, open, other := &s.ErrTimeout, &s.ErrBreakerOpen, &s.ErrOther
			switch label(m, "op") {
			case opExchange:
			case opTake:
				timeout, open, other = &s.TakeTimeout, &s.TakeBreakerOpen, &s.TakeErrOther
			default:
				continue
			}
			switch label(m, "reason") {
			case reasonTimeout:
				*timeout += value(m)
			case reasonBreakerOpen:
				*open += value(m)
			default:
				*other += value(m)
			}
		}
	}
	s.Degraded = scalar(fams, n.Degraded)
	s.Duration = hist(fams, n.Duration)
	s.Clients = hist(fams, n.Clients)
	s.ViewAge = hist(fams, n.ViewAge)
	s.Blind = scalar(fams, n.Blind)
	s.SyncLag = scalar(fams, n.SyncLag)
	return s, nil
}

// only keeps the lines of the metrics n names (their samples, TYPE and HELP): a replica's
// scrape is mostly the Go runtime's metrics, and parsing them all, 40 times a second beside
// the generator, would cost the harness ten times as much.
func (n Names) only(r io.Reader) io.Reader {
	want := map[string]bool{}
	for _, name := range []string{n.Exchanges, n.Duration, n.Clients, n.ViewAge, n.Blind, n.SyncLag, n.RoundTrips, n.StoreErrors, n.Degraded} {
		if name != "" {
			want[name] = true
		}
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		name := line
		if rest, ok := bytes.CutPrefix(line, []byte("# ")); ok {
			if _, after, ok := bytes.Cut(rest, []byte(" ")); ok { // "# TYPE name ...", "# HELP name ..."
				name = after
			}
		}
		if i := bytes.IndexAny(name, "{ "); i >= 0 {
			name = name[:i]
		}
		base := string(name)
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(base, suffix); ok && want[b] {
				base = b
			}
		}
		if want[base] {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return errReader{err}
	}
	return &out
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value is a counter's, gauge's or untyped sample's value.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// scalar is the sum of a counter's or gauge's series (one per node, normally); nil when
// the metric is not exposed.
func scalar(fams map[string]*dto.MetricFamily, name string) *float64 {
	f := fams[name]
	if name == "" || f == nil || len(f.GetMetric()) == 0 {
		return nil
	}
	v := 0.0
	for _, m := range f.GetMetric() {
		v += value(m)
	}
	return &v
}

// hist merges a histogram's series; nil when it is not exposed or not a histogram.
func hist(fams map[string]*dto.MetricFamily, name string) *Hist {
	f := fams[name]
	if name == "" || f == nil {
		return nil
	}
	var h *Hist
	for _, m := range f.GetMetric() {
		ph := m.GetHistogram()
		if ph == nil {
			continue
		}
		if h == nil {
			h = &Hist{}
			for _, b := range ph.GetBucket() {
				h.Bounds = append(h.Bounds, b.GetUpperBound())
			}
			if len(h.Bounds) == 0 || !math.IsInf(h.Bounds[len(h.Bounds)-1], 1) {
				h.Bounds = append(h.Bounds, math.Inf(1))
			}
			h.Counts = make([]float64, len(h.Bounds))
		}
		h.Count += float64(ph.GetSampleCount())
		h.Sum += ph.GetSampleSum()
		bs := ph.GetBucket()
		for i := range h.Bounds {
			switch {
			case i < len(bs) && bs[i].GetUpperBound() == h.Bounds[i]:
				h.Counts[i] += float64(bs[i].GetCumulativeCount())
			case math.IsInf(h.Bounds[i], 1):
				h.Counts[i] += float64(ph.GetSampleCount())
			}
		}
	}
	return h
}
