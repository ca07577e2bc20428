package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// runBench runs the command in process.
func runBench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// Both modes print their help in entitlements' layout (what it does, the usage line, the
// flags, an example) on stdout with exit 0, and name the flags the README documents.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		name  string
		flags []string
	}{
		{[]string{"-h"}, "entitlements-bench", []string{"-people", "-dir", "-seed", "-floor", "-diff", "-cli", "-e2e", "-apply"}},
		{[]string{"--e2e", "--help"}, "entitlements-bench --e2e", []string{"-people", "-latency", "-format", "-dir", "-seed", "-changes", "-cpuprofile-dir"}},
		{[]string{"--apply", "-h"}, "entitlements-bench --apply", []string{"-people", "-changes", "-kill-at", "-budget-state", "-format", "-dir", "-seed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runBench(t, tc.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !strings.HasPrefix(lines[0], tc.name+": ") {
				t.Errorf("first line %q", lines[0])
			}
			if len(lines) < 5 || lines[1] != "" || !strings.HasPrefix(lines[2], "usage: "+tc.name) || lines[4] != "flags:" {
				t.Errorf("not the help layout:\n%s", out)
			}
			ex := slices.Index(lines, "example:")
			if ex < 0 || ex+2 != len(lines) || !strings.HasPrefix(lines[ex+1], "  go run ") {
				t.Errorf("no example at the end:\n%s", out)
			}
			for _, f := range tc.flags {
				if !strings.Contains(out, "\n  "+f+" ") && !strings.Contains(out, "\n  "+f+"\n") {
					t.Errorf("help lacks %s:\n%s", f, out)
				}
			}
		})
	}
}

// Usage errors exit 2 before anything is generated or started.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"unknown flag", []string{"--peeple", "3"}, "flag provided but not defined: -peeple"},
		{"positional argument", []string{"calc"}, "unexpected arguments: calc"},
		{"negative runs", []string{"--diff", "-2"}, "--floor and --diff take a number of runs"},
		{"--cli not found", []string{"--diff", "1", "--cli", "/nonexistent/entitlements"}, "--cli: "},
		{"e2e format", []string{"--e2e", "--format", "xml"}, `unknown --format "xml"`},
		{"e2e too few people", []string{"--e2e", "--people", "3"}, "--people must be at least 10"},
		{"apply format", []string{"--apply", "--format", "markdown"}, `unknown --format "markdown"`},
		{"apply too few people", []string{"--apply", "--people", "9"}, "--people must be at least 10"},
		{"apply too few changes", []string{"--apply", "--changes", "1"}, "--changes must be at least 2"},
		{"apply kill at the end", []string{"--apply", "--kill-at", "1"}, "--kill-at must be between 0 and 1"},
		{"apply kill at the start", []string{"--apply", "--kill-at", "0"}, "--kill-at must be between 0 and 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runBench(t, tc.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tc.stderr)
			}
		})
	}
}
