package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skip instead of stopping the test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Name() string                      { return "TestX" }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skip(args ...any)                  { r.skip = fmt.Sprint(args...) }

func TestDir(t *testing.T) {
	// A module in a temporary directory: its default corpus is <tmp>/shared/conformance/cases.
	tmp := t.TempDir()
	mod := filepath.Join(tmp, "clone")
	pkg := filepath.Join(mod, "calc")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(tmp, "shared", "conformance", "cases")
	other := t.TempDir()
	missing := filepath.Join(other, "nope")
	for _, tc := range []struct {
		name      string
		env, ci   string
		defExists bool
		want      string
		fatal     bool
		skip      bool
	}{
		{name: "next to the clone", defExists: true, want: def},
		{name: "from the environment", env: other, want: other},
		{name: "environment wins", env: other, defExists: true, want: other},
		{name: "relative to where the test started", env: "../../shared/conformance/cases", defExists: true, want: def},
		{name: "missing: skipped", skip: true},
		{name: "missing under CI: fails", ci: "true", fatal: true},
		{name: "environment names nothing: fails", env: missing, defExists: true, fatal: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(tmp, "shared"))
			if tc.defExists {
				if err := os.MkdirAll(def, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(EnvVar, tc.env)
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			got := dir(r, pkg)
			if got != tc.want || (r.fatal != "") != tc.fatal || (r.skip != "") != tc.skip {
				t.Errorf("Dir = %q, fatal %q, skip %q; want %q, fatal %v, skip %v", got, r.fatal, r.skip, tc.want, tc.fatal, tc.skip)
			}
		})
	}
}
