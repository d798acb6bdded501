package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgeproof/rlharness/harness/model"
	"github.com/edgeproof/rlharness/harness/result"
	"github.com/edgeproof/rlharness/limiters"
)

// The document sizes memory at model.RecordBytes (48 B, HS6) a record: one record a client
// for the fixed window and the token bucket, one a slice for the sliding window.
const (
	memorySamples = 200  // clients whose keys MEMORY USAGE reads
	loadBatch     = 1000 // clients per exchange script call or pipeline
)

// redisServer is a redis-server child process on a free loopback port, without persistence.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

func startRedis(ctx context.Context, bin string) (*redisServer, error) {
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (%w): install it (apt-get install -y redis-server) or run make deps", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &redisServer{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	if err := waitPing(ctx, c); err != nil {
		s.stop()
		return nil, fmt.Errorf("redis-server on %s: %w", s.addr, err)
	}
	return s, nil
}

func (s *redisServer) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// setScript writes the document's layout in one command per batch: every key a count with a
// TTL, the same keys a pipeline of SETs would leave, without a round trip's parsing for each.
var setScript = redis.NewScript(`
for i = 1, #KEYS do redis.call('SET', KEYS[i], (i - 1) % 12 + 1, 'PX', ARGV[1]) end
`)

// layout is one way of keeping every client's counters in Redis.
type layout struct {
	name, keys string
	records    int // counters a client holds once loaded
	// clients, when set, is how many of the clients this layout loads (a client at its
	// limit in the bounded design holds hundreds of fields: 200,000 of them would not fit).
	clients int
	// load writes every client's counters as of now; keysOf lists a client's keys.
	load   func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error
	keysOf func(id string, now time.Time) []string
}

// layouts are ours (limiters.RedisStore: one small hash per client and rule, written by a
// delayed-sync exchange, as the replicas do) and the document's sliding window as it sizes
// it: one record, a string key, per slice. Every client is loaded with every counter its
// algorithm can hold at once: the sliding window with all 12 slices of the window.
func layouts() []layout {
	fixed := limiters.Rule{Name: "default", Algorithm: limiters.FixedWindow, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow}
	sliding := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Slices: limiters.DefaultSlices}
	bucket := limiters.Rule{Name: "default", Algorithm: limiters.TokenBucket, Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Burst: limiters.DefaultBurst}
	slice := sliding.Window / time.Duration(sliding.Slices)
	ours := func(r *limiters.Rule, slices int) func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
		return func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
			st := limiters.NewRedisStore(rdb)
			d := now.UnixNano() / int64(slice)
			if r.Algorithm == limiters.FixedWindow {
				d = now.UnixNano() / int64(r.Window)
			}
			entries := make([]limiters.SyncEntry, 0, loadBatch)
			for start := 0; start < len(ids); start += loadBatch {
				entries = entries[:0]
				for _, id := range ids[start:min(start+loadBatch, len(ids))] {
					e := limiters.SyncEntry{Client: id, Rule: r, Spent: 1}
					for k := range slices {
						e.Push = append(e.Push, limiters.SliceCount{Index: d - int64(k), Count: 1 + int64(k)})
					}
					entries = append(entries, e)
				}
				if err := st.Exchange(ctx, now, entries); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// marked loads every client as nodes replicas leave it: each pushes some of the window's
	// slices under its own push mark (limiters.NodeID), so the hash holds a mark per replica.
	marked := func(r *limiters.Rule, nodes int) func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
		return func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
			st := limiters.NewRedisStore(rdb)
			d := now.UnixNano() / int64(slice)
			entries := make([]limiters.SyncEntry, 0, loadBatch)
			for start := 0; start < len(ids); start += loadBatch {
				for node := range nodes {
					entries = entries[:0]
					for _, id := range ids[start:min(start+loadBatch, len(ids))] {
						e := limiters.SyncEntry{Client: id, Rule: r}
						var total int64
						for k := node; k < r.Slices; k += nodes {
							e.Push = append(e.Push, limiters.SliceCount{Index: d - int64(r.Slices-1-k), Count: 1 + int64(k)})
							total += 1 + int64(k)
						}
						e.Mark = limiters.PushMark{Node: strconv.Itoa(node) + "-ABCDEF", Inc: 1, Total: total}
						entries = append(entries, e)
					}
					if err := st.Exchange(ctx, now, entries); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	oursKeys := func(r *limiters.Rule) func(string, time.Time) []string {
		return func(id string, _ time.Time) []string { return []string{limiters.Key(id, r)} }
	}
	docKey := func(id string, idx int64) string {
		return limiters.Key(id, &sliding) + ":" + strconv.FormatInt(idx, 10)
	}
	bd := limiters.BoundsFor(&sliding, limiters.DefaultNodes)
	boundedKeys := func(id string, _ time.Time) []string {
		return []string{limiters.BoundedKey(id, &sliding), limiters.BoundedLogKey(id, &sliding)}
	}
	return []layout{
		{name: "fixed_window (ours: one hash per client)", keys: "rl:{client}:default:fixed_window → {window: count}",
			records: 1, load: ours(&fixed, 1), keysOf: oursKeys(&fixed)},
		{name: "token_bucket (ours: one hash per client)", keys: "rl:{client}:default:token_bucket → {t: tokens, a: µs}",
			records: 1, load: ours(&bucket, 0), keysOf: oursKeys(&bucket)},
		{name: "sliding_window, 12 slices (ours: one hash per client)", keys: "rl:{client}:default:sliding_window → {slice: count} × 12",
			records: sliding.Slices, load: ours(&sliding, sliding.Slices), keysOf: oursKeys(&sliding)},
		{name: "sliding_window, 12 slices, pushed by 8 replicas (ours, with each replica's push mark)",
			keys:    "rl:{client}:default:sliding_window → {slice: count} × 12, {n:<node>: inc:total} × 8",
			records: sliding.Slices, load: marked(&sliding, limiters.DefaultNodes), keysOf: oursKeys(&sliding)},
		{name: "sliding_window, the bounded design: clients within their budgets (HS2's: about 1.5 requests per node and window)",
			keys:    "nothing: a client a node decides within its unsynced budget is never pushed; only rl:epoch",
			records: 0, load: boundedWithin(&sliding), keysOf: func(string, time.Time) []string { return nil }},
		{name: fmt.Sprintf("sliding_window, the bounded design: a client at its limit (%d evenly over the window, pushed by 8 replicas)", sliding.Limit),
			keys: fmt.Sprintf("rl:{client}:default:sliding_window:log → {seq: decision µs} × %d; rl:{client}:default:sliding_window:b → _clk, _seq, {n:<node>: inc:total:call} × 8",
				sliding.Limit),
			records: int(sliding.Limit), clients: boundedHotClients, load: boundedAtLimit(&sliding, bd), keysOf: boundedKeys},
		{name: "sliding_window, 12 slices (the document's: one key per slice)", keys: "rl:{client}:default:sliding_window:<slice> → count, × 12 keys",
			records: sliding.Slices,
			load: func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
				d := now.UnixNano() / int64(slice)
				ttl := (sliding.Window + slice).Milliseconds()
				keys := make([]string, 0, loadBatch*sliding.Slices)
				for start := 0; start < len(ids); start += loadBatch {
					keys = keys[:0]
					for _, id := range ids[start:min(start+loadBatch, len(ids))] {
						for k := range sliding.Slices {
							keys = append(keys, docKey(id, d-int64(k)))
						}
					}
					if err := setScript.Run(ctx, rdb, keys, ttl).Err(); err != nil && !errors.Is(err, redis.Nil) {
						return err
					}
				}
				return nil
			},
			keysOf: func(id string, now time.Time) []string {
				d := now.UnixNano() / int64(slice)
				keys := make([]string, sliding.Slices)
				for k := range keys {
					keys[k] = docKey(id, d-int64(k))
				}
				return keys
			}},
	}
}

// Memory loads clients (HS1: 200,000) through each counter layout into a fresh redis-server
// and measures what the store holds: INFO memory used_memory after minus before, and the
// mean MEMORY USAGE of the keys of sampled clients.
func Memory(ctx context.Context, redisBin string, clients int, seed uint64) ([]result.MemoryLayout, error) {
	srv, err := startRedis(ctx, redisBin)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	defer rdb.Close()
	ids := make([]string, clients)
	digits := len(strconv.Itoa(clients - 1))
	for i := range ids {
		ids[i] = fmt.Sprintf("bg-%0*d", digits, i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d656d))
	var out []result.MemoryLayout
	for _, l := range layouts() {
		m, err := measureLayout(ctx, rdb, l, ids, rng)
		if err != nil {
			return out, fmt.Errorf("%s: %w", l.name, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func measureLayout(ctx context.Context, rdb *redis.Client, l layout, ids []string, rng *rand.Rand) (result.MemoryLayout, error) {
	if l.clients > 0 && l.clients < len(ids) {
		ids = ids[:l.clients]
	}
	m := result.MemoryLayout{Name: l.name, Layout: l.keys, Clients: len(ids), Records: l.records,
		Estimate: float64(model.RecordBytes * l.records)}
	m.EstimateTotal = m.Estimate * float64(len(ids))
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return m, err
	}
	before, err := usedMemory(ctx, rdb)
	if err != nil {
		return m, err
	}
	now := time.Now()
	begin := time.Now()
	if err := l.load(ctx, rdb, ids, now); err != nil {
		return m, err
	}
	m.LoadTime = time.Since(begin).Seconds()
	after, err := usedMemory(ctx, rdb)
	if err != nil {
		return m, err
	}
	m.UsedDelta = after - before
	m.PerClient = float64(m.UsedDelta) / float64(len(ids))
	if m.Keys, err = rdb.DBSize(ctx).Result(); err != nil {
		return m, fmt.Errorf("DBSIZE: %w", err)
	}
	var total int64
	for range memorySamples {
		id := ids[rng.IntN(len(ids))]
		for _, k := range l.keysOf(id, now) { // none for a layout that keeps nothing
			n, err := rdb.MemoryUsage(ctx, k, 0).Result()
			if errors.Is(err, redis.Nil) {
				return m, fmt.Errorf("key %q of client %s is missing after the load", k, id)
			}
			if err != nil {
				return m, fmt.Errorf("MEMORY USAGE %s: %w", k, err)
			}
			total += n
		}
	}
	m.Samples = memorySamples
	m.SampleUsage = float64(total) / memorySamples
	return m, rdb.FlushAll(ctx).Err()
}

func usedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO memory: %w", err)
	}
	return infoField(info, "used_memory")
}

// boundedHotClients is how many clients at their limit figure 5 loads into the bounded
// layout: each holds a few hundred fields.
const boundedHotClients = 2000

// boundedWithin loads every client as the bounded design's replicas leave a client that
// stays within its nodes' budgets: 8 nodes (limiters.BoundedSync over the store), each
// deciding its share of a client's one or two requests alone, then syncing. The store keeps
// the epoch key and nothing of the clients.
func boundedWithin(r *limiters.Rule) func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
	return func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
		nodes := make([]*limiters.BoundedSync, limiters.DefaultNodes)
		for i := range nodes {
			nodes[i] = limiters.NewBoundedSync(limiters.NewRedisStore(rdb), limiters.BoundedNode(strconv.Itoa(i)+"-mem", len(nodes)))
		}
		for i, id := range ids {
			for k := range 1 + i%2 {
				if _, err := nodes[(i+k)%len(nodes)].Allow(ctx, id, r, now); err != nil {
					return err
				}
			}
		}
		for _, n := range nodes {
			if err := n.Sync(ctx, now); err != nil {
				return err
			}
		}
		return nil
	}
}

// boundedAtLimit loads every client as the bounded design's store holds a client at its
// limit, evenly over the window: its requests a window / limit apart, each an entry of its
// log at its own µs, pushed by the 8 replicas in turn under their push
// marks, through the settle script the replicas use.
func boundedAtLimit(r *limiters.Rule, bd limiters.Bounds) func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
	return func(ctx context.Context, rdb redis.UniversalClient, ids []string, now time.Time) error {
		st := limiters.NewRedisStore(rdb)
		t := now.UnixMicro()
		d := t / bd.Sub
		subs := bd.Subs - 2 // a window's
		batch := loadBatch / 10
		entries := make([]limiters.SettleEntry, 0, batch)
		for start := 0; start < len(ids); start += batch {
			for node := range limiters.DefaultNodes {
				entries = entries[:0]
				for _, id := range ids[start:min(start+batch, len(ids))] {
					e := limiters.SettleEntry{Client: id, Rule: r, Bounds: bd, At: t}
					var total int64
					for k := node; k < int(r.Limit); k += limiters.DefaultNodes {
						j := d - int64(subs-1) + int64(k)*int64(subs)/r.Limit
						e.Push = append(e.Push, limiters.SubCount{Index: j, Count: 1, Newest: j * bd.Sub})
						total++
					}
					e.Mark = limiters.PushMark{Node: strconv.Itoa(node) + "-ABCDEF", Inc: 1, Total: total}
					entries = append(entries, e)
				}
				if err := st.Settle(ctx, now, entries); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
