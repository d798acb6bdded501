package main

import "runtime/debug"

// commit is the source revision the binary was built from, as go build stamped it (with
// "+dirty" for uncommitted changes); empty where it stamped none (go test, go run). Every
// result file that names a commit gets it from here.
func commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
