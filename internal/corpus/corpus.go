// Package corpus finds the conformance corpus for tests: the cases that entitlements-app 1.2.0
// was run on (see README, Conformance). It is not part of the repository; the tests look for
// it at $ENTITLEMENTS_CONFORMANCE_DIR, else at shared/conformance/cases next to the clone
// (../shared/conformance/cases from the module root).
package corpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/entitlements-go/entitlements/internal/skipnote"
)

// EnvVar names the corpus directory (the one holding a folder per case).
const EnvVar = "ENTITLEMENTS_CONFORMANCE_DIR"

// startDir is the working directory when the test binary started (its package's directory):
// tests chdir into case folders, and the corpus must still be found from where they began.
var startDir, _ = os.Getwd()

// Find returns the absolute corpus directory, or an error saying where it was looked for.
func Find() (string, error) { return find(startDir) }

// find is Find for a test binary started in start.
func find(start string) (string, error) {
	d := os.Getenv(EnvVar)
	if d == "" {
		root, err := moduleRoot(start)
		if err != nil {
			return "", err
		}
		d = filepath.Join(filepath.Dir(root), "shared", "conformance", "cases")
	}
	abs := d
	if !filepath.IsAbs(d) {
		abs = filepath.Join(start, d)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("conformance corpus not found at %s", abs)
	}
	return abs, nil
}

// Dir returns the corpus directory for a test that needs it. Without a corpus the test is
// skipped (and the skip reported by skipnote, even without -v), except that it fails when
// $ENTITLEMENTS_CONFORMANCE_DIR names a directory that does not exist, or under CI=true:
// there a skip would hide a broken setup.
func Dir(t testing.TB) string {
	t.Helper()
	return dir(t, startDir)
}

func dir(t testing.TB, start string) string {
	t.Helper()
	d, err := find(start)
	switch {
	case err == nil:
		return d
	case os.Getenv(EnvVar) != "":
		t.Fatalf("%v (%s is set)", err, EnvVar)
	case os.Getenv("CI") == "true":
		t.Fatalf("%v; CI=true, so a missing corpus fails (set %s)", err, EnvVar)
	default:
		skipnote.Skip(t, "%v; set %s to run it (see README, Conformance)", err, EnvVar)
	}
	return ""
}

// moduleRoot is the directory of the go.mod above start.
func moduleRoot(start string) (string, error) {
	d := start
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod above " + start)
		}
		d = parent
	}
}
