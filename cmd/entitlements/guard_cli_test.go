package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guardRepo writes a repo of n LDAP targets, each with group g, and a state file in which g
// has the given members; the calculation keeps only alice.
func guardRepo(t *testing.T, n int, current []string) (cfg, state string) {
	t.Helper()
	dir := t.TempDir()
	var c strings.Builder
	c.WriteString("configuration_path: ./defs\ngroups:\n")
	groups := map[string]any{}
	for i := range n {
		ou := fmt.Sprintf("t%d", i)
		fmt.Fprintf(&c, "  %s:\n    type: ldap\n    base: ou=%s,dc=x\n    ldap_uri: ldap://127.0.0.1:1\n    ldap_binddn: cn=a\n    ldap_bindpw: x\n    person_dn_format: uid=%%KEY%%\n", ou, ou)
		if err := os.MkdirAll(filepath.Join(dir, "defs", ou), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "defs", ou, "g.txt"), []byte("username = alice\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		groups[ou+"/g"] = map[string]any{"dn": "cn=g,ou=" + ou + ",dc=x", "members": current}
	}
	c.WriteString("people:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n")
	st, _ := json.Marshal(map[string]any{"groups": groups})
	for name, body := range map[string]string{"config.yaml": c.String(), "people.yaml": "alice: {cn: A}\n", "state.json": string(st)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "config.yaml"), filepath.Join(dir, "state.json")
}

func members(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("u%02d", i))
	}
	return out
}

// Issue 10 item 9: a refused target still shows its changes, marked refused, and the message
// names the flag of the limit that refused it.
func TestGuardRefusalOutput(t *testing.T) {
	cfg6, state6 := guardRepo(t, 6, members(9))
	cfg1, state1 := guardRepo(t, 1, append([]string{"alice"}, members(20)...))
	cases := []struct {
		name   string
		args   []string
		stdout []string
		stderr []string
	}{
		{name: "global guard", args: []string{"plan", "--config", cfg6, "--state", state6},
			stdout: []string{"t0 (ldap): REFUSED: ", "across all targets", "override with --max-total-removal-share or --force",
				"1 change(s) refused, not applied", ".  - u08", ".  + alice", "t5 (ldap): REFUSED: by the run-wide limit that refused t0\n",
				"Plan: 0 to create, 0 to update, 0 to delete (6 target(s) failed or refused: nothing will be written to them)\n"},
			stderr: []string{"entitlements plan: 6 target(s) failed or refused (see the plan), nothing written to them: t0, t1, t2, t3, t4, t5\n"}},
		{name: "json: the errors and the flag on stderr", args: []string{"plan", "--config", cfg6, "--state", state6, "--format", "json"},
			stderr: []string{"t5: removal guard refused the plan for t5", "refused by the removal guard: override with --max-total-removal-share or --force"}},
		{name: "per-group limit names its own flag", args: []string{"plan", "--config", cfg1, "--state", state1, "--max-removal-share", "1"},
			stdout: []string{"REFUSED", "of the 21 members of cn=g,ou=t0,dc=x", "override with --max-group-removal-share or --force", ".  - u19"}},
		{name: "per-target share", args: []string{"plan", "--config", cfg1, "--state", state1},
			stdout: []string{"REFUSED", "override with --max-removal-share or --force"}},
		{name: "apply writes nothing to a refused target", args: []string{"apply", "--config", cfg6, "--state", state6},
			stdout: []string{"REFUSED", "Apply: 0 change(s) applied, 0 skipped, 0 failed; 6 target(s) not applied"}},
		{name: "json marks refused targets", args: []string{"plan", "--config", cfg6, "--state", state6, "--format", "json"},
			stdout: []string{`"refused": true`, `"u08"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
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
		})
	}
	// The override flags lift the refusals.
	for _, args := range [][]string{
		{"plan", "--config", cfg6, "--state", state6, "--max-total-removal-share", "1"},
		{"plan", "--config", cfg6, "--state", state6, "--force"},
		{"plan", "--config", cfg1, "--state", state1, "--max-removal-share", "1", "--max-group-removal-share", "1"},
	} {
		if code, stdout, stderr := runCLI(t, args...); code != exitOK || strings.Contains(stdout, "REFUSED") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
}

// Issue 10 items 1, 2 and 7 from outside: the flags that lift the file and people refusals.
func TestHardeningFlags(t *testing.T) {
	cfg, _ := guardRepo(t, 1, nil)
	dir := filepath.Dir(cfg)
	secret := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(secret, []byte("username = alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "defs", "t0", "linked.txt")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "validate", "--config", cfg)
	if code != exitError || !strings.Contains(stderr, "linked.txt: symlink resolves outside the config tree") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "validate", "--config", cfg, "--allow-symlinks-outside"); code != exitOK {
		t.Errorf("--allow-symlinks-outside: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "people.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "validate", "--config", cfg, "--allow-symlinks-outside")
	if code != exitError || !strings.Contains(stderr, "yields no people") || !strings.Contains(stderr, "--allow-empty-people") {
		t.Errorf("empty people: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "validate", "--config", cfg, "--allow-symlinks-outside", "--allow-empty-people"); code != exitOK {
		t.Errorf("--allow-empty-people: exit %d: %s", code, stderr)
	}
}
