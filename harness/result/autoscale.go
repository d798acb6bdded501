package result

import (
	"time"

	"github.com/edgeproof/rlharness/autoscale"
)

// AutoscaleFile is the name of a real autoscaling run's result in its run directory.
const AutoscaleFile = "autoscale.json"

// Autoscale is what `harness run autoscale` leaves behind: the settings, every round, the
// replicas' measured start-up times and the document's scores, real beside the model's.
type Autoscale struct {
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at"`
	Settings   AutoscaleConfig  `json:"settings"`
	Conditions Conditions       `json:"conditions"`
	Rounds     []AutoscaleRound `json:"rounds"`
	Startups   []Startup        `json:"startups"`
	// Asked scores the counts the controller asked for, indexed as the model does (the
	// decision of round t counts for round t); Ready scores the replicas that were serving.
	Asked autoscale.Score `json:"asked"`
	Ready autoscale.Score `json:"ready"`
	// Model is the document's model at the same settings; ModelNextRound is the same counts
	// applied one round later, the earliest a real replica can serve after a decision.
	Model          autoscale.Score `json:"model"`
	ModelNextRound autoscale.Score `json:"model_next_round"`
	// PipelineLag is the real metric delay estimated from the run: the shift, in rounds, that
	// best lines up the load the replicas reported with the load offered.
	PipelineLag float64          `json:"pipeline_lag_rounds"`
	Traffic     AutoscaleTraffic `json:"traffic"`
}

// AutoscaleConfig is the run's settings.
type AutoscaleConfig struct {
	Controller      autoscale.Config `json:"controller"`
	AddedDelay      int              `json:"added_delay_rounds"`
	Round           time.Duration    `json:"round"`
	RateScale       float64          `json:"rate_scale"`
	Saturation      float64          `json:"saturation_rps"` // per replica, after the rate scale
	ScrapesPerRound int              `json:"scrapes_per_round"`
	Warmup          time.Duration    `json:"warmup"`
	MaxQueue        time.Duration    `json:"max_queue"`
}

// AutoscaleRound is one round of a real run.
type AutoscaleRound struct {
	Round    int     `json:"round"`
	Load     float64 `json:"load"`     // the document's req/s
	Offered  float64 `json:"offered"`  // req/s sent in this run, after the rate scale
	Required int     `json:"required"` // the ideal for Load
	Asked    int     `json:"asked"`    // replicas the controller asked for at the end of the round
	Ready    float64 `json:"ready"`    // replicas serving, averaged over the round's scrapes
	Measured float64 `json:"measured"` // mean utilisation scraped in the round
	Seen     float64 `json:"seen"`     // the utilisation the controller decided on (after the added delay)
	Scraped  int     `json:"scraped"`  // replica scrapes that answered
	Sent     int     `json:"sent"`     // requests of the round that got an outcome
	OK       int     `json:"ok"`       // 200
	Shed     int     `json:"shed"`     // 503: a replica's queue was full
	Errors   int     `json:"errors"`   // transport errors and other statuses
	P99      float64 `json:"p99_ms"`   // latency, ms
}

// Startup is one replica start: asked at, ready after.
type Startup struct {
	Member string        `json:"member"`
	Round  int           `json:"round"`
	Took   time.Duration `json:"took"`
	Error  string        `json:"error,omitempty"`
	// Unfinished is a start the run's end cut short: neither a start-up time nor a failure.
	Unfinished bool `json:"unfinished,omitempty"`
}

// AutoscaleTraffic is the generator's side of the run.
type AutoscaleTraffic struct {
	Scheduled    int     `json:"scheduled"`
	Sent         int     `json:"sent"`
	AskedRate    float64 `json:"asked_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Truncated    bool    `json:"truncated"`
	MaxLateness  float64 `json:"max_lateness_ms"`
}
