package model

import (
	"os"
	"strings"
	"testing"
)

// assertGolden fails with the first line that differs between got and the file at path.
func assertGolden(t *testing.T, path, got string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := string(b)
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("%s line %d:\n got  %q\n want %q", path, i+1, gl, wl)
		}
	}
}
