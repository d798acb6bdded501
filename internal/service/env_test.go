package service

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestEnvFallback(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		listen  string
		timeout time.Duration
		err     string // substring of the error; empty: none
	}{
		{name: "defaults", listen: ":8080", timeout: time.Second},
		{name: "env beats default", env: map[string]string{"T_LISTEN": ":9", "T_STORE_TIMEOUT": "3s"}, listen: ":9", timeout: 3 * time.Second},
		{name: "flag beats env", args: []string{"--listen", ":7"}, env: map[string]string{"T_LISTEN": ":9"}, listen: ":7", timeout: time.Second},
		{name: "empty env is unset", env: map[string]string{"T_LISTEN": ""}, listen: ":8080", timeout: time.Second},
		{name: "other prefixes ignored", env: map[string]string{"U_LISTEN": ":9", "LISTEN": ":9"}, listen: ":8080", timeout: time.Second},
		{name: "bad env value", env: map[string]string{"T_STORE_TIMEOUT": "soon"}, err: `T_STORE_TIMEOUT="soon": parse error (it stands in for --store-timeout)`},
		{name: "a bad env value under a given flag is not read", args: []string{"--store-timeout", "2s"}, env: map[string]string{"T_STORE_TIMEOUT": "soon"}, listen: ":8080", timeout: 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			listen := fs.String("listen", ":8080", "")
			timeout := fs.Duration("store-timeout", time.Second, "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := EnvFallback(fs, "T_", func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if *listen != tc.listen || *timeout != tc.timeout {
				t.Errorf("listen %q, store-timeout %v; want %q, %v", *listen, *timeout, tc.listen, tc.timeout)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	for flagName, want := range map[string]string{"listen": "R_LISTEN", "node-index": "R_NODE_INDEX", "client-header": "R_CLIENT_HEADER"} {
		if got := EnvName("R_", flagName); got != want {
			t.Errorf("EnvName(R_, %s) = %s, want %s", flagName, got, want)
		}
	}
}
