package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	def := config{listen: ":8080", param: "client", limit: 600, window: time.Minute, reject: 429}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want config
		err  string // substring of the error; empty: none
	}{
		{name: "defaults", want: def},
		{name: "env beats default",
			env:  map[string]string{"FIXEDWINDOW_LIMIT": "10", "FIXEDWINDOW_WINDOW": "12s", "FIXEDWINDOW_REDIS": "r:6379", "FIXEDWINDOW_REJECT_STATUS": "503"},
			want: config{listen: ":8080", redis: "r:6379", param: "client", limit: 10, window: 12 * time.Second, reject: 503}},
		{name: "flag beats env", args: []string{"--limit", "5", "--param", "id"},
			env:  map[string]string{"FIXEDWINDOW_LIMIT": "10", "FIXEDWINDOW_PARAM": "who"},
			want: config{listen: ":8080", param: "id", limit: 5, window: time.Minute, reject: 429}},
		{name: "bad env value", env: map[string]string{"FIXEDWINDOW_LIMIT": "many"},
			err: `FIXEDWINDOW_LIMIT="many": parse error (it stands in for --limit)`},
		{name: "limit below one", args: []string{"--limit", "0"}, err: "--limit must be >= 1 and --window > 0 (got 0, 1m0s)"},
		{name: "unknown flag", args: []string{"--bogus"}, err: "flag provided but not defined: -bogus"},
		{name: "help", args: []string{"-h"}, err: flag.ErrHelp.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if tc.args != nil && tc.args[0] == "-h" && !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("error %v, want flag.ErrHelp", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("config %+v, want %+v", got, tc.want)
			}
		})
	}
}
