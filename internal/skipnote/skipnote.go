// Package skipnote makes skipped tests visible. `go test` prints a skipped test's reason only
// with -v, so on a fresh clone (no conformance corpus, no slapd) a package whose corpus tests
// all skipped reports a bare "ok". Tests call Skip instead of t.Skip; the package's TestMain
// calls Main, which prints one line per reason after the run, even without -v:
//
//	calc: SKIP 6 test(s): conformance corpus not found at ...; set ENTITLEMENTS_CONFORMANCE_DIR (TestConformance, ...)
//
// The line goes to the terminal (/dev/tty) when there is one, because `go test ./...` hides
// the output of passing packages; otherwise (CI) to stderr, which `go test` shows with -v,
// for a failing package and when it runs one package in its directory.
package skipnote

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	reasons = map[string][]string{} // reason → test names
)

// Skip records the reason and skips t.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	mu.Lock()
	reasons[reason] = append(reasons[reason], t.Name())
	mu.Unlock()
	t.Skip(reason)
}

// Main runs the tests, prints the skip summary and exits with the tests' status.
func Main(m *testing.M, pkg string) {
	code := m.Run()
	var w io.Writer = os.Stderr
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = tty
	}
	Write(w, pkg)
	os.Exit(code)
}

// Write prints the summary: one line per distinct reason.
func Write(w io.Writer, pkg string) {
	mu.Lock()
	defer mu.Unlock()
	keys := make([]string, 0, len(reasons))
	for r := range reasons {
		keys = append(keys, r)
	}
	slices.Sort(keys)
	for _, r := range keys {
		names := reasons[r]
		shown := names
		more := ""
		if len(shown) > 4 {
			shown, more = shown[:4], fmt.Sprintf(", and %d more", len(names)-4)
		}
		fmt.Fprintf(w, "%s: SKIP %d test(s): %s (%s%s)\n", pkg, len(names), r, strings.Join(shown, ", "), more)
	}
}
