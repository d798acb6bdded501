package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestCommitOf(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	mod := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, tt := range []struct {
		name    string
		info    *debug.BuildInfo
		stamped string
		want    string
	}{
		{"git checkout", vcs("52b94b7a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f", "false"), "", "52b94b7a1c2d"},
		{"git checkout with changes", vcs("52b94b7a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f", "true"), "", "52b94b7a1c2d+dirty"},
		{"git beats the stamp", vcs("52b94b7a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f", "false"), "ffffffffffffffff", "52b94b7a1c2d"},
		{"built outside git, stamped at link time", mod("(devel)"), "0123456789abcdef0123", "0123456789ab"},
		{"stamped dirty", mod("(devel)"), "0123456789abcdef0123+dirty", "0123456789ab+dirty"},
		{"stamped short", mod("(devel)"), "v1.2", "v1.2"},
		{"go install at a pseudo-version", mod("v0.0.0-20260730120000-0123456789ab"), "", "0123456789ab"},
		{"go install after a tag", mod("v1.4.1-0.20260730120000-0123456789ab"), "", "0123456789ab"},
		{"go install at a tag", mod("v1.4.0"), "", "v1.4.0"},
		{"nothing says", mod("(devel)"), "", ""},
		{"no build info", nil, "", ""},
	} {
		if got := commitOf(tt.info, tt.stamped); got != tt.want {
			t.Errorf("%s: commit %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A binary built outside git (-buildvcs=false, as from a tarball) and stamped with
// -ldflags -X names its commit in --version, which the kit's runs record.
func TestStampedBinaryNamesItsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "harness")
	build := exec.Command(gobin, "build", "-buildvcs=false", "-ldflags", "-X main.stamped=0123456789abcdef", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0123456789ab") {
		t.Errorf("harness --version: %q (%v), want the stamped commit", out, err)
	}
}
