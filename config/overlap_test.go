package config

import "testing"

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
