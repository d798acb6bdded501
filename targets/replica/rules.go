package replica

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/edgeproof/rlharness/limiters"
)

// defaultRulesYAML is rules.default.yaml, built in so that an image FROM scratch needs no file.
//
//go:embed rules.default.yaml
var defaultRulesYAML []byte

// DefaultRulesName is the name the embedded rule file goes by in errors and logs.
const DefaultRulesName = "rules.default.yaml (embedded)"

// Match says which clients a named rule covers. Exactly one field is set.
type Match struct {
	ID     string // the client ID equals it
	Prefix string // the client ID starts with it
	Class  string // the X-Client-Class header equals it
}

func (m Match) matches(id, class string) bool {
	switch {
	case m.ID != "":
		return id == m.ID
	case m.Prefix != "":
		return strings.HasPrefix(id, m.Prefix)
	default:
		return m.Class != "" && class == m.Class
	}
}

// NamedRule is a rule for the clients its Match covers.
type NamedRule struct {
	Match Match
	Rule  limiters.Rule
}

// Rules is a parsed rule file: the named rules, tried in file order, and the default for
// every client that none matches. A Rules is never changed once parsed; a reload swaps in
// a new one.
type Rules struct {
	Source  string // the file it came from
	Default limiters.Rule
	Named   []NamedRule
	// policies are the rules' RateLimit-Policy field values, one header value per rule,
	// made once (policyHeader).
	policies map[*limiters.Rule][]string
}

// policyHeader returns the rule's RateLimit-Policy field as a header value. The field
// depends on the rule alone, so it is made once when the rules are parsed, and the value
// is shared by every response under these rules: nothing may modify it.
func (s *Rules) policyHeader(rule *limiters.Rule) []string {
	if v, ok := s.policies[rule]; ok {
		return v
	}
	return []string{policyField(rule)}
}

// index makes every rule's RateLimit-Policy value; the rules must not change afterwards.
func (s *Rules) index() {
	s.policies = map[*limiters.Rule][]string{&s.Default: {policyField(&s.Default)}}
	for i := range s.Named {
		r := &s.Named[i].Rule
		s.policies[r] = []string{policyField(r)}
	}
}

// For returns the rule for a client: the first named rule that matches, else the default.
// The pointer stays valid, and the same, for the life of the Rules.
func (s *Rules) For(id, class string) *limiters.Rule {
	for i := range s.Named {
		if s.Named[i].Match.matches(id, class) {
			return &s.Named[i].Rule
		}
	}
	return &s.Default
}

// DefaultRules returns the embedded rules.default.yaml: 600 requests per 60 s in a sliding
// window of 12 slices (HS3, HS7).
func DefaultRules() *Rules {
	r, err := ParseRules(DefaultRulesName, defaultRulesYAML)
	if err != nil {
		panic("replica: embedded rules.default.yaml is invalid: " + err.Error())
	}
	return r
}

// LoadRules reads and parses a rule file.
func LoadRules(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rule file: %w (check --rules / REPLICA_RULES)", err)
	}
	return ParseRules(path, data)
}

// ParseRules parses a rule file (format in docs/DESIGN.md). Every problem is reported as
// "name:line: what is wrong", one a line; name is the file's path as the user gave it.
// Keys the format does not know are errors, so a typo cannot silently fall back to a default.
func ParseRules(name string, data []byte) (*Rules, error) {
	p := &ruleParser{file: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.syntaxError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: the file is empty: it needs at least a default rule (default: {limit: 600, window: 60s, algorithm: sliding_window, slices: 12})", p.file)
	}
	rules := &Rules{Source: name}
	p.top(resolve(doc.Content[0]), rules)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	rules.index()
	return rules, nil
}

type ruleParser struct {
	file string
	errs []error
}

func (p *ruleParser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...)))
}

// yamlLine finds the line yaml.v3 puts in its syntax errors ("yaml: line 3: …").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *ruleParser) syntaxError(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: YAML syntax: %s", p.file, m[1], m[2])
	}
	return fmt.Errorf("%s:1: YAML syntax: %s", p.file, strings.TrimPrefix(msg, "yaml: "))
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// fields walks a mapping, reporting unknown and repeated keys; it returns each known key's
// key node and value node.
func (p *ruleParser) fields(n *yaml.Node, what string, known ...string) map[string][2]*yaml.Node {
	out := map[string][2]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping (got %s)", what, kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if !contains(known, k.Value) {
			p.errorf(k, "unknown key %q in %s (want one of %s)", k.Value, what, strings.Join(known, ", "))
			continue
		}
		if prev, dup := out[k.Value]; dup {
			p.errorf(k, "%s is given twice in %s (first on line %d)", k.Value, what, prev[0].Line)
			continue
		}
		out[k.Value] = [2]*yaml.Node{k, v}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var ruleKeys = []string{"limit", "window", "algorithm", "slices", "burst"}

func (p *ruleParser) top(n *yaml.Node, out *Rules) {
	f := p.fields(n, "the rule file", "default", "rules")
	if len(p.errs) > 0 && n.Kind != yaml.MappingNode {
		return
	}
	if d, ok := f["default"]; ok {
		if r, ok := p.rule(d[1], "default", "the default rule", p.fields(d[1], "the default rule", ruleKeys...)); ok {
			out.Default = r
		}
	} else {
		p.errorf(n, "default is missing: every client that no named rule matches needs a default rule")
	}
	rs, ok := f["rules"]
	if !ok {
		return
	}
	list := rs[1]
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return // "rules:" with nothing under it
	}
	if list.Kind != yaml.SequenceNode {
		p.errorf(list, "rules must be a list of rules (got %s)", kindName(list))
		return
	}
	names := map[string]int{}
	for i, item := range list.Content {
		item = resolve(item)
		what := fmt.Sprintf("rules[%d]", i)
		fields := p.fields(item, what, append([]string{"name", "match"}, ruleKeys...)...)
		if item.Kind != yaml.MappingNode {
			continue
		}
		name, ok := p.ruleName(item, fields, what)
		if ok {
			if line, dup := names[name]; dup {
				p.errorf(fields["name"][1], "rule name %q is used twice (first on line %d): names key the counters, so they must differ", name, line)
				ok = false
			}
			names[name] = fields["name"][1].Line
			what = fmt.Sprintf("rule %q", name)
		}
		m, mok := p.match(item, fields, what)
		r, rok := p.rule(item, name, what, fields)
		if ok && mok && rok {
			out.Named = append(out.Named, NamedRule{Match: m, Rule: r})
		}
	}
}

// ruleNamePattern keeps names safe as store keys, metric labels and RateLimit policy strings.
var ruleNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (p *ruleParser) ruleName(item *yaml.Node, f map[string][2]*yaml.Node, what string) (string, bool) {
	kv, ok := f["name"]
	if !ok {
		p.errorf(item, "%s has no name: give it one (letters, digits, '_', '.', '-')", what)
		return "", false
	}
	v := kv[1]
	if v.Kind != yaml.ScalarNode || !ruleNamePattern.MatchString(v.Value) {
		p.errorf(v, "name must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit (got %s)", kindName(v))
		return "", false
	}
	if v.Value == "default" {
		p.errorf(v, `name "default" is the default rule's: choose another name`)
		return "", false
	}
	return v.Value, true
}

func (p *ruleParser) match(item *yaml.Node, f map[string][2]*yaml.Node, what string) (Match, bool) {
	kv, ok := f["match"]
	if !ok {
		p.errorf(item, "%s has no match: give {id: …}, {prefix: …} or {class: …}", what)
		return Match{}, false
	}
	n := kv[1]
	mf := p.fields(n, what+" match", "id", "prefix", "class")
	if n.Kind != yaml.MappingNode {
		return Match{}, false
	}
	if len(mf) != 1 {
		if len(n.Content) > 0 && len(mf) > 1 {
			p.errorf(n, "%s match must have exactly one of id, prefix or class (got %d)", what, len(mf))
		} else if len(n.Content) == 0 {
			p.errorf(n, "%s match is empty: give one of id, prefix or class", what)
		}
		return Match{}, false
	}
	var m Match
	for key, kv := range mf {
		v := kv[1]
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" {
			p.errorf(v, "match %s must be a non-empty string (got %s)", key, kindName(v))
			return Match{}, false
		}
		switch key {
		case "id":
			m.ID = v.Value
		case "prefix":
			m.Prefix = v.Value
		case "class":
			m.Class = v.Value
		}
	}
	return m, true
}

// rule reads a rule's counting fields and checks them with limiters.Rule.Validate. A
// parameter of another algorithm (burst on a window, slices on a bucket) is accepted and
// dropped, so one file can switch algorithms by changing one line.
func (p *ruleParser) rule(n *yaml.Node, name, what string, f map[string][2]*yaml.Node) (limiters.Rule, bool) {
	if n.Kind != yaml.MappingNode {
		return limiters.Rule{}, false
	}
	before := len(p.errs)
	r := limiters.Rule{Name: name}
	if kv, ok := f["algorithm"]; ok {
		v := kv[1]
		if v.Kind != yaml.ScalarNode {
			p.errorf(v, "algorithm must be fixed_window, sliding_window or token_bucket (got %s)", kindName(v))
		} else {
			r.Algorithm = limiters.Algorithm(v.Value)
		}
	}
	if kv, ok := f["limit"]; ok {
		r.Limit = p.integer(kv[1], "limit", "a whole number of requests, e.g. 600")
	}
	if kv, ok := f["window"]; ok {
		v := kv[1]
		d, err := time.ParseDuration(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			p.errorf(v, "window must be a duration such as 60s or 1m (got %s)", kindName(v))
		} else {
			r.Window = d
		}
	}
	if kv, ok := f["slices"]; ok {
		r.Slices = int(p.integer(kv[1], "slices", "a whole number, e.g. 12"))
	}
	if kv, ok := f["burst"]; ok {
		r.Burst = p.integer(kv[1], "burst", "a whole number of requests, e.g. 60")
	}
	if len(p.errs) > before {
		return r, false
	}
	if err := r.Validate(); err != nil {
		// Point at the field the message is about ("limit must be > 0 …" → the limit line).
		field, _, _ := strings.Cut(err.Error(), " ")
		if kv, ok := f[field]; ok {
			p.errorf(kv[1], "%v", err)
		} else {
			p.errorf(n, "%s: %v", what, err)
		}
		return r, false
	}
	if r.Algorithm != limiters.SlidingWindow {
		r.Slices = 0
	}
	if r.Algorithm != limiters.TokenBucket {
		r.Burst = 0
	}
	return r, true
}

func (p *ruleParser) integer(v *yaml.Node, key, want string) int64 {
	if v.Kind == yaml.ScalarNode {
		if x, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			return x
		}
	}
	p.errorf(v, "%s must be %s (got %s)", key, want, kindName(v))
	return 0
}
