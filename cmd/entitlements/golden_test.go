package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// TestGolden pins the messages people read (issue 13): every mistake of a repo reported in one
// run at the right line with a suggestion, warnings as path:line: warning:, explain in words,
// help per command, the dependency graph. Regenerate with `go test -run TestGolden -update`
// and review the diff.
func TestGolden(t *testing.T) {
	const mistakes = "testdata/mistakes/entitlements.yaml"
	const warnonly = "testdata/warnonly/entitlements.yaml"
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"validate_mistakes", []string{"validate", "--config", mistakes}, exitError},
		{"validate_mistakes_strict", []string{"validate", "--strict", "--config", mistakes}, exitError},
		{"validate_erb_error", []string{"validate", "--config", "testdata/erb/entitlements.yaml"}, exitError},
		{"validate_warning", []string{"validate", "--config", warnonly}, exitOK},
		{"validate_warnings_as_errors", []string{"validate", "--warnings-as-errors", "--config", warnonly}, exitError},
		{"validate_strict_unknown_user", []string{"validate", "--strict", "--config", warnonly}, exitError},
		{"explain_filter_removes", []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "pizza_teams/engineering", "--person", "mallory"}, exitOK},
		{"explain_filter_list", []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "pizza_teams/sre", "--person", "mallory"}, exitOK},
		{"explain_via_group", []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "apps/prod-ssh", "--person", "dave"}, exitOK},
		{"explain_unknown_person", []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "apps/prod-ssh", "--person", "dvae"}, exitError},
		{"graph_dot", []string{"graph", "--config", exampleConfig}, exitOK},
		{"graph_mermaid_group", []string{"graph", "--config", exampleConfig, "--group", "pizza_teams/sre", "--format", "mermaid"}, exitOK},
		{"help_calc", []string{"calc", "-h"}, exitOK},
		{"help_explain", []string{"help", "explain"}, exitOK},
		{"usage", []string{"help"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			got := "$ entitlements " + strings.Join(tc.args, " ") + "\nexit " + strconv.Itoa(code) +
				"\n--- stdout\n" + stdout + "--- stderr\n" + stderr
			// Explain prints absolute paths; the goldens must hold in any clone.
			got = strings.ReplaceAll(got, repoRoot(t), "<repo>")
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (rerun with -update and review the diff):\n%s", path, got)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
		})
	}
}

// repoRoot is the absolute path of the module root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
