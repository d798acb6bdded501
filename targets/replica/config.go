package replica

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/textproto"
	"strings"
	"time"

	"github.com/edgeproof/rlharness/internal/service"
	"github.com/edgeproof/rlharness/limiters"
)

// Defaults of the command line that are not figures of the document.
const (
	DefaultListen       = ":8080"
	DefaultClientHeader = "X-Client-ID"
	// ClassHeader names the client class that rules can match with {class: …}.
	ClassHeader = "X-Client-Class"
	// MaxClientIDBytes is the longest client ID a replica counts; a longer one is a 400,
	// so no client can make the store hold arbitrarily long keys.
	MaxClientIDBytes = 256
)

// Config is a replica's command line (docs/DESIGN.md, "Replica command line").
type Config struct {
	Listen       string
	Redis        string // the counter store: host:port, or a cluster's seeds (ParseRedisAddrs); central and delayed modes
	Mode         limiters.Mode
	NodeIndex    int
	NodeCount    int
	SyncInterval time.Duration
	StoreTimeout time.Duration
	// StoreWait is how long the bounded design's decision past a node's budget waits for the
	// store (syncs and other modes' calls wait StoreTimeout); 0 is limiters.DefaultStoreWait.
	StoreWait    time.Duration
	RulesPath    string // empty: the embedded default rules
	ClientHeader string
	// Design is delayed mode's design: DesignBounded (the default) or DesignDocument.
	Design limiters.Design
}

// Delayed mode's designs (--design), spelled as limiters spells them.
const (
	// DesignBounded is the bounded design (docs/design-bound.md), the default: an unsynced
	// budget per node and client, past it one atomic store decision (limiters.BoundedSync).
	DesignBounded = limiters.DesignBounded
	// DesignDocument is the document's delayed sync, kept for comparison: every node pushes
	// every count each interval and decides on the last view plus its own counts
	// (limiters.DelayedSync).
	DesignDocument = limiters.DesignDocument
)

// DefaultConfig is the configuration of a replica started without flags or environment.
func DefaultConfig() Config {
	return Config{
		Listen:       DefaultListen,
		Mode:         limiters.ModeDelayed,
		NodeIndex:    0,
		NodeCount:    limiters.DefaultNodes,        // HS4
		SyncInterval: limiters.DefaultSyncInterval, // HS5
		StoreTimeout: limiters.DefaultStoreTimeout,
		StoreWait:    limiters.DefaultStoreWait,
		ClientHeader: DefaultClientHeader,
		Design:       DesignBounded,
	}
}

// ParseFlags reads a replica's configuration from args (without the program name); a flag
// missing from args takes its environment variable (looked up with lookupEnv, os.LookupEnv
// in main), else its default. Usage and errors go to output. It returns flag.ErrHelp for
// -h/--help, and an error for a bad flag, a bad environment value or an invalid whole.
func ParseFlags(name string, args []string, lookupEnv func(string) (string, bool), output io.Writer) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(output)
	mode, design := string(cfg.Mode), string(cfg.Design)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to serve decisions on, host:port [env REPLICA_LISTEN]")
	fs.StringVar(&cfg.Redis, "redis", cfg.Redis, "counter store: host:port of one Redis, or a Redis Cluster's seed nodes host:port,host:port,... or redis-cluster://host:port,...; required in central and delayed modes [env REPLICA_REDIS]")
	fs.StringVar(&mode, "mode", mode, "distributed mode: central | split | delayed | peer-gcra (go-redis/redis_rate) | peer-ulule (ulule/limiter), for comparison [env REPLICA_MODE]")
	fs.IntVar(&cfg.NodeIndex, "node-index", cfg.NodeIndex, "this replica's index in the fleet, 0 ≤ index < node-count [env REPLICA_NODE_INDEX]")
	fs.IntVar(&cfg.NodeCount, "node-count", cfg.NodeCount, "replicas in the fleet; split mode enforces limit/node-count [env REPLICA_NODE_COUNT]")
	fs.DurationVar(&cfg.SyncInterval, "sync-interval", cfg.SyncInterval, "delayed mode: time between exchanges with the store [env REPLICA_SYNC_INTERVAL]")
	fs.DurationVar(&cfg.StoreTimeout, "store-timeout", cfg.StoreTimeout, "longest wait for a store call (a sync's; a bounded decision's is --store-wait); past it the replica decides fail-open. Under --design bounded the least: it follows the measured round trip to the store, up to 4x the longer of this and --store-wait [env REPLICA_STORE_TIMEOUT]")
	fs.DurationVar(&cfg.StoreWait, "store-wait", cfg.StoreWait, "bounded design: how long the store's decision past a node's budget is waited for at least (it follows the measured round trip to the store, as --store-timeout does); past it the node decides alone (up to its share of the limit, its lease of the client once the store is known down) [env REPLICA_STORE_WAIT]")
	fs.StringVar(&cfg.RulesPath, "rules", cfg.RulesPath, "YAML rule file; SIGHUP reloads it (default: the embedded 600 per 60 s sliding window) [env REPLICA_RULES]")
	fs.StringVar(&design, "design", design, "delayed mode's design: bounded (the default: an unsynced budget per client, past it one store call; docs/design-bound.md) | document (the document's delayed sync, for comparison) [env REPLICA_DESIGN]")
	fs.StringVar(&cfg.ClientHeader, "client-header", cfg.ClientHeader, "request header carrying the client ID [env REPLICA_CLIENT_HEADER]")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: %s [flags]

The limiter replica: every request is one decision for the client named in the
client header (200 allowed, 429 rejected, 400 without a valid client ID), with
RateLimit-Policy and RateLimit header fields. GET /healthz answers 200 once ready,
GET /metrics serves Prometheus metrics. SIGHUP reloads the rules, SIGTERM drains.

Flags (a flag not given falls back to its environment variable):
`, name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q: every setting is a flag (see --help)", fs.Arg(0))
	}
	if err := service.EnvFallback(fs, "REPLICA_", lookupEnv); err != nil {
		return cfg, err
	}
	cfg.Mode, cfg.Design = limiters.Mode(mode), limiters.Design(design)
	return cfg, cfg.Validate()
}

// Validate reports what is wrong with the configuration as a whole, worded as flags.
func (c Config) Validate() error {
	var errs []error
	switch c.Mode {
	case limiters.ModeCentral, limiters.ModeDelayed, limiters.ModePeerGCRA, limiters.ModePeerUlule:
		if c.Redis == "" {
			errs = append(errs, fmt.Errorf("--redis is required in %s mode: give the counter store's host:port (or REPLICA_REDIS)", c.Mode))
		} else if _, _, err := ParseRedisAddrs(c.Redis); err != nil {
			errs = append(errs, err)
		}
	case limiters.ModeSplit:
	default:
		errs = append(errs, fmt.Errorf("--mode %q is unknown: want central, split or delayed (or peer-gcra or peer-ulule, peer limiters for comparison)", c.Mode))
	}
	if c.NodeCount < 1 {
		errs = append(errs, fmt.Errorf("--node-count must be >= 1 (got %d)", c.NodeCount))
	} else if c.NodeIndex < 0 || c.NodeIndex >= c.NodeCount {
		errs = append(errs, fmt.Errorf("--node-index must be in 0..%d for --node-count %d (got %d)", c.NodeCount-1, c.NodeCount, c.NodeIndex))
	}
	if c.SyncInterval <= 0 {
		errs = append(errs, fmt.Errorf("--sync-interval must be > 0 (got %s)", c.SyncInterval))
	}
	if c.StoreTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--store-timeout must be > 0 (got %s)", c.StoreTimeout))
	}
	if c.StoreWait < 0 {
		errs = append(errs, fmt.Errorf("--store-wait must be >= 0 (got %s; 0 is the default, %s)", c.StoreWait, limiters.DefaultStoreWait))
	}
	if c.Design != DesignDocument && c.Design != DesignBounded {
		errs = append(errs, fmt.Errorf("--design %q is unknown: want %s (the default) or %s", c.Design, DesignBounded, DesignDocument))
	}
	if c.Listen == "" {
		errs = append(errs, errors.New("--listen is empty: give host:port, e.g. :8080"))
	}
	if !validHeaderName(c.ClientHeader) {
		errs = append(errs, fmt.Errorf("--client-header %q is not a header name (e.g. X-Client-ID)", c.ClientHeader))
	}
	return errors.Join(errs...)
}

// validHeaderName reports whether s is an HTTP field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// clientHeaderKey is the canonical form of the client header, as net/http stores it.
func (c Config) clientHeaderKey() string { return textproto.CanonicalMIMEHeaderKey(c.ClientHeader) }
