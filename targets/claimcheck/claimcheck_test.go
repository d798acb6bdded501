package claimcheck

import (
	"io"
	"strings"
	"testing"
	"time"

	cc "github.com/edgeproof/rlharness/claimcheck"
)

// The fleet configures a claim-check process by flags and CLAIMCHECK_* variables; a flag
// wins over its variable, and a bad value names the flag and what it takes.
func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    Config
		role    string
		wantErr string
	}{
		{name: "defaults", args: []string{"--redis", "127.0.0.1:6379"},
			want: Config{Listen: DefaultListen, Redis: "127.0.0.1:6379", NodeCount: 1, Producers: 1, Placement: cc.Claim,
				Deletion: cc.Immediate, TTL: DefaultTTL, Visibility: DefaultVisibility}, role: "producer"},
		{name: "the fleet's consumer", args: []string{"--listen", ":8080", "--node-index", "2", "--node-count", "3", "--producers", "1", "--redis", "redis:6379"},
			env: map[string]string{"CLAIMCHECK_PLACEMENT": "attach", "CLAIMCHECK_TTL": "5m0s", "CLAIMCHECK_VISIBILITY": "500ms"},
			want: Config{Listen: ":8080", Redis: "redis:6379", NodeIndex: 2, NodeCount: 3, Producers: 1, Placement: cc.Attach,
				Deletion: cc.Immediate, TTL: 5 * time.Minute, Visibility: 500 * time.Millisecond}, role: "consumer"},
		{name: "a flag wins over its variable", args: []string{"--deletion", "ttl"},
			env: map[string]string{"CLAIMCHECK_REDIS": "10.0.0.1:6379", "CLAIMCHECK_DELETION": "immediate"},
			want: Config{Listen: DefaultListen, Redis: "10.0.0.1:6379", NodeCount: 1, Producers: 1, Placement: cc.Claim,
				Deletion: cc.TTL, TTL: DefaultTTL, Visibility: DefaultVisibility}, role: "producer"},
		{name: "no redis", args: nil, wantErr: "--redis is required"},
		{name: "bad placement", args: []string{"--redis", "r:1", "--placement", "inline"}, wantErr: "--placement: placement \"inline\": use attach or claim"},
		{name: "negative index", args: []string{"--redis", "r:1", "--node-index", "-1"}, wantErr: "--node-index must be a whole number >= 0"},
		{name: "zero ttl", args: []string{"--redis", "r:1", "--ttl", "0s"}, wantErr: "--ttl must be a duration > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseFlags("claimcheck", tc.args, env(tc.env), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v; want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c != tc.want || c.Role() != tc.role {
				t.Errorf("got %+v (%s); want %+v (%s)", c, c.Role(), tc.want, tc.role)
			}
		})
	}
}
