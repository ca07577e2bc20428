package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/entitlements-go/entitlements/config"
)

// Issue 10 item 8: two OUs that would manage the same things are rejected at load, naming both.
func TestOverlappingTargetsRejected(t *testing.T) {
	gh := func(key, extra string) string {
		return "  " + key + ":\n    type: github_team\n    org: Example\n    token: t\n    base: ou=" + key + "\n" + extra
	}
	aad := func(key, extra string) string {
		return "  " + key + ":\n    type: aad\n    base: ou=" + key + "\n" + extra
	}
	mo := func(key, attr string) string {
		return "  " + key + ":\n    type: member_of\n    memberof_attribute: " + attr + "\n    ou: [a]\n" + ldapConnPart
	}
	both := `"a" and "b" overlap`
	runCfgCases(t, []cfgCase{
		{name: "ldap same base", text: cfgText(ldapOU("a", "") + ldapOU("b", "")[0:0] +
			"  b:\n    type: ldap\n    base: ou=a,dc=example\n" + ldapConnPart),
			errs: []cfgErr{{-1, both}}},
		{name: "ldap same base spelled differently", text: cfgText(ldapOU("a", "") +
			"  b:\n    type: ldap\n    base: OU=A, DC=Example\n" + ldapConnPart),
			errs: []cfgErr{{-1, both}}},
		{name: "ldap same base on another server", text: cfgText(ldapOU("a", "") +
			"  b:\n    type: ldap\n    base: ou=a,dc=example\n    ldap_uri: ldaps://other.example.net\n    ldap_binddn: x\n    ldap_bindpw: y\n    person_dn_format: uid=%KEY%\n")},
		{name: "ldap different bases", text: cfgText(ldapOU("a", "") + ldapOU("b", ""))},
		{name: "github teams with deletion", text: cfgText(gh("a", "    delete_teams: true\n") + gh("b", "")),
			errs: []cfgErr{{-1, both}}},
		{name: "github org case-insensitive", text: cfgText(gh("a", "") + "  b:\n    type: github_team\n    org: EXAMPLE\n    token: t\n    base: ou=b\n    delete_teams: true\n"),
			errs: []cfgErr{{-1, both}}},
		{name: "github teams without deletion", text: cfgText(gh("a", "") + gh("b", ""))},
		{name: "github other org", text: cfgText(gh("a", "    delete_teams: true\n") + "  b:\n    type: github_team\n    org: other\n    token: t\n    base: ou=b\n")},
		{name: "github other host", text: cfgText(gh("a", "    delete_teams: true\n") + gh("b", "    addr: https://ghe.example.net/api/v3\n"))},
		{name: "aad same prefix", text: cfgText(aad("a", "    delete_groups: true\n    managed_prefix: ent-\n") + aad("b", "    delete_groups: true\n    managed_prefix: ent-\n")),
			errs: []cfgErr{{-1, both}}},
		{name: "aad nested prefix", text: cfgText(aad("a", "    delete_groups: true\n    managed_prefix: ent-\n") + aad("b", "    managed_prefix: ent-hr-\n")),
			errs: []cfgErr{{-1, both}}},
		{name: "aad disjoint prefixes", text: cfgText(aad("a", "    delete_groups: true\n    managed_prefix: ent-eng-\n") + aad("b", "    delete_groups: true\n    managed_prefix: ent-hr-\n"))},
		{name: "aad other tenant", text: cfgText(aad("a", "    delete_groups: true\n    managed_prefix: ent-\n    tenant_id: t1\n") + aad("b", "    delete_groups: true\n    managed_prefix: ent-\n    tenant_id: t2\n"))},
		{name: "aad no deletion", text: cfgText(aad("a", "    managed_prefix: ent-\n") + aad("b", "    managed_prefix: ent-\n"))},
		{name: "member_of attribute twice", text: cfgText(ldapOU("a", "") + mo("m1", "shellentitlements") + mo("m2", "ShellEntitlements")),
			errs: []cfgErr{{-1, `"m1" and "m2" overlap`}}},
		{name: "member_of different attributes", text: cfgText(ldapOU("a", "") + mo("m1", "shellentitlements") + mo("m2", "vpnentitlements"))},
	})
}

// Issue 20 item 7: two github_team OUs on one org (and one API host) that both have a file
// for the same team manage that team twice and flap, with or without delete_teams: rejected
// at load, naming both OUs and the team. The team is the slug GitHub derives from the file
// name (lower case), per org.
func TestOverlappingTeamsRejected(t *testing.T) {
	gh := func(key, extra string) string {
		return "  " + key + ":\n    type: github_team\n    org: Example\n    token: t\n    base: ou=" + key + "\n" + extra
	}
	for _, tc := range []struct {
		name   string
		groups string
		files  []string // under ldap-config/
		want   string   // "" = loads
	}{
		{"same team", gh("a", "") + gh("b", ""), []string{"a/sre.txt", "b/sre.yaml"},
			`groups "a" and "b" overlap: both manage the team sre of GitHub org Example (ldap-config/a/sre.txt, ldap-config/b/sre.yaml)`},
		{"same team spelled in another case", gh("a", "") + gh("b", ""), []string{"a/SRE.txt", "b/sre.txt", "a/ops.txt", "b/Ops.txt"},
			`both manage the teams ops, sre of GitHub org Example`},
		{"org spelled in another case", gh("a", "") + "  b:\n    type: github_team\n    org: EXAMPLE\n    token: t\n    base: ou=b\n",
			[]string{"a/sre.txt", "b/sre.txt"}, `both manage the team sre`},
		{"same host spelled out", gh("a", "") + gh("b", "    addr: https://api.github.com/\n"),
			[]string{"a/sre.txt", "b/sre.txt"}, `both manage the team sre`},
		{"different teams", gh("a", "") + gh("b", ""), []string{"a/sre.txt", "b/ops.txt", "b/sre_team.txt"}, ""},
		{"other org", gh("a", "") + "  b:\n    type: github_team\n    org: other\n    token: t\n    base: ou=b\n",
			[]string{"a/sre.txt", "b/sre.txt"}, ""},
		{"other host", gh("a", "") + gh("b", "    addr: https://ghe.example.net/api/v3\n"), []string{"a/sre.txt", "b/sre.txt"}, ""},
		{"files that are no team", gh("a", "") + gh("b", ""),
			[]string{"a/sre.txt", "b/.sre.txt", "b/sre/x.txt", "a/README.md", "b/README.md", "b/sre.md"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRepo(t)
			for _, f := range tc.files {
				p := filepath.Join(root, "ldap-config", filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("username = alice\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := Parse(filepath.Join(root, "config.yaml"), []byte(cfgText(tc.groups)), testOptions(root))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "each run would undo the other's changes") {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Two github_org OUs on one org both manage its members and their roles.
func TestOverlappingOrgsRejected(t *testing.T) {
	org := func(key, org, extra string) string {
		return "  " + key + ":\n    type: github_org\n    org: " + org + "\n    token: t\n    base: ou=" + key + "\n" + extra
	}
	both := `"a" and "b" overlap: both manage the members of GitHub org`
	runCfgCases(t, []cfgCase{
		{name: "same org", text: cfgText(org("a", "Example", "") + org("b", "example", "")), errs: []cfgErr{{-1, both}}},
		{name: "other org", text: cfgText(org("a", "Example", "") + org("b", "other", ""))},
		{name: "other host", text: cfgText(org("a", "Example", "") + org("b", "Example", "    addr: https://ghe.example.net/api/v3\n"))},
	})
}
