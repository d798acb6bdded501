package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeClient checks health without keeping connections: a kept connection
// to a member that is later paused would make the next probe hang instead of
// failing fast.
var probeClient = &http.Client{
	Timeout:   probeTimeout,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// Healthz asks a replica's /healthz once; nil means 200.
func Healthz(ctx context.Context, baseURL string) error { return HealthAt(ctx, baseURL, "/healthz") }

// Ping sends Redis one PING with a short deadline; nil means PONG.
func Ping(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Dial here rather than in go-redis: its pool retries a refused dial and
	// logs every failure, and a probe of a stopped Redis fails by design.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	var used atomic.Bool
	defer func() {
		if !used.Swap(true) {
			_ = conn.Close()
		}
	}()
	c := redis.NewClient(&redis.Options{
		Addr: addr,
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			if used.Swap(true) {
				return nil, errors.New("probe connection already used")
			}
			return conn, nil
		},
		ReadTimeout:     timeout,
		WriteTimeout:    timeout,
		MaxRetries:      -1, // one try: a probe reports what it saw
		PoolSize:        1,
		DisableIdentity: true,
		Protocol:        2,
	})
	defer c.Close()
	return c.Ping(ctx).Err()
}

// waitUntil calls probe until it succeeds, ctx ends or readyTimeout passes;
// the error names what was awaited and the last probe error. Every
// deadCheckEvery failed probes it asks dead (if not nil) whether the member
// has exited, so a target that crashes at start fails at once, not after
// readyTimeout.
func waitUntil(ctx context.Context, what string, probe func(context.Context) error, dead func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	var last error
	for n := 0; ; n++ {
		if last = probe(ctx); last == nil {
			return nil
		}
		if dead != nil && n%deadCheckEvery == 0 {
			if err := dead(ctx); err != nil {
				return fmt.Errorf("%s not ready: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last probe: %v)", what, context.Cause(ctx), last)
		case <-t.C:
		}
	}
}

// deadCheckEvery spaces the checks for an exited member (a Docker API call).
const deadCheckEvery = 10

func waitHealthy(ctx context.Context, member, url string, dead func(context.Context) error) error {
	return waitUntil(ctx, member+" at "+url, func(ctx context.Context) error { return Healthz(ctx, url) }, dead)
}

func waitRedis(ctx context.Context, addr string, dead func(context.Context) error) error {
	return waitUntil(ctx, "redis at "+addr, func(ctx context.Context) error { return Ping(ctx, addr, probeTimeout) }, dead)
}

// freePorts reserves n distinct free TCP ports on 127.0.0.1. The ports are
// released before they are used, so another process could take one in
// between; fixed ports are what keep addresses stable across restarts.
func freePorts(n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

var errTerminated = errors.New("fleet already terminated")
