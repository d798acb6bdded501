package target

import (
	"strings"
	"testing"
)

const gubernatorLike = `name: gubernator
start: {url: "http://127.0.0.1:1050"}
request:
  path: /v1/GetRateLimits
  client: {body: '{"requests":[{"name":"rl","unique_key":"{{client}}","hits":1,"limit":600,"duration":60000}]}'}
responses:
  accepted: [200]
  rejected: [429]
  error: [500, 503]
  json:
    field: responses.0.status
    accepted: UNDER_LIMIT
    rejected: [OVER_LIMIT]
    error_field: responses.0.error
clients: [{limit: 600, window: 60s}]
`

// TestJSONRuleDecides: the JSON rule is parsed from the file and judges a 200's body by its
// field; other statuses keep their listed meaning.
func TestJSONRuleDecides(t *testing.T) {
	tg, err := Parse("g.yaml", []byte(gubernatorLike))
	if err != nil {
		t.Fatal(err)
	}
	j := tg.Responses.JSON
	if j == nil || strings.Join(j.Field, "/") != "responses/0/status" || strings.Join(j.ErrorField, "/") != "responses/0/error" ||
		len(j.Accepted) != 1 || j.Accepted[0] != "UNDER_LIMIT" || len(j.Rejected) != 1 || j.Rejected[0] != "OVER_LIMIT" {
		t.Fatalf("rule: %+v", j)
	}
	cases := []struct {
		name string
		code int
		body string
		want Verdict
	}{
		{"under limit", 200, `{"responses":[{"status":"UNDER_LIMIT","limit":"600","remaining":"599","error":""}]}`, Accepted},
		{"over limit", 200, `{"responses":[{"status":"OVER_LIMIT","limit":"600","remaining":"0","error":""}]}`, Rejected},
		{"error set", 200, `{"responses":[{"status":"UNDER_LIMIT","error":"while fetching rate limit from peer: timeout"}]}`, Error},
		{"error null", 200, `{"responses":[{"status":"OVER_LIMIT","error":null}]}`, Rejected},
		{"no error field", 200, `{"responses":[{"status":"UNDER_LIMIT"}]}`, Accepted},
		{"unknown value", 200, `{"responses":[{"status":"MAYBE"}]}`, Error},
		{"field not a string", 200, `{"responses":[{"status":0}]}`, Error},
		{"empty list", 200, `{"responses":[]}`, Error},
		{"index on an object", 200, `{"responses":{"status":"UNDER_LIMIT"}}`, Error},
		{"not json", 200, `UNDER_LIMIT`, Error},
		{"empty body", 200, ``, Error},
		{"too long", 200, `{"responses":[{"status":"UNDER_LIMIT","pad":"` + strings.Repeat("x", MaxJSONBody) + `"}]}`, Error},
		{"429 by status", 429, `{"responses":[{"status":"UNDER_LIMIT"}]}`, Rejected},
		{"503 by status", 503, `{"code":14,"message":"unavailable"}`, Error},
		{"unlisted status", 404, ``, Error},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tg.Responses.Decide(c.code, []byte(c.body)); got != c.want {
				t.Errorf("Decide(%d, %.60q) = %v, want %v", c.code, c.body, got, c.want)
			}
		})
	}
	// Without a JSON rule the body is not read.
	plain := Responses{Accepted: []int{200}, Rejected: []int{429}}
	if got := plain.Decide(200, []byte("OVER_LIMIT")); got != Accepted {
		t.Errorf("without a rule: %v, want accepted", got)
	}
}

// TestJSONRuleErrors: a mistake in responses.json names file:line and the field, and a JSON
// rule makes responses.rejected optional.
func TestJSONRuleErrors(t *testing.T) {
	head := "name: x\nstart: {url: \"http://127.0.0.1:1\"}\nrequest: {client: {header: A}}\n"
	tail := "clients: [{limit: 5, window: 60s}]\n"
	cases := []struct{ name, responses, want string }{
		{"ok without rejected statuses", "responses: {accepted: [200], json: {field: a.b, accepted: [Y], rejected: [N]}}", ""},
		{"not a mapping", "responses: {accepted: [200], json: a.b}", "t.yaml:4: responses.json: must be a mapping"},
		{"no field", "responses: {accepted: [200], json: {accepted: [Y], rejected: [N]}}", "t.yaml:4: responses.json.field: missing"},
		{"empty step", "responses: {accepted: [200], json: {field: a..b, accepted: [Y], rejected: [N]}}", "t.yaml:4: responses.json.field: must be keys and list indexes joined by dots"},
		{"field a list", "responses: {accepted: [200], json: {field: [a], accepted: [Y], rejected: [N]}}", "t.yaml:4: responses.json.field: must be a single value"},
		{"no accepted values", "responses: {accepted: [200], json: {field: a, rejected: [N]}}", "t.yaml:4: responses.json.accepted: missing"},
		{"no rejected values", "responses: {accepted: [200], json: {field: a, accepted: [Y]}}", "t.yaml:4: responses.json.rejected: missing"},
		{"value in both", "responses: {accepted: [200], json: {field: a, accepted: [Y], rejected: [N, Y]}}", "t.yaml:4: responses.json.rejected: \"Y\" is already listed in responses.json.accepted"},
		{"empty value", "responses: {accepted: [200], json: {field: a, accepted: [\"\"], rejected: [N]}}", "t.yaml:4: responses.json.accepted: must not list an empty value"},
		{"bad error field", "responses: {accepted: [200], json: {field: a, accepted: [Y], rejected: [N], error_field: .e}}", "t.yaml:4: responses.json.error_field: must be keys"},
		{"unknown key", "responses: {accepted: [200], json: {field: a, accepted: [Y], rejected: [N], allowed: [Y]}}", "t.yaml:4: responses.json.allowed: unknown field"},
		{"no rejected at all", "responses: {accepted: [200]}", "t.yaml:4: responses.rejected: missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(head+c.responses+"\n"+tail))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want == "":
			case err == nil:
				t.Fatalf("no error, want %q", c.want)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}
