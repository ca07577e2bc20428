package main

import (
	"os"
	"testing"

	"github.com/entitlements-go/entitlements/internal/skipnote"
)

// asCLI in the environment makes the test binary run main (the CLI) with its arguments:
// tests that send the process a signal run it as a subprocess.
const asCLI = "ENTITLEMENTS_TEST_RUN_AS_CLI"

// TestMain prints one line per skip reason even without -v (see internal/skipnote).
func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		main()
	}
	skipnote.Main(m, "cmd/entitlements")
}
