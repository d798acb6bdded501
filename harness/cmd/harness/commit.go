package main

import (
	"regexp"
	"runtime/debug"
)

// stamped is a revision given at link time, for a binary built outside a git checkout
// (the HS2 kit: go build -ldflags "-X main.stamped=$(git rev-parse HEAD)").
var stamped string

// commit is the source revision the binary was built from; empty where nothing says (go
// test, go run). Every result file that names a commit gets it from here.
func commit() string {
	info, _ := debug.ReadBuildInfo()
	return commitOf(info, stamped)
}

// commitOr is commit, or fallback where nothing says.
func commitOr(fallback string) string {
	if c := commit(); c != "" {
		return c
	}
	return fallback
}

// pseudoRevision is the revision at the end of a module pseudo-version
// (v0.0.0-20260730120000-0123456789ab).
var pseudoRevision = regexp.MustCompile(`-(?:0\.)?\d{14}-([0-9a-f]{12})(?:\+incompatible)?$`)

// commitOf reads the revision in order of trust: what go build stamped from git (with
// "+dirty" for uncommitted changes), else the revision given at link time, else the
// module's version (a pseudo-version's revision, or a tagged version as it is), as
// go install module@version records it.
func commitOf(info *debug.BuildInfo, stamped string) string {
	if info != nil {
		var rev, dirty string
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				rev = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "+dirty"
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	if stamped != "" {
		return stamped[:min(len(stamped), 12)] + dirtyMark(stamped)
	}
	if info == nil {
		return ""
	}
	switch v := info.Main.Version; {
	case v == "" || v == "(devel)":
		return ""
	case pseudoRevision.MatchString(v):
		return pseudoRevision.FindStringSubmatch(v)[1]
	default:
		return v
	}
}

// dirtyMark keeps a "+dirty" suffix that a stamp carried past the 12 characters kept.
func dirtyMark(s string) string {
	if len(s) > 12 && len(s) >= len("+dirty") && s[len(s)-len("+dirty"):] == "+dirty" {
		return "+dirty"
	}
	return ""
}
