package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/corpus"
)

const exampleConfig = "../../examples/config/entitlements.yaml"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCLI(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   []string
		noStdout bool
	}{
		{name: "no command", args: nil, code: exitUsage, stderr: []string{"usage:"}, noStdout: true},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage, stderr: []string{"unknown command"}},
		{name: "calc needs --config", args: []string{"calc"}, code: exitUsage, stderr: []string{"--config is required"}, noStdout: true},
		{name: "calc bad --now", args: []string{"calc", "--config", exampleConfig, "--now", "yesterday"}, code: exitUsage, stderr: []string{"--now"}},
		{name: "calc bad --format", args: []string{"calc", "--config", exampleConfig, "--format", "xml"}, code: exitUsage},
		{name: "calc example", args: []string{"calc", "--config", exampleConfig, "--now", "2026-01-01"}, code: exitOK,
			stdout: []string{`"pizza_teams/sre": {`, `"Dave"`, `"mallory"`}},
		{name: "calc missing config file", args: []string{"calc", "--config", "nope.yaml"}, code: exitError,
			stderr: []string{"nope.yaml", "cannot read"}, noStdout: true},
		{name: "validate example", args: []string{"validate", "--config", exampleConfig}, code: exitOK, stdout: []string{"OK"}},
		{name: "explain text", args: []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "apps/prod-ssh", "--person", "DAVE"},
			code: exitOK, stdout: []string{"Dave IS a member of apps/prod-ssh", "via pizza_teams/sre", "org chart: Dave → carol"}},
		{name: "explain json", args: []string{"explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "pizza_teams/engineering", "--person", "mallory", "--format", "json"},
			code: exitOK, stdout: []string{`"member": false`, `"removed": true`}},
		{name: "explain unknown group", args: []string{"explain", "--config", exampleConfig, "--group", "x/y", "--person", "bob"},
			code: exitError, stderr: []string{`no calculated group "x/y"`}},
		{name: "explain needs group", args: []string{"explain", "--config", exampleConfig}, code: exitUsage},
		{name: "plan against state file", args: []string{"plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json"},
			code: exitOK, stdout: []string{"+ ADD cn=billing-admin", "- DELETE cn=legacy-vpn", ".  + mallory", "Plan: 1 to create, 3 to update, 1 to delete"}},
		{name: "plan json", args: []string{"plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--format", "json"},
			code: exitOK, stdout: []string{`"kind": "create"`, `"ou": "apps"`}},
		{name: "apply against state file", args: []string{"apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--yes"},
			code: exitOK, stdout: []string{"Apply: 5 change(s) applied, 0 skipped, 0 failed; 0 target(s) not applied"}},
		{name: "apply -v logs every write", args: []string{"apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--yes", "-v"},
			code: exitOK, stdout: []string{"Apply: 5 change(s) applied, 0 skipped, 0 failed; 0 target(s) not applied"},
			stderr: []string{"level=INFO msg=write", "+erin,mallory -frank\" status=applied\n"}},
		{name: "apply refused by the guard writes nothing there", args: []string{"apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--max-deleted-groups", "0", "--auto-approve"},
			code: exitError, stdout: []string{"apps (ldap): REFUSED: removal guard refused", "Apply: 1 change(s) applied", "1 target(s) not applied: apps"}},
		{name: "plan guard refuses", args: []string{"plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--max-deleted-groups", "0", "--max-removal-share", "0.01"},
			code: exitError, stdout: []string{"removal guard refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if tc.noStdout && stdout != "" {
				t.Errorf("stdout should be empty, got %q", stdout)
			}
		})
	}
}

// TestCalcInvalidRepo checks the contract on invalid input: errors on stderr as
// path:line: message, nothing on stdout, non-zero exit.
func TestCalcInvalidRepo(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.yaml", "configuration_path: ./defs\ngroups:\n  teams:\n    type: ldap\n    base: ou=t,dc=x\n    ldap_uri: ldap://127.0.0.1:1\n    ldap_binddn: cn=a\n    ldap_bindpw: x\n    person_dn_format: uid=%KEY%\npeople:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n")
	write("people.yaml", "bob: {cn: Bob}\n")
	write("defs/teams/a.txt", "username = bob\ndescription: oops\n")
	write("defs/teams/b.txt", "group = teams/missing\n")
	code, stdout, stderr := runCLI(t, "calc", "--config", filepath.Join(dir, "config.yaml"))
	if code != exitError || stdout != "" {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	for _, want := range []string{"a.txt:2: Unparseable line", "b.txt:1: Could not find a configuration", "2 error(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestCalcConformanceShape runs one conformance case through the CLI exactly as an outside
// harness does (working directory = the case folder).
func TestCalcConformanceShape(t *testing.T) {
	t.Chdir(filepath.Join(corpus.Dir(t), "acc_filters"))
	code, stdout, stderr := runCLI(t, "calc", "--config", "config.yaml", "--now", "2026-01-01")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile("expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(stdout) != strings.TrimSpace(string(want)) {
		t.Errorf("output differs from expected.json")
	}
}
