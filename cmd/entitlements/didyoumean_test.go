package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Mistakes in the question or in the manager map get a "did you mean" (issue 22.5): a manager
// naming nobody is a warning (an error under --strict), an unknown --group or command names
// the closest existing one.
func TestCLIDidYouMean(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "../../examples/config", dir)
	mm := filepath.Join(dir, "manager-map.yaml")
	data, err := os.ReadFile(mm)
	if err != nil {
		t.Fatal(err)
	}
	// judy's manager is heidi: a typo takes her out of management = heidi silently.
	typo := strings.Replace(string(data), "judy: {manager: heidi}", "judy: {manager: hiedi}", 1)
	if typo == string(data) {
		t.Fatal("the example manager map changed: judy's entry not found")
	}
	writeFile(t, mm, typo)
	cfg := filepath.Join(dir, "entitlements.yaml")
	const warn = `manager-map.yaml:11: warning: manager of "judy" is "hiedi", who is in neither the people data nor the manager map ("judy" is left out of every management group above); did you mean "heidi"?`
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"manager typo warns", []string{"validate", "--config", cfg}, exitOK, warn},
		{"manager typo fails under --strict", []string{"validate", "--strict", "--config", cfg}, exitError,
			`manager-map.yaml:11: manager of "judy" is "hiedi", who is in neither the people data nor the manager map ("judy" is left out of every management group above); did you mean "heidi"?`},
		{"explain unknown group", []string{"explain", "--config", exampleConfig, "--group", "apps/prod-sh", "--person", "dave"}, exitError,
			`entitlements explain: no calculated group "apps/prod-sh"; did you mean "apps/prod-ssh"?`},
		{"graph unknown group", []string{"graph", "--config", exampleConfig, "--group", "pizza_teams/sre2"}, exitError,
			`entitlements graph: no group "pizza_teams/sre2" in this repo; did you mean "pizza_teams/sre"?`},
		{"unknown command", []string{"pln"}, exitUsage, `entitlements: unknown command "pln"; did you mean "plan"?`},
		{"unknown command, nothing close", []string{"frobnicate"}, exitUsage, "entitlements: unknown command \"frobnicate\"\n"},
		// Issue 21: the benchmarks left the CLI; whoever still types bench is told where.
		{"bench moved", []string{"bench", "--people", "5000"}, exitUsage,
			`entitlements: unknown command "bench"; the benchmarks are a command of their own: go run ./cmd/entitlements-bench -h`},
		{"help bench", []string{"help", "bench"}, exitUsage, "go run ./cmd/entitlements-bench -h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}
