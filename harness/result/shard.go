package result

import (
	"time"

	"github.com/edgeproof/rlharness/harness/schedule"
)

// ShardFile is the name of a generator shard's metadata in its directory, beside its
// outcomes.csv; Write and Read[Shard] write and read it.
const ShardFile = "shard.json"

// ClockOffset is a generator's clock against a common reference: Offset is the reference's
// time minus the local clock's, measured with the round trip halved, from the sample of
// least round trip; the true offset lies within ±RTT/2 of it.
type ClockOffset struct {
	Reference  string        `json:"reference"` // "redis TIME 10.0.0.5:6379"
	Offset     time.Duration `json:"offset_ns"`
	RTT        time.Duration `json:"rtt_ns"`
	Samples    int           `json:"samples"`
	MeasuredAt time.Time     `json:"measured_at"`
}

// Shard is shard.json: what one generator shard was asked to send and what it did.
type Shard struct {
	Shard     int           `json:"shard"`  // 0-based index
	Shards    int           `json:"shards"` // N
	Scenario  string        `json:"scenario"`
	Algorithm string        `json:"algorithm,omitempty"` // what the target runs, for the document's claims
	Mode      string        `json:"mode,omitempty"`
	Schedule  schedule.Spec `json:"schedule"` // what the shard built the whole schedule from
	Targets   []string      `json:"targets"`
	// Start is the run's origin on this machine's clock, the same instant given to every
	// shard; offsets in outcomes.csv count from it.
	Start       time.Time     `json:"start"`
	ClockOffset *ClockOffset  `json:"clock_offset,omitempty"`
	Host        string        `json:"host"`
	Cores       int           `json:"cores"`
	Commit      string        `json:"commit,omitempty"`
	Scheduled   int           `json:"scheduled"` // this shard's requests
	Sent        int           `json:"sent"`
	LastSent    time.Duration `json:"last_sent_ns"`
	Truncated   bool          `json:"truncated,omitempty"`
	FinishedAt  time.Time     `json:"finished_at"`
	Error       string        `json:"error,omitempty"`
}

// ClockSkew is how far apart the shards' clocks were, as the judge read their offsets.
type ClockSkew struct {
	Offsets []ShardOffset `json:"offsets"`
	// Max is the largest difference between two shards' offsets, widened by both
	// measurements' uncertainty (RTT/2 each): the most two shards' starts can have differed.
	Max       time.Duration `json:"max_ns"`
	Tolerance time.Duration `json:"tolerance_ns"`
	// Measured is false when the shards ran on more than one host and some shard recorded no
	// offset: the skew is then unbounded.
	Measured bool `json:"measured"`
	Exceeded bool `json:"exceeded"`
}

// ShardOffset is one shard's clock offset in the judge's report.
type ShardOffset struct {
	Shard  int           `json:"shard"`
	Host   string        `json:"host"`
	Offset time.Duration `json:"offset_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	Known  bool          `json:"known"`
}
