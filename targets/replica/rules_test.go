package replica

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/limiters"
)

// The shipped default is the documents' rule: 600 per 60 s in 12 slices (HS3, HS7).
func TestDefaultRulesAreTheDocumentsRule(t *testing.T) {
	r := DefaultRules()
	want := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow,
		Limit: limiters.DefaultLimit, Window: limiters.DefaultWindow, Slices: limiters.DefaultSlices}
	if r.Default != want || len(r.Named) != 0 {
		t.Fatalf("default rules %+v, named %d; want %+v and none", r.Default, len(r.Named), want)
	}
	onDisk, err := os.ReadFile("rules.default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != string(defaultRulesYAML) {
		t.Fatal("embedded rules differ from rules.default.yaml")
	}
}

// The example of docs/DESIGN.md parses, parameters of other algorithms included.
func TestParseRulesDesignExample(t *testing.T) {
	src := `default:
  limit: 600          # HS3
  window: 60s
  algorithm: sliding_window   # fixed_window | sliding_window | token_bucket
  slices: 12          # HS7, sliding_window only
  burst: 60           # HS8, token_bucket only (capacity)
rules:
  - name: premium
    match: {prefix: "premium-"}     # or {id: "exact"} or {class: "gold"} (class header X-Client-Class)
    limit: 1200
    window: 60s
    algorithm: token_bucket
    burst: 120
  - name: one
    match: {id: "client-7"}
    limit: 5
    window: 1s
    algorithm: fixed_window
  - name: gold
    match: {class: gold}
    limit: 100
    window: 10s
    algorithm: sliding_window
    slices: 10
`
	r, err := ParseRules("rules.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	wantDefault := limiters.Rule{Name: "default", Algorithm: limiters.SlidingWindow, Limit: 600, Window: time.Minute, Slices: 12}
	if r.Default != wantDefault {
		t.Errorf("default %+v, want %+v", r.Default, wantDefault)
	}
	want := []NamedRule{
		{Match{Prefix: "premium-"}, limiters.Rule{Name: "premium", Algorithm: limiters.TokenBucket, Limit: 1200, Window: time.Minute, Burst: 120}},
		{Match{ID: "client-7"}, limiters.Rule{Name: "one", Algorithm: limiters.FixedWindow, Limit: 5, Window: time.Second}},
		{Match{Class: "gold"}, limiters.Rule{Name: "gold", Algorithm: limiters.SlidingWindow, Limit: 100, Window: 10 * time.Second, Slices: 10}},
	}
	if len(r.Named) != len(want) {
		t.Fatalf("named rules %+v, want %+v", r.Named, want)
	}
	for i := range want {
		if r.Named[i] != want[i] {
			t.Errorf("rule %d: %+v, want %+v", i, r.Named[i], want[i])
		}
	}
	// The first match in file order wins; the default takes the rest.
	for _, tt := range []struct{ id, class, rule string }{
		{"premium-1", "", "premium"},
		{"premium-1", "gold", "premium"},
		{"client-7", "gold", "one"},
		{"client-8", "gold", "gold"},
		{"client-8", "silver", "default"},
		{"client-77", "", "default"},
	} {
		if got := r.For(tt.id, tt.class).Name; got != tt.rule {
			t.Errorf("For(%q, %q) = %s, want %s", tt.id, tt.class, got, tt.rule)
		}
	}
}

func TestParseRulesErrorsNameFileAndLine(t *testing.T) {
	const okDefault = "default: {limit: 10, window: 1s, algorithm: fixed_window}\n"
	tests := []struct {
		name, src string
		want      []string // every line of the error
	}{
		{"empty", "", []string{"r.yaml:1: the file is empty: it needs at least a default rule (default: {limit: 600, window: 60s, algorithm: sliding_window, slices: 12})"}},
		{"syntax", "default:\n  limit: 5\n limit: 6\n" /* yaml.v3 names the mapping's line */, []string{"r.yaml:2: YAML syntax: did not find expected key"}},
		{"not a mapping", "- 1\n", []string{"r.yaml:1: the rule file must be a mapping (got a list)"}},
		{"no default", "rules: []\n", []string{"r.yaml:1: default is missing: every client that no named rule matches needs a default rule"}},
		{"unknown top key", okDefault + "rulez: []\n", []string{`r.yaml:2: unknown key "rulez" in the rule file (want one of default, rules)`}},
		{"unknown rule key", "default:\n  limit: 10\n  windows: 1s\n  algorithm: fixed_window\n",
			[]string{`r.yaml:3: unknown key "windows" in the default rule (want one of limit, window, algorithm, slices, burst)`,
				"r.yaml:2: the default rule: window must be > 0 (got 0s)"}},
		{"negative limit", "default:\n  algorithm: fixed_window\n  window: 1s\n  limit: -5\n", []string{"r.yaml:4: limit must be > 0 (got -5)"}},
		{"missing algorithm", "default:\n  window: 1s\n  limit: 5\n",
			[]string{"r.yaml:2: the default rule: algorithm is missing (want fixed_window, sliding_window or token_bucket)"}},
		{"unknown algorithm", "default:\n  window: 1s\n  limit: 5\n  algorithm: leaky\n",
			[]string{`r.yaml:4: algorithm "leaky" is unknown (want fixed_window, sliding_window or token_bucket)`}},
		{"bad window", "default:\n  window: 60\n  limit: 5\n  algorithm: fixed_window\n", []string{`r.yaml:2: window must be a duration such as 60s or 1m (got "60")`}},
		{"uneven slices", "default:\n  window: 1s\n  limit: 5\n  algorithm: sliding_window\n  slices: 7\n", []string{"r.yaml:2: window 1s does not divide into 7 equal slices"}},
		{"no slices", "default:\n  window: 1s\n  limit: 5\n  algorithm: sliding_window\n", []string{"r.yaml:2: the default rule: slices must be >= 1 for a sliding window (got 0)"}},
		{"limit not a number", "default:\n  window: 1s\n  limit: many\n  algorithm: fixed_window\n", []string{`r.yaml:3: limit must be a whole number of requests, e.g. 600 (got "many")`}},
		{"repeated key", "default:\n  window: 1s\n  limit: 5\n  limit: 6\n  algorithm: fixed_window\n", []string{"r.yaml:4: limit is given twice in the default rule (first on line 3)"}},
		{"rule without name", okDefault + "rules:\n  - match: {id: a}\n    limit: 1\n    window: 1s\n    algorithm: fixed_window\n",
			[]string{"r.yaml:3: rules[0] has no name: give it one (letters, digits, '_', '.', '-')"}},
		{"bad name", okDefault + "rules:\n  - name: \"a b\"\n    match: {id: a}\n    limit: 1\n    window: 1s\n    algorithm: fixed_window\n",
			[]string{`r.yaml:3: name must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit (got "a b")`}},
		{"duplicate name", okDefault + "rules:\n  - {name: a, match: {id: a}, limit: 1, window: 1s, algorithm: fixed_window}\n  - {name: a, match: {id: b}, limit: 1, window: 1s, algorithm: fixed_window}\n",
			[]string{`r.yaml:4: rule name "a" is used twice (first on line 3): names key the counters, so they must differ`}},
		{"two matchers", okDefault + "rules:\n  - name: a\n    match: {id: a, prefix: b}\n    limit: 1\n    window: 1s\n    algorithm: fixed_window\n",
			[]string{`r.yaml:4: rule "a" match must have exactly one of id, prefix or class (got 2)`}},
		{"unknown matcher", okDefault + "rules:\n  - name: a\n    match: {ip: 1.2.3.4}\n    limit: 1\n    window: 1s\n    algorithm: fixed_window\n",
			[]string{`r.yaml:4: unknown key "ip" in rule "a" match (want one of id, prefix, class)`}},
		{"bad rule and bad default", "default:\n  limit: 0\n  window: 1s\n  algorithm: fixed_window\nrules:\n  - name: a\n    match: {id: a}\n    limit: 1\n    window: 1s\n    algorithm: token_bucket\n",
			[]string{"r.yaml:2: limit must be > 0 (got 0)", `r.yaml:6: rule "a": burst must be >= 1 for a token bucket (got 0)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules("r.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestLoadRulesMissingFile(t *testing.T) {
	_, err := LoadRules(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "REPLICA_RULES") {
		t.Fatalf("error %v, want one that names --rules / REPLICA_RULES", err)
	}
}

// The header keys are the canonical forms of the draft's field names, and every rule's
// policy value is made once, as policyField makes it.
func TestPolicyHeaderIsMadeOncePerRule(t *testing.T) {
	if http.CanonicalHeaderKey("RateLimit-Policy") != headerPolicy || http.CanonicalHeaderKey("RateLimit") != headerLimit {
		t.Fatalf("header keys %q, %q are not canonical", headerPolicy, headerLimit)
	}
	rules := mustRules(t, "default: {limit: 600, window: 60s, algorithm: sliding_window, slices: 12}\n"+
		"rules:\n  - {name: gold, match: {class: gold}, limit: 6000, window: 90s, algorithm: token_bucket, burst: 100}\n")
	for _, tt := range []struct {
		class, want string
	}{{"", `"default";q=600;w=60`}, {"gold", `"gold";q=6000;w=90`}} {
		rule := rules.For("c", tt.class)
		got := rules.policyHeader(rule)
		if len(got) != 1 || got[0] != tt.want || got[0] != policyField(rule) {
			t.Errorf("class %q: %q, want [%q]", tt.class, got, tt.want)
		}
		if again := rules.policyHeader(rule); &again[0] != &got[0] {
			t.Errorf("class %q: the value was made again", tt.class)
		}
	}
	other := limiters.Rule{Name: "x", Limit: 5, Window: time.Second}
	if got := rules.policyHeader(&other); len(got) != 1 || got[0] != `"x";q=5;w=1` {
		t.Errorf("a rule from elsewhere: %q", got)
	}
}
