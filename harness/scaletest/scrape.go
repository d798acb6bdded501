package scaletest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgeproof/rlharness/targets/worker"
)

// scrapeClient keeps no connections: a replica that is stopped between scrapes must fail
// fast, not hang on a dead keep-alive.
var scrapeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

// scrapeUtilisation reads one replica's utilisation gauge from its /metrics.
func scrapeUtilisation(ctx context.Context, baseURL string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/metrics: %s", baseURL, resp.Status)
	}
	return parseGauge(bufio.NewScanner(resp.Body), worker.UtilisationMetric)
}

// parseGauge finds an unlabelled sample of name in Prometheus text exposition.
func parseGauge(sc *bufio.Scanner, name string) (float64, error) {
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("metric %s not exposed", name)
}

// scrapeAll scrapes every URL at once within timeout and returns the mean utilisation of
// those that answered and how many did.
func scrapeAll(ctx context.Context, urls []string, timeout time.Duration) (mean float64, n int) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vals := make([]float64, len(urls))
	oks := make([]bool, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			v, err := scrapeUtilisation(ctx, u)
			vals[i], oks[i] = v, err == nil
		})
	}
	wg.Wait()
	sum := 0.0
	for i, ok := range oks {
		if ok {
			sum += vals[i]
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
