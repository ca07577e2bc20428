// Package skipnote makes skipped tests visible. `go test` prints a skipped test's reason only
// with -v, so on a fresh clone (no conformance corpus, no slapd) a package whose corpus tests
// all skipped reports a bare "ok". Tests call Skip instead of t.Skip; the package's TestMain
// calls Main, which prints one line per reason after the run, even without -v:
//
//	calc: SKIP 6 test(s): conformance corpus not found at ...; set ENTITLEMENTS_CONFORMANCE_DIR (TestConformance, ...)
//
// Where the line can go: `go test ./...` (package list mode) captures a test binary's stdout
// and stderr and, for a package that passes, throws them away unless -v or -json is given;
// only its own "ok" line gets through. So without -v, Main writes the line to the standard
// error of the process that started the test binary (the go command) when that is a
// terminal or a pipe: the terminal, `| tee`, or a CI log. A regular file is never written
// there (the go command's own writes would overwrite the line); then the line goes to
// /dev/tty if there is one, else to the binary's stderr, shown only if the package fails.
// With -v or -json, and when the binary's stderr is the go command's own (go test in a
// package directory, or a binary run by hand), the line goes to the binary's stderr, which
// is shown. A cached result ("(cached)") replays nothing: go test -count=1 runs again.
package skipnote

import (
	"bytes"
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
	var b bytes.Buffer
	Write(&b, pkg)
	if b.Len() > 0 {
		writeSummary(b.Bytes())
	}
	os.Exit(code)
}

// dest is where the summary goes.
type dest int

const (
	toStderr   dest = iota // the binary's own stderr
	toParent               // the standard error of the process that started the binary
	toTerminal             // /dev/tty
)

// destination chooses where go test shows the summary (see the package comment). own is the
// binary's stderr, parent the starter's stderr (nil when it cannot be seen).
func destination(verbose bool, own, parent os.FileInfo) dest {
	switch {
	case verbose:
		return toStderr
	case parent == nil:
		return toTerminal
	case own != nil && os.SameFile(own, parent):
		return toStderr
	case parent.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) != 0:
		return toParent
	}
	return toTerminal
}

// writeSummary writes the summary in one write (shorter than a pipe's atomic size, so it is
// never interleaved with the go command's output).
func writeSummary(text []byte) {
	own, _ := os.Stderr.Stat()
	parentPath := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	parent, err := os.Stat(parentPath)
	if err != nil {
		parent = nil
	}
	var w io.Writer = os.Stderr
	switch destination(testing.Verbose(), own, parent) {
	case toParent:
		if f, err := os.OpenFile(parentPath, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			defer f.Close()
			w = f
		}
	case toTerminal:
		if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer f.Close()
			w = f
		}
	}
	w.Write(text)
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
