package main

import (
	"strings"
	"testing"
)

// apply is quiet by default (issue 22.10): the plan, the report and one line per refused
// target on stderr; no log line per write, no "err=<nil>", each refusal's reason once, no
// empty "read:", no counts of kinds of change the plan does not have. -v adds the details.
func TestCLIApplyOutputQuiet(t *testing.T) {
	base := []string{"apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--yes"}
	const changes = `apps (ldap): 4 change(s)
  + ADD cn=billing-admin,ou=Apps,ou=Groups,dc=example,dc=net (Members: erin,frank,grace)
  ~ CHANGE cn=prod-ssh,ou=Apps,ou=Groups,dc=example,dc=net
    .  + bob
    .  - grace
  ~ CHANGE cn=wiki,ou=Apps,ou=Groups,dc=example,dc=net
    description: "Wiki editors" -> "Internal wiki editors"
  - DELETE cn=legacy-vpn,ou=Apps,ou=Groups,dc=example,dc=net (2 members)
`
	const sre = `pizza_teams (ldap): 1 change(s)
  ~ CHANGE cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net
    .  + erin
    .  - frank
    .  + mallory
`
	const refusal = "removal guard refused the plan for apps: it deletes 1 groups (limit 0); worst: " +
		"cn=legacy-vpn,ou=Apps,ou=Groups,dc=example,dc=net (deleted) -2, cn=prod-ssh,ou=Apps,ou=Groups,dc=example,dc=net -1"
	for _, tc := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"applied", base, exitOK,
			simulatedNote + "\n" + changes + sre +
				"Plan: 1 to create, 3 to update, 1 to delete\n" +
				"Apply: 5 change(s) applied, 0 skipped, 0 failed; 0 target(s) not applied\n" +
				"Apply done\n" + simulatedNote + "\n",
			""},
		{"refused", append(base[:len(base):len(base)], "--max-deleted-groups", "0"), exitError,
			simulatedNote + "\n" +
				"apps (ldap): REFUSED: " + refusal + "; override with --max-deleted-groups or --force\n" +
				strings.Replace(changes, "apps (ldap): 4 change(s)\n", "apps (ldap): 4 change(s) refused, not applied:\n", 1) + sre +
				"Plan: 0 to create, 1 to update, 0 to delete (1 target(s) failed or refused: nothing will be written to them)\n" +
				"Apply: 1 change(s) applied, 0 skipped, 0 failed; 1 target(s) not applied: apps\n" +
				"Apply failed (1 of 5 done)\n" + simulatedNote + "\n",
			"entitlements apply: 1 target(s) failed or refused (see the plan), nothing written to them: apps\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.stdout)
			}
			if stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tc.stderr)
			}
		})
	}
	t.Run("-v", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, append(base[:len(base):len(base)], "-v")...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if n := strings.Count(stderr, "level=INFO msg=write "); n != 5 {
			t.Errorf("%d write lines, want 5:\n%s", n, stderr)
		}
		if strings.Contains(stderr, "err=") {
			t.Errorf("a write that succeeded logs an error attribute:\n%s", stderr)
		}
		for _, want := range []string{"Plan: 1 to create, 3 to update, 1 to delete; calculation ", "; read: apps ", ", pizza_teams "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})
}
