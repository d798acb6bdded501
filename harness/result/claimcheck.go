package result

import (
	"fmt"
	"time"

	"github.com/edgeproof/rlharness/claimcheck"
)

// ClaimCheckFile is the name of a real claim-check run's results in its run directory
// (harness run claimcheck --out DIR); the report gives it a section.
const ClaimCheckFile = "claimcheck.json"

// ClaimRun is one setting of `harness run claimcheck`: the settings, the model's figures
// for the same events, what Redis held afterwards, and the checks.
type ClaimRun struct {
	Placement  string        `json:"placement"`
	Deletion   string        `json:"deletion,omitempty"`
	Events     int           `json:"events"`
	Rate       float64       `json:"rate"`
	Seed       uint32        `json:"seed"`
	TTL        time.Duration `json:"ttl_ns"`
	Visibility time.Duration `json:"visibility_ns"`
	Conditions Conditions    `json:"conditions"`
	Model      ClaimCounts   `json:"model"`             // the document's model: no ledger
	Predicted  ClaimCounts   `json:"model_with_ledger"` // the same with the real pipeline's ledger
	Measured   ClaimMeasured `json:"measured"`
	Checks     []RunCheck    `json:"checks"`
	Pass       bool          `json:"pass"`
}

// ClaimSettings are one run of the claim-check pipeline on the model's queue and store
// (model.RunClaim), as claimcheck.json records them beside a real run.
type ClaimSettings struct {
	N             int                  `json:"events"`
	Placement     claimcheck.Placement `json:"placement"`
	Deletion      claimcheck.Deletion  `json:"deletion,omitempty"` // claim placement only
	ProducerCrash float64              `json:"producer_crash_p"`
	ConsumerCrash float64              `json:"consumer_crash_p"`
	Seed          uint32               `json:"seed"`
	// Ledger runs the consumer with an idempotency ledger, as the real pipeline does; the
	// document's model has none.
	Ledger bool `json:"ledger"`
}

// ClaimCounts are the claim-check model's figures for one setting: one line of olc.mjs's
// tables, plus what the ledger adds.
type ClaimCounts struct {
	ClaimSettings
	ClaimTally
}

// CarriedMB is the bytes carried in MB (10⁶), as olc.mjs prints them.
func (t ClaimTally) CarriedMB() float64 { return float64(t.CarriedBytes) / 1e6 }

// ClaimTally is what one run of the claim-check model counted.
type ClaimTally struct {
	MessageBytes int   `json:"message_bytes"`
	Deliveries   int   `json:"deliveries"`
	CarriedBytes int64 `json:"carried_bytes"`
	Lost         int   `json:"lost_events"`     // never entered the queue, no payload either
	Orphans      int   `json:"orphan_payloads"` // in the store, no message refers to them
	Dangling     int   `json:"dangling_claims"` // a message whose payload was gone
	Processed    int   `json:"processed"`       // effects applied, duplicates included
	Duplicates   int   `json:"duplicates_prevented"`
	LeftInStore  int   `json:"left_in_store"`
	ProducerDied int   `json:"producer_crashes"`
	ConsumerDied int   `json:"consumer_crashes"`
}

// Setting is the run's placement and deletion as the model's tables name them: "attach",
// "claim immediate", "claim ttl".
func (r ClaimRun) Setting() string {
	if r.Deletion == "" {
		return r.Placement
	}
	return r.Placement + " " + r.Deletion
}

// Faults says whether the fault window's crashes were injected.
func (r ClaimRun) Faults() bool { return r.Model.ProducerCrash > 0 || r.Model.ConsumerCrash > 0 }

// Name is the setting and its fault condition: "claim immediate, fault window".
func (r ClaimRun) Name() string {
	if r.Faults() {
		return r.Setting() + ", fault window"
	}
	return r.Setting() + ", fault-free"
}

// ClaimMeasured is what Redis holds after a claim-check run, and what the harness saw of
// the producer.
type ClaimMeasured struct {
	Sent            int     `json:"events_sent"`
	Acknowledged    int     `json:"acknowledged"`    // 204 from the producer
	Resent          int     `json:"resent"`          // sends repeated after a refused or broken connection
	StreamEntries   int     `json:"stream_entries"`  // XLEN
	EntryBytes      int64   `json:"entry_bytes"`     // bytes of the stream's entries (XRANGE)
	Deliveries      int     `json:"deliveries"`      // consumers' count in Redis, redeliveries included
	Redeliveries    int     `json:"redeliveries"`    // entries reclaimed by XAUTOCLAIM
	QueueBytes      int64   `json:"queue_bytes"`     // bytes those deliveries carried
	StorePayloads   int     `json:"store_payloads"`  // payload keys (SCAN)
	StoreBytes      int64   `json:"store_bytes"`     // their STRLEN
	Orphans         int     `json:"orphan_payloads"` // payloads no stream entry refers to
	Dangling        int     `json:"dangling_claims"` // dead-letter stream
	Errors          int     `json:"errors"`          // error stream: corrupt or malformed
	Processed       int     `json:"processed"`       // distinct events whose effect was applied
	Effects         int     `json:"effects"`         // effects applied in all: processed + duplicates let through
	Duplicates      int     `json:"duplicates_prevented"`
	Lost            int     `json:"lost_events"`      // in neither the stream nor the store
	ProducerCrashes int     `json:"producer_crashes"` // injected, from the fault log
	ConsumerCrashes int     `json:"consumer_crashes"`
	Pending         int     `json:"pending"` // unacknowledged entries left at the end
	Lag             int64   `json:"lag"`     // entries never read
	Seconds         float64 `json:"seconds"`
}

// RunCheck is one assertion of a run that has no gates of its own (a claim-check run):
// its name, whether it held, and the figures behind it in words.
type RunCheck struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// ClaimFigure is one line of a claim-check run's table: the document's model, the model
// with the real pipeline's ledger, and what Redis held. "-" where a column has no figure.
type ClaimFigure struct {
	Name                    string
	Model, Ledger, Measured string
}

// Figures are the run's table, in the order the terminal and the report print it: the
// model's figures for the same events beside the measured ones.
func (r ClaimRun) Figures() []ClaimFigure {
	m, doc, led := r.Measured, r.Model, r.Predicted
	n := func(v int) string { return fmt.Sprint(v) }
	mb := func(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1e6) }
	avg := "-"
	if m.StreamEntries > 0 {
		avg = fmt.Sprintf("%.0f", float64(m.EntryBytes)/float64(m.StreamEntries))
	}
	return []ClaimFigure{
		{"message bytes", n(doc.MessageBytes), n(led.MessageBytes), avg},
		{"deliveries", n(doc.Deliveries), n(led.Deliveries), n(m.Deliveries)},
		{"carried MB", mb(doc.CarriedBytes), mb(led.CarriedBytes), mb(m.QueueBytes)},
		{"lost events", n(doc.Lost), n(led.Lost), n(m.Lost)},
		{"orphan payloads", n(doc.Orphans), n(led.Orphans), n(m.Orphans)},
		{"dangling claims", n(doc.Dangling), n(led.Dangling), n(m.Dangling)},
		{"processed", n(doc.Processed), n(led.Processed), n(m.Effects)},
		{"duplicates prevented", "-", n(led.Duplicates), n(m.Duplicates)},
		{"left in store", n(doc.LeftInStore), n(led.LeftInStore), n(m.StorePayloads)},
		{"store MB", "-", "-", mb(m.StoreBytes)},
		{"producer crashes", n(doc.ProducerDied), n(led.ProducerDied), n(m.ProducerCrashes)},
		{"consumer crashes", n(doc.ConsumerDied), n(led.ConsumerDied), n(m.ConsumerCrashes)},
		{"acknowledged to the sender", "-", "-", n(m.Acknowledged)},
		// A send is repeated when the producer refused the connection or broke it mid-request
		// (it died between accepting and answering); both count here.
		{"resent after a refused or broken connection", "-", "-", n(m.Resent)},
		{"redeliveries (XAUTOCLAIM)", "-", "-", n(m.Redeliveries)},
	}
}
