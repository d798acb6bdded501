package traffic

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A Status judge sees each response's status and body and its answer is what the outcome
// records: a replica that answers 200 with its decision in the body is judged by the body.
func TestRunStatusFromBody(t *testing.T) {
	rep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(DefaultClientHeader)
		switch {
		case strings.HasPrefix(id, "deny"):
			fmt.Fprint(w, `{"status":"OVER_LIMIT"}`)
		case strings.HasPrefix(id, "fail"):
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, `{"status":"UNDER_LIMIT"}`)
		}
	}))
	defer rep.Close()
	judge := func(code int, body []byte) int {
		switch {
		case code != http.StatusOK:
			return code
		case strings.Contains(string(body), "OVER_LIMIT"):
			return http.StatusTooManyRequests
		case strings.Contains(string(body), "UNDER_LIMIT"):
			return http.StatusOK
		}
		return http.StatusInternalServerError
	}
	s := testSchedule(30, 150*time.Millisecond, "ok-1", "deny-2", "fail-3")
	counts := map[uint16]int{}
	_, err := Run(context.Background(), s, []string{rep.URL, rep.URL}, Options{Workers: 4, Status: judge}, func(o Outcome) error {
		counts[o.Code]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts[200] != 10 || counts[429] != 10 || counts[503] != 10 || len(counts) != 3 {
		t.Errorf("statuses %v, want 10 each of 200, 429 and 503", counts)
	}
}
