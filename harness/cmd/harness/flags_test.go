package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateFlags = flag.Bool("update-flags", false, "rewrite testdata/flags.golden from the command tree")

// TestFlagsGolden pins every command's flags (name, shorthand, type, default, usage) as the
// cobra tree declares them: scripts, Makefiles and the docs call these, so moving a flag's
// declaration must leave its name, type and default as they were.
// go test ./harness/cmd/harness -run TestFlagsGolden -update-flags rewrites the file.
func TestFlagsGolden(t *testing.T) {
	got := flagTable(newRootCmd())
	path := filepath.Join("testdata", "flags.golden")
	if *updateFlags {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-flags to write it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("flags differ from %s at line %d:\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}

// flagTable is one line per flag of every command in the tree, in the tree's order.
func flagTable(root *cobra.Command) string {
	var b strings.Builder
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" { // cobra's own
				return
			}
			fmt.Fprintf(&b, "%s\t--%s\t-%s\t%s\t%q\t%q\n", c.CommandPath(), f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Usage)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}
