package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// runDrift runs drift as against the real systems, with fp as every target's provider and
// dir as the last applied state (the environment variable, as a user gives it).
func runDrift(t *testing.T, fp *fake.Provider, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv(predictiveEnv, dir)
	var out, errb bytes.Buffer
	ext := &cmdExt{providers: func(*config.OU) (providers.Provider, error) { return fp, nil }}
	code = driftExt(context.Background(), args, &out, &errb, ext)
	return code, out.String(), errb.String()
}

// appliedState writes what fp holds as the last applied state, in the audit log's layout,
// as an apply would have left it.
func appliedState(t *testing.T, fp *fake.Provider) string {
	t.Helper()
	dir := t.TempDir()
	for _, ou := range []string{"apps", "pizza_teams"} {
		for _, g := range fp.Groups(ou) {
			p := filepath.Join(dir, filepath.FromSlash(cache.PathFromDN(g.DN)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, cache.StateFile(g.Members, nil), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

const prodSSH = "cn=prod-ssh,ou=Apps,ou=Groups,dc=example,dc=net"

// behindTheBack removes frank from prod-ssh and adds mallory, as someone with write access
// to the directory would.
func behindTheBack(fp *fake.Provider) {
	fp.Seed("apps", &providers.Group{DN: prodSSH, CN: "prod-ssh", Description: "SSH to production hosts",
		Members: []string{"Dave", "erin", "grace", "mallory"}})
}

// Issue 26.2: drift's exit codes are plan's (0 no drift, 2 drift with --detailed-exitcode,
// 1 error, usage errors 2), in every format, and drift is kept apart from the definitions'
// pending changes.
func TestCLIDrift(t *testing.T) {
	base := []string{"--config", exampleConfig, "--now", "2026-01-01"}
	for _, tc := range []struct {
		name    string
		args    []string
		drifted bool
		code    int
		stdout  []string
		stderr  []string
		check   func(t *testing.T, stdout string)
	}{
		{name: "no drift, text", code: exitOK,
			stdout: []string{"apps (ldap): no drift (3 group(s) compared)", "Drift: none\n",
				"Pending changes of the current definitions (what plan and apply would write; not drift):\n",
				"Plan: 1 to create, 3 to update, 1 to delete"}},
		{name: "no drift, detailed", args: []string{"--detailed-exitcode"}, code: exitOK},
		{name: "drift, text, without --detailed-exitcode", drifted: true, code: exitOK,
			stdout: []string{"apps (ldap): DRIFT: 1 of 3 group(s) changed outside the tool\n  ~ CHANGED " + prodSSH + "\n    .  + mallory\n    .  - frank\n",
				"pizza_teams (ldap): no drift"}},
		{name: "drift, text, detailed", args: []string{"--detailed-exitcode"}, drifted: true, code: exitChanges,
			stdout: []string{"Drift: 1 group(s) of 1 target(s) changed outside the tool: 1 member(s) added, 1 removed"}},
		{name: "drift, json, detailed", args: []string{"--format", "json", "--detailed-exitcode"}, drifted: true, code: exitChanges,
			check: func(t *testing.T, stdout string) {
				var doc struct {
					DriftFound bool `json:"drift_found"`
					OutOfBand  []struct {
						OU, Status string
						Groups     []struct {
							DN, Change     string
							Added, Removed []string
						}
					} `json:"out_of_band"`
					Pending struct{ Targets []struct{ OU string } }
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("not one JSON document: %v\n%s", err, stdout)
				}
				g := doc.OutOfBand[0].Groups
				if !doc.DriftFound || doc.OutOfBand[0].OU != "apps" || len(g) != 1 || g[0].DN != prodSSH || g[0].Change != "changed" ||
					strings.Join(g[0].Added, ",") != "mallory" || strings.Join(g[0].Removed, ",") != "frank" || len(doc.Pending.Targets) != 2 {
					t.Errorf("document: %+v", doc)
				}
			}},
		{name: "no drift, json", args: []string{"--format", "json", "--detailed-exitcode"}, code: exitOK,
			stdout: []string{`"drift_found": false`, `"status": "no_drift"`}},
		{name: "drift, markdown, detailed", args: []string{"--format", "markdown", "--detailed-exitcode"}, drifted: true, code: exitChanges,
			stdout: []string{"### Entitlements drift\n", "**Access was changed outside entitlements**",
				"| " + prodSSH + " | changed | mallory | frank |  |  |\n", "**Pending changes of the definitions** (not drift"}},
		{name: "no drift, markdown", args: []string{"--format", "markdown"}, code: exitOK,
			stdout: []string{"No drift: every target holds what was last applied."}},
		{name: "bad --format", args: []string{"--format", "xml"}, code: exitUsage, stderr: []string{`unknown --format "xml"`}},
		{name: "--state-dir that is a file", args: []string{"--state-dir", exampleConfig}, code: exitUsage, stderr: []string{"is not a directory"}},
		{name: "--state-dir accepted", args: []string{"--state-dir", "../../examples", "--detailed-exitcode"}, drifted: true, code: exitChanges},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := realTargets(t)
			dir := appliedState(t, fp)
			if tc.drifted {
				behindTheBack(fp)
			}
			code, stdout, stderr := runDrift(t, fp, dir, append(base, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
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
			if tc.check != nil {
				tc.check(t, stdout)
			}
			// Read-only: nothing is written to the targets.
			for _, c := range fp.Calls() {
				if c.Op != "read" {
					t.Errorf("drift made a %s call", c.Op)
				}
			}
		})
	}
}

// Without a last applied state drift cannot be known: exit 1 naming how to give it, nothing
// on stdout, and nothing read; a state that holds no group is the same.
func TestCLIDriftWithoutLastApplied(t *testing.T) {
	for _, tc := range []struct {
		name, dir string
		stderr    []string
	}{
		{"not set", "", []string{"drift cannot be known", predictiveEnv, "GitRepo audit log"}},
		{"empty", t.TempDir(), []string{"no last applied state", "holds no group: nothing was applied with it yet"}},
		{"missing", filepath.Join(t.TempDir(), "nope"), []string{"predictive state directory", "nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := realTargets(t)
			for _, detailed := range []bool{false, true} {
				args := []string{"--config", exampleConfig, "--now", "2026-01-01"}
				if detailed {
					args = append(args, "--detailed-exitcode")
				}
				code, stdout, stderr := runDrift(t, fp, tc.dir, args...)
				if code != exitError || stdout != "" {
					t.Errorf("exit %d (want 1), stdout %q", code, stdout)
				}
				for _, s := range tc.stderr {
					if !strings.Contains(stderr, s) {
						t.Errorf("stderr lacks %q:\n%s", s, stderr)
					}
				}
			}
			if n := len(fp.Calls()); n != 0 {
				t.Errorf("%d call(s) to the targets", n)
			}
		})
	}
}

// A target that cannot be read makes the run exit 1 whatever else it found: its drift is
// unknown, never reported as none.
func TestCLIDriftUnknownTarget(t *testing.T) {
	fp := realTargets(t)
	dir := appliedState(t, fp)
	behindTheBack(fp)
	fp.FailRead("pizza_teams", errors.New("connection refused"))
	for _, format := range []string{"text", "json", "markdown"} {
		code, stdout, stderr := runDrift(t, fp, dir, "--config", exampleConfig, "--now", "2026-01-01", "--format", format, "--detailed-exitcode")
		if code != exitError {
			t.Errorf("%s: exit %d, want 1", format, code)
		}
		if !strings.Contains(stderr, "the drift of 1 target(s) is unknown: pizza_teams: ") || !strings.Contains(stderr, "connection refused") {
			t.Errorf("%s: stderr:\n%s", format, stderr)
		}
		want := map[string]string{"text": "pizza_teams (ldap): UNKNOWN: ", "json": `"status": "unknown"`, "markdown": "❓ unknown"}[format]
		if !strings.Contains(stdout, want) || !strings.Contains(stdout, "mallory") {
			t.Errorf("%s: the report lacks %q or the drift found:\n%s", format, want, stdout)
		}
	}
}
