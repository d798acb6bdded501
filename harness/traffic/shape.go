package traffic

import "net/http"

// withShape lets shape change every request before it is sent (its method, headers, query
// or body), the index read from the request's seq parameter; with shape nil it returns
// base unchanged. A target that names the client in a query parameter or a JSON body, or
// wants other headers, gets its requests this way while the targeters stay the same.
func withShape(shape func(index int, r *http.Request), base http.RoundTripper) http.RoundTripper {
	if shape == nil {
		return base
	}
	return shapeTransport{shape: shape, base: base}
}

type shapeTransport struct {
	shape func(int, *http.Request)
	base  http.RoundTripper
}

func (t shapeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	i, ok := ParseSeq(r.URL.RawQuery)
	if !ok {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	t.shape(i, r)
	return t.base.RoundTrip(r)
}
