package target

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// JSONRule reads a decision from a field of the response body, for a limiter that answers
// every decision with the same status (gubernator's GetRateLimits answers 200 with
// "status": "UNDER_LIMIT" or "OVER_LIMIT" in its body). It applies to the responses whose
// status is in Responses.Accepted; any other status keeps its listed meaning.
type JSONRule struct {
	// Field is the path to the decision, one key or list index a step, as
	// responses.0.status.
	Field []string
	// Accepted and Rejected are the field's values that mean each.
	Accepted, Rejected []string
	// ErrorField, when set, is the path to a field whose non-empty value is an error, even
	// when Field says accepted or rejected.
	ErrorField []string
}

// MaxJSONBody is how much of a body a JSON rule reads; a longer body is an error.
const MaxJSONBody = 64 << 10

// Decide says what a response with status code and body means for this target: with a
// JSON rule and an accepted status, what the body's field says; otherwise what the status
// says (Of). A body that is not JSON, lacks the field, carries a value the rule does not
// list, or sets the error field is an error.
func (r Responses) Decide(code int, body []byte) Verdict {
	v := r.Of(code)
	if r.JSON == nil || v != Accepted {
		return v
	}
	return r.JSON.decide(body)
}

func (j *JSONRule) decide(body []byte) Verdict {
	var doc any
	if len(body) > MaxJSONBody || json.Unmarshal(body, &doc) != nil {
		return Error
	}
	if j.ErrorField != nil {
		if e, ok := lookup(doc, j.ErrorField); ok && !empty(e) {
			return Error
		}
	}
	f, ok := lookup(doc, j.Field)
	if !ok {
		return Error
	}
	s, ok := f.(string)
	if !ok {
		return Error
	}
	switch {
	case slices.Contains(j.Accepted, s):
		return Accepted
	case slices.Contains(j.Rejected, s):
		return Rejected
	}
	return Error
}

// lookup follows path through decoded JSON: a key in an object, an index in a list.
func lookup(doc any, path []string) (any, bool) {
	for _, step := range path {
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[step]
			if !ok {
				return nil, false
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			doc = v[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// empty is a JSON value that says nothing: null, "", false, 0, [] or {}.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// jsonRule parses responses.json.
func (p *parser) jsonRule(n *yaml.Node) *JSONRule {
	m := p.fields(n, "responses.json", false, "field", "accepted", "rejected", "error_field")
	if m == nil {
		return nil
	}
	j := &JSONRule{}
	j.Field = p.jsonPath(m, "field")
	if m["field"] == nil {
		p.errf(n, "responses.json.field", "missing: the path to the decision in the body, as responses.0.status")
	}
	if m["error_field"] != nil {
		j.ErrorField = p.jsonPath(m, "error_field")
	}
	seen := map[string]string{}
	for _, k := range []string{"accepted", "rejected"} {
		field := "responses.json." + k
		v := m[k]
		if v == nil {
			p.errf(n, field, "missing: list the field's values that mean %s, as [UNDER_LIMIT]", k)
			continue
		}
		var vals []string
		if v.Kind == yaml.ScalarNode {
			vals = []string{v.Value}
		} else {
			vals = p.strList(v, field)
		}
		for _, s := range vals {
			if s == "" {
				p.errf(v, field, "must not list an empty value")
			}
			if other, dup := seen[s]; dup {
				p.errf(v, field, "%q is already listed in responses.json.%s", s, other)
			}
			seen[s] = k
		}
		if k == "accepted" {
			j.Accepted = vals
		} else {
			j.Rejected = vals
		}
	}
	return j
}

// jsonPath is m[key] split at its dots, each step a key or a list index.
func (p *parser) jsonPath(m map[string]*yaml.Node, key string) []string {
	field := "responses.json." + key
	if m[key] == nil {
		return nil
	}
	v, ok := p.scalar(m[key], field)
	if !ok {
		return nil
	}
	path := strings.Split(v, ".")
	if slices.Contains(path, "") {
		p.errf(m[key], field, "must be keys and list indexes joined by dots, as responses.0.status (got %q)", v)
		return nil
	}
	return path
}
