package result

// RateLimitModel is the document's rate-limiter model (harness model ratelimit) as the run
// was judged beside it: the figures the report sets beside the measured ones. A run saves
// it in its summary, so that its report shows the model of the code that ran, not the model
// of the code that renders the report.
type RateLimitModel struct {
	// Gate is the overshoot a verdict allows, as a multiple of the limit (requirement 1).
	Gate        float64     `json:"gate"`
	Windows     []WindowRow `json:"windows"`
	Distributed []DistRow   `json:"distributed"`
}

// WindowRow is one line of the window table (pencere.mjs): one pattern under one algorithm.
type WindowRow struct {
	Pattern   string  `json:"pattern"`
	Requests  int     `json:"requests"`
	Algorithm string  `json:"algorithm"`
	Accepted  int     `json:"accepted"`
	Rejected  int     `json:"rejected"`
	Busiest   int     `json:"busiest_window"`
	Overshoot int     `json:"overshoot"`
	Ratio     float64 `json:"ratio"`
}

// DistRow is one line of the distributed-counter tables (dagitik.mjs): one client rate
// under one mode.
type DistRow struct {
	ClientRate   int     `json:"client_rate"`
	Mode         string  `json:"mode"`
	SyncInterval float64 `json:"sync_interval_s,omitempty"`
	Requests     int     `json:"requests"`
	Accepted     int     `json:"accepted"`
	Rejected     int     `json:"rejected"`
	Overshoot    int     `json:"overshoot"`
	FalseRejects int     `json:"false_rejects"`
	Touches      int64   `json:"touches"`
	// RunExchanges is, for delayed sync, the store exchanges the nodes made in this run,
	// syncing on requests; Touches is what their timers cost over a window.
	RunExchanges  int64   `json:"run_exchanges,omitempty"`
	TouchesPerSec float64 `json:"touches_per_s"`
	Ratio         float64 `json:"ratio"`
	Passes        bool    `json:"passes"`
}
