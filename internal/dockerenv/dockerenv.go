// Package dockerenv holds the one process setting the Docker fleet needs: testcontainers-go
// (v0.45) takes its reaper setting from the environment or ~/.testcontainers.properties only,
// never as a value, and this machine has no registry to pull the reaper's image from; the
// fleet removes its containers by label instead. A program's main, or a test binary's
// TestMain, calls Default before anything starts a container; libraries never do.
package dockerenv

import "os"

// RyukDisabled is the environment variable that turns Testcontainers' reaper off.
const RyukDisabled = "TESTCONTAINERS_RYUK_DISABLED"

// Default turns the reaper off unless the environment already says what to do.
func Default() {
	if _, ok := os.LookupEnv(RyukDisabled); !ok {
		_ = os.Setenv(RyukDisabled, "true")
	}
}

// Run is a test binary's TestMain body for a package that starts Docker fleets:
// func TestMain(m *testing.M) { os.Exit(dockerenv.Run(m)) }.
func Run(m interface{ Run() int }) int {
	Default()
	return m.Run()
}
