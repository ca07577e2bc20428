package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/skipnote"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// asCLI in the environment makes the test binary run main (the CLI) with its arguments:
// tests that send the process a signal run it as a subprocess. With asCLIFakeTargets, plan
// and apply run as against the real systems (audited, not simulated) with every target
// served by an in-memory provider seeded from the example's state.
const (
	asCLI            = "ENTITLEMENTS_TEST_RUN_AS_CLI"
	asCLIFakeTargets = "fake-targets"
)

// TestMain prints one line per skip reason even without -v (see internal/skipnote).
func TestMain(m *testing.M) {
	switch os.Getenv(asCLI) {
	case "1":
		main()
	case asCLIFakeTargets:
		os.Exit(mainFakeTargets(os.Args[1:]))
	}
	skipnote.Main(m, "cmd/entitlements")
}

// mainFakeTargets is main for plan and apply with fake targets.
func mainFakeTargets(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fp, err := fake.LoadState("../../examples/state.json")
	if err != nil || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fake targets:", err, args)
		return exitUsage
	}
	ext := &cmdExt{providers: func(*config.OU) (providers.Provider, error) { return fp, nil }}
	return planOrApplyExt(ctx, args[0], args[1:], os.Stdout, os.Stderr, ext)
}
