// Package scaletest runs document 003's controller against real replicas: worker replicas
// of a fleet are started and stopped as the controller asks, Vegeta replays the 120-round
// load series spread across the replicas that are ready, the replicas' own utilisation
// gauges are scraped and averaged per round, and the run is scored with the document's
// measures beside the model's figures for the same settings.
package scaletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/autoscale"
	"github.com/edgeproof/rlharness/harness/fleet"
	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/harness/schedule"
	"github.com/edgeproof/rlharness/harness/traffic"
)

// Defaults of a real run sized for a small machine: 1 s rounds (the 120 rounds take two
// minutes) and the document's rates ×0.1 (peak 392 req/s instead of 3915), with the
// replicas' saturation scaled by the same factor so the replica counts are the document's.
const (
	DefaultRound           = time.Second
	DefaultRateScale       = 0.1
	DefaultScrapesPerRound = 4
)

// Config is a real autoscaling run.
type Config struct {
	Provider string // fleet provider: docker | local
	Network  string // docker: bridge | host
	// Delay is the metric delay added on top of the real pipeline, in rounds (ZO28: 3).
	Delay  int
	Window int // ZO29 stabilization window; 0 none
	Step   int // ZO30 step limit; 0 none
	// Series is the load per round in the document's req/s; default model.Series().
	Series          []float64
	Round           time.Duration
	RateScale       float64
	ScrapesPerRound int
	Warmup          time.Duration // each worker's warm-up before /healthz is 200
	MaxQueue        time.Duration // each worker's queue; default a quarter round
	OutDir          string
	Logger          *slog.Logger
	Progress        io.Writer
}

// DefaultConfig is the document's untuned controller with no added delay, at the defaults above.
func DefaultConfig() Config {
	return Config{Provider: "docker", Network: fleet.NetworkBridge, Round: DefaultRound, RateScale: DefaultRateScale,
		ScrapesPerRound: DefaultScrapesPerRound, OutDir: "runs/autoscale"}
}

func (c Config) check() error {
	switch {
	case c.Round < 100*time.Millisecond:
		return fmt.Errorf("--round must be at least 100ms (got %v): the replicas' metrics are scraped several times a round", c.Round)
	case !(c.RateScale > 0) || c.RateScale > 1:
		return fmt.Errorf("--rate-scale must be in (0, 1] (got %v)", c.RateScale)
	case c.ScrapesPerRound < 1:
		return fmt.Errorf("--scrapes must be >= 1 per round (got %d)", c.ScrapesPerRound)
	case c.Delay < 0:
		return fmt.Errorf("--delay must be >= 0 rounds (got %d)", c.Delay)
	}
	return c.controller().Validate()
}

func (c Config) controller() autoscale.Config {
	return model.Setting{Delay: c.Delay, Window: c.Window, Step: c.Step}.Config()
}

// Run starts a worker fleet of the controller's maximum, stops all but the initial count,
// replays the series and scales, then writes OutDir/autoscale.json and returns it.
func Run(ctx context.Context, c Config) (result.Autoscale, error) {
	if c.Series == nil {
		c.Series = model.Series()
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = c.Round / 4
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if err := c.check(); err != nil {
		return result.Autoscale{}, err
	}
	ctlCfg := c.controller()
	ctl, err := autoscale.New(ctlCfg, model.StartReplicas)
	if err != nil {
		return result.Autoscale{}, err
	}
	sched, err := schedule.Rounds(c.Series, c.Round, c.RateScale)
	if err != nil {
		return result.Autoscale{}, err
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return result.Autoscale{}, fmt.Errorf("create the run directory: %w", err)
	}
	sat := model.Saturation * c.RateScale
	res := result.Autoscale{StartedAt: time.Now().UTC(), Settings: result.AutoscaleConfig{
		Controller: ctlCfg, AddedDelay: c.Delay, Round: c.Round, RateScale: c.RateScale, Saturation: sat,
		ScrapesPerRound: c.ScrapesPerRound, Warmup: c.Warmup, MaxQueue: c.MaxQueue}}

	prov, err := fleet.NewProvider(c.Provider, c.Logger)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(c.Progress, "starting %d worker replicas (%s), %.2f req/s each (%g x %g, rates scaled by %g)\n",
		ctlCfg.Max, c.Provider, sat, model.Saturation, c.RateScale, c.RateScale)
	f, err := prov.Start(ctx, fleet.Spec{Target: fleet.TargetWorker, Replicas: ctlCfg.Max, Network: c.Network,
		ExtraEnv: map[string]string{
			"WORKER_RATE_SCALE":  strconv.FormatFloat(c.RateScale, 'g', -1, 64),
			"WORKER_UTIL_WINDOW": (c.Round / time.Duration(c.ScrapesPerRound)).String(),
			"WORKER_MAX_QUEUE":   c.MaxQueue.String(),
			"WORKER_WARMUP":      c.Warmup.String(),
		}})
	if err != nil {
		return res, err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if terr := f.Terminate(tctx); terr != nil {
			c.Logger.Error("terminate the worker fleet", "err", terr)
		}
	}()
	fc := f.Conditions()
	res.Conditions = fc
	var wg sync.WaitGroup
	for i := model.StartReplicas; i < ctlCfg.Max; i++ {
		wg.Go(func() { _ = f.Stop(ctx, fleet.ReplicaMember(i)) })
	}
	wg.Wait()

	run := &realRun{c: c, ctl: ctl, line: autoscale.NewDelayLine(c.Delay), sched: &sched, sat: sat,
		rows: make([]result.AutoscaleRound, len(c.Series)), lat: make([][]time.Duration, len(c.Series))}
	run.scale = newScaler(f, model.StartReplicas, run.currentRound)
	if err := run.drive(ctx, &res); err != nil {
		return res, err
	}
	res.FinishedAt = time.Now().UTC()
	return res, result.Write(c.OutDir, result.AutoscaleFile, res)
}

// realRun is one run's moving parts.
type realRun struct {
	c     Config
	ctl   *autoscale.Controller
	line  *autoscale.DelayLine
	sched *schedule.Schedule
	scale *scaler
	sat   float64
	t0    time.Time
	rows  []result.AutoscaleRound
	lat   [][]time.Duration // per round; written by the traffic sink only
}

func (r *realRun) currentRound() int {
	return max(0, int(time.Since(r.t0)/r.c.Round))
}

func (r *realRun) drive(ctx context.Context, res *result.Autoscale) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reconcilers := r.scale.run(ctx)
	defer reconcilers.Wait()
	defer cancel()

	// The traffic starts at the next whole round since the epoch (traffic's Align); the
	// control loop counts rounds from the same instant. Not too close to an edge, so that
	// both sides pick the same one.
	for {
		now := time.Now()
		r.t0 = now.Truncate(r.c.Round).Add(r.c.Round)
		if r.t0.Sub(now) > 50*time.Millisecond {
			break
		}
		time.Sleep(r.t0.Sub(now) + time.Millisecond)
	}
	type trafficDone struct {
		sum traffic.Summary
		err error
	}
	done := make(chan trafficDone, 1)
	go func() {
		var maxLate time.Duration
		sum, err := traffic.Run(ctx, r.sched, nil, traffic.Options{
			Path: "/work", Timeout: 2 * time.Second, Grace: 2 * time.Second, Align: r.c.Round, Route: r.scale.route,
		}, func(o traffic.Outcome) error {
			t := schedule.Round(r.sched.Requests[o.Index].At, r.c.Round)
			row := &r.rows[t]
			row.Sent++
			switch {
			case o.Code == 200:
				row.OK++
			case o.Code == 503:
				row.Shed++
			default:
				row.Errors++
			}
			r.lat[t] = append(r.lat[t], o.Latency)
			maxLate = max(maxLate, o.Lateness)
			return nil
		})
		res.Traffic.MaxLateness = float64(maxLate) / float64(time.Millisecond)
		done <- trafficDone{sum, err}
	}()

	required := model.Required(r.c.Series)
	tick := r.c.Round / time.Duration(r.c.ScrapesPerRound)
	for t, load := range r.c.Series {
		var utilSum, readySum float64
		var answered, scrapes int
		for s := 1; s <= r.c.ScrapesPerRound; s++ {
			at := r.t0.Add(time.Duration(t)*r.c.Round + time.Duration(s)*tick)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(at)):
			}
			live := r.scale.ready()
			readySum += float64(len(live))
			if u, n := scrapeAll(ctx, live, tick/2); n > 0 {
				utilSum += u
				answered += n
				scrapes++
			}
		}
		measured := 0.0
		if scrapes > 0 {
			measured = utilSum / float64(scrapes)
		}
		r.line.Record(measured)
		seen, _ := r.line.At(t)
		d := r.ctl.Decide(t, seen)
		r.scale.set(d.To)
		row := &r.rows[t]
		row.Round, row.Load, row.Offered, row.Required = t, load, load*r.c.RateScale, required[t]
		row.Asked, row.Ready = d.To, readySum/float64(r.c.ScrapesPerRound)
		row.Measured, row.Seen, row.Scraped = measured, seen, answered
		if (t+1)%10 == 0 || t == len(r.c.Series)-1 {
			fmt.Fprintf(r.c.Progress, "round %3d: load %4.0f req/s (sent %5.1f/s), required %d, ready %.1f, utilisation %.2f, asked %d\n",
				t, load, row.Offered, row.Required, row.Ready, measured, d.To)
		}
	}
	td := <-done
	if td.err != nil && !errors.Is(td.err, context.Canceled) {
		return fmt.Errorf("traffic: %w", td.err)
	}
	cancel()
	reconcilers.Wait()
	res.Traffic.Scheduled, res.Traffic.Sent = td.sum.Scheduled, td.sum.Sent
	res.Traffic.AskedRate, res.Traffic.AchievedRate, res.Traffic.Truncated = td.sum.AskedRate, td.sum.AchievedRate, td.sum.Truncated
	for t := range r.rows {
		r.rows[t].P99 = p99(r.lat[t])
	}
	res.Rounds = r.rows
	res.Startups = r.scale.startupTimes()
	r.score(res)
	return nil
}

// score computes the document's measures for the asked and the ready counts, and the model's
// for the same settings.
func (r *realRun) score(res *result.Autoscale) {
	n := len(r.rows)
	asked, ready, required := make([]int, n), make([]int, n), make([]int, n)
	for t, row := range r.rows {
		asked[t], ready[t], required[t] = row.Asked, int(math.Round(row.Ready)), row.Required
	}
	step := model.StepRounds
	res.Asked = autoscale.Rate(model.StartReplicas, asked, required, step)
	res.Ready = autoscale.Rate(model.StartReplicas, ready, required, step)
	m, err := model.RunScaling(r.c.Series, model.Setting{Delay: r.c.Delay, Window: r.c.Window, Step: r.c.Step})
	if err == nil {
		res.Model = m.Score
		next := append([]int{model.StartReplicas}, m.Replicas[:n-1]...)
		res.ModelNextRound = autoscale.Rate(model.StartReplicas, next, required, step)
	}
	res.PipelineLag = pipelineLag(r.rows, r.sat, r.c.RateScale)
}

// pipelineLag is the shift, in tenths of a round from 0 to 3, that best lines up the load the
// replicas reported (utilisation × ready replicas × saturation) with the load offered.
func pipelineLag(rows []result.AutoscaleRound, sat, scale float64) float64 {
	best, bestErr := 0.0, math.Inf(1)
	for k := 0; k <= 30; k++ {
		lag := float64(k) / 10
		var sum float64
		var n int
		for t, row := range rows {
			x := float64(t) - lag
			i := int(math.Floor(x))
			if i < 0 || i+1 >= len(rows) || row.Ready == 0 {
				continue
			}
			frac := x - float64(i)
			offered := rows[i].Offered*(1-frac) + rows[i+1].Offered*frac
			reported := row.Measured * row.Ready * sat
			sum += (reported - offered) * (reported - offered)
			n++
		}
		if n > 0 && sum/float64(n) < bestErr {
			best, bestErr = lag, sum/float64(n)
		}
	}
	return best
}

func p99(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return float64(d[min(len(d)-1, int(math.Ceil(0.99*float64(len(d))))-1)]) / float64(time.Millisecond)
}
