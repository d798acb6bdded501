package traffic

import (
	"io"
	"net/http"
)

// maxStatusBody is how much of a body withStatus reads; judge sees at most this much.
const maxStatusBody = 64<<10 + 1

// withStatus reads every response's body and replaces its status with judge(status, body),
// so that a limiter that answers every decision 200 and says it in the body is recorded
// like one that says it in the status; with judge nil it returns base unchanged. The body
// is read here, inside the request's timeout, since the attacker reads none.
func withStatus(judge func(code int, body []byte) int, base http.RoundTripper) http.RoundTripper {
	if judge == nil {
		return base
	}
	return statusTransport{judge: judge, base: base}
}

type statusTransport struct {
	judge func(int, []byte) int
	base  http.RoundTripper
}

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.StatusCode = t.judge(resp.StatusCode, body)
	resp.Status = http.StatusText(resp.StatusCode)
	resp.Body = http.NoBody
	resp.ContentLength = 0
	return resp, nil
}
