package hunt

import (
	"os"
	"testing"

	"github.com/edgeproof/rlharness/internal/dockerenv"
)

// TestMain makes the test binary's Testcontainers setting, as the harness's main does (the
// live hunt tests start Docker fleets).
func TestMain(m *testing.M) { os.Exit(dockerenv.Run(m)) }
