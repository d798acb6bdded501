package limiters

import (
	"context"
	"sync"
	"time"
)

// Local is a single-process limiter: each client's counters live in this process only.
// It is the split-quota node's limiter and the memory store's engine.
type Local struct {
	mu      sync.Mutex
	clients map[stateKey]*state
}

type stateKey struct {
	client string
	rule   string
}

// NewLocal returns an empty single-process limiter.
func NewLocal() *Local { return &Local{clients: make(map[stateKey]*state)} }

// Allow decides one request. It never fails.
func (l *Local) Allow(_ context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	return l.Take(client, rule, now), nil
}

// Take decides one request without a context: the local path cannot fail or wait.
func (l *Local) Take(client string, rule *Rule, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateFor(client, rule, now.UnixNano()).take(now)
}

func (l *Local) stateFor(client string, rule *Rule, nowNs int64) *state {
	k := stateKey{client, rule.Name}
	s := l.clients[k]
	if s == nil || (s.rule != rule && *s.rule != *rule) {
		// A new client, or its rule changed on reload: start afresh.
		s = newState(rule, nowNs)
		l.clients[k] = s
	}
	return s
}

// Prune forgets clients that made no request for a whole window, so memory stays bounded
// by the clients active in the last window. It returns how many remain.
func (l *Local) Prune(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	nowNs := now.UnixNano()
	for k, s := range l.clients {
		if s.idle(nowNs) {
			delete(l.clients, k)
		}
	}
	return len(l.clients)
}

// Split is the split-quota mode: each of n nodes enforces limit/n alone, with no store.
type Split struct {
	nodes int
	local *Local
	mu    sync.Mutex
	rules map[*Rule]*Rule // a rule's per-node share
}

// NewSplit returns a node of a split-quota fleet of n nodes.
func NewSplit(n int) *Split {
	return &Split{nodes: n, local: NewLocal(), rules: make(map[*Rule]*Rule)}
}

// Allow decides one request against this node's share of the rule. It never fails.
func (s *Split) Allow(ctx context.Context, client string, rule *Rule, now time.Time) (Decision, error) {
	return s.local.Allow(ctx, client, s.share(rule), now)
}

// share caches each rule's per-node share so the decision path does not allocate. Rules
// are values that do not change once loaded, so the cache is keyed by pointer; a reload
// brings new rules, and old entries go when the cache grows past a few.
func (s *Split) share(rule *Rule) *Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.rules[rule]
	if sh == nil {
		if len(s.rules) >= 1024 {
			clear(s.rules)
		}
		r := rule.Share(s.nodes)
		sh = &r
		s.rules[rule] = sh
	}
	return sh
}

// Prune forgets idle clients (see Local.Prune).
func (s *Split) Prune(now time.Time) int { return s.local.Prune(now) }
