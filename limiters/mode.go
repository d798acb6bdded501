package limiters

// Mode names how the nodes of a fleet share their counts: the rate-limiter document's
// three distributed modes. Its spelling is the one flags, rule files and result files use.
type Mode string

// The distributed modes.
const (
	// ModeCentral decides every request with one atomic round trip to the store (Central).
	ModeCentral Mode = "central"
	// ModeSplit enforces limit/node count alone on each node, with no store (Split).
	ModeSplit Mode = "split"
	// ModeDelayed counts locally and exchanges counts with the store every sync interval
	// (DelayedSync): the document's choice.
	ModeDelayed Mode = "delayed"
)

// Modes lists the distributed modes in the order the document's tables give them, so that a
// model's table and a load test's comparison matrix walk them alike.
func Modes() []Mode { return []Mode{ModeCentral, ModeSplit, ModeDelayed} }

// The replica's modes that are not ours: a peer limiter decides instead of this package, so
// that a benchmark or a load test can put it beside the design in the same fleet and run
// (targets/replica says how each decides). They are not among Modes.
const (
	// ModePeerGCRA decides with github.com/go-redis/redis_rate: GCRA, one Redis call per
	// decision, the store's clock.
	ModePeerGCRA Mode = "peer-gcra"
	// ModePeerUlule decides with github.com/ulule/limiter v3's net/http middleware and its
	// Redis store, with no fallback: it fails closed.
	ModePeerUlule Mode = "peer-ulule"
)

// Design names how delayed sync decides and shares its counts. Its spelling is the one the
// replica's --design, the fleet, the load test and the result files use.
type Design string

// Delayed sync's designs.
const (
	// DesignBounded is the design with a proven bound (BoundedSync, docs/design-bound.md):
	// an unsynced budget per node and client, past it one atomic store decision. It is the
	// replica's delayed mode unless another design is asked for.
	DesignBounded Design = "bounded"
	// DesignDocument is the document's delayed sync (DelayedSync): every node pushes every
	// count each interval and decides on the last view plus its own counts. It is kept for
	// comparison: aimed traffic and the documents' load (HS2) take it past 1.1×.
	DesignDocument Design = "document"
)

// Designs lists delayed sync's designs, the default first.
func Designs() []Design { return []Design{DesignBounded, DesignDocument} }
