package traffic

import (
	"bytes"
	"io"
	"net/http"
)

// withBody turns every request into a POST carrying body(index), the index read from the
// request's seq parameter; with body nil it returns base unchanged. Vegeta's targets
// carry one body per target, built in the targeter; doing it here keeps the targeters
// the same for every kind of run and builds a large body only as it is sent.
func withBody(body func(int) []byte, base http.RoundTripper) http.RoundTripper {
	if body == nil {
		return base
	}
	return bodyTransport{body: body, base: base}
}

type bodyTransport struct {
	body func(int) []byte
	base http.RoundTripper
}

func (t bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	i, ok := ParseSeq(r.URL.RawQuery)
	if !ok {
		return t.base.RoundTrip(r)
	}
	b := t.body(i)
	r = r.Clone(r.Context())
	r.Method = http.MethodPost
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Type", "application/octet-stream")
	return t.base.RoundTrip(r)
}
