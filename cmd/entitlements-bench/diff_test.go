package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchDiff: --diff commits the generated repo and the benchmark's change, runs the CLI's
// calc and both forms of diff as whole processes, and prints the three figures and the two
// ratios. The CLI is built from the source by default, or named by --cli (a relative path
// still names it once the benchmark works in the generated repo). Needs go and git; changes
// the working directory: not parallel.
func TestBenchDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	// The CLI's diff runs git too: no user or system configuration.
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_SYSTEM", "/dev/null")
	tmp := t.TempDir()
	buildLikeTests(t)
	if out, err := exec.Command("go", "build", "-o", filepath.Join(tmp, "entitlements"), "../entitlements").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name   string
		cli    []string
		stderr string
	}{
		{"built from source", nil, "built " + cliPackage + " in "},
		{"--cli", []string{"--cli", "./entitlements"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cli != nil {
				t.Chdir(tmp)
			}
			args := append([]string{"--people", "600", "--diff", "1", "--dir", t.TempDir()}, tc.cli...)
			code, out, stderr := runBench(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			for _, want := range []string{"changed by the head commit: ldap-config/pizza_teams/", "people.yaml, manager-map.yaml",
				"calc (whole process, JSON to a file): ", "diff --base HEAD~1 --head HEAD (whole process, markdown): ",
				"diff --base HEAD~1 (head: the work tree", "goal <= 1.5"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Count(out, "ratio diff/calc") != 2 {
				t.Errorf("want two ratios:\n%s", out)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}
