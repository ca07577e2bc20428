package github_test

import (
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Tests from running the Ruby plugin's acceptance suite against entitlements-go (issue 27).

// Logins are lower-cased where the provider takes them in (desired members, and members read
// from GitHub): requests, the plan and the no-op re-plan all use lower case, whatever the
// case of the group files, the people data or GitHub's own spelling. The fake refuses
// mixed-case membership writes, as the plugin's fake does.
func TestMixedCaseLogins(t *testing.T) {
	e := newEnv(t, fakegithub.Options{RejectMixedCaseLogins: true})
	seedOrg(e)
	e.fake.AddUsers("DonSkoy", "Mallory", "Zoe") // GitHub's spelling
	e.fake.SetMember("acme", "DonSkoy", "member")
	e.fake.SetMember("acme", "Mallory", "admin")
	e.fake.SetMember("acme", "Zoe", "member")
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"Mallory", "alice"}}); err != nil {
		t.Fatal(err)
	}
	var ppl strings.Builder
	for _, u := range everyone {
		ppl.WriteString(u + ": {cn: X}\n")
	}
	ppl.WriteString("DonSkoy: {cn: D}\nmallory: {cn: M}\nzoe: {cn: Z}\n")
	e.write(map[string]string{
		"people.yaml":                       ppl.String(),
		"ldap-config/github/org/admin.txt":  "username = ALICE\n",
		"ldap-config/github/org/member.txt": "username = Bob\nusername = carol\nusername = dave\nusername = DONSKoy\nusername = MALLORY\n",
		"ldap-config/github/teams/eng.txt":  "username = Alice\nusername = DONSKOY\nmetadata_team_maintainers = ALICE\n",
	})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, tp := range plan.Targets {
		for _, c := range tp.Changes {
			for _, l := range append(append([]string{}, c.Add...), c.Remove...) {
				seen = append(seen, l)
				if l != strings.ToLower(l) {
					t.Errorf("%s: login %q is not lower case", c.DN, l)
				}
			}
			for _, l := range c.Desired.Attrs["maintainers"] {
				if l != strings.ToLower(l) {
					t.Errorf("%s: maintainer %q is not lower case", c.DN, l)
				}
			}
		}
	}
	if got := strings.Join(seen, ","); got != "mallory,mallory,zoe,donskoy,mallory" {
		t.Errorf("plan adds and removes %s", got)
	}
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if n := e.fake.Stats().RejectedLogins; n != 0 {
		t.Fatalf("%d mixed-case membership writes", n)
	}
	wantMembers(t, e.fake.Members("acme"), map[string]string{"alice": "admin", "bob": "member", "carol": "member",
		"dave": "member", "DonSkoy": "member", "Mallory": "member"})
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "maintainer", "DonSkoy": "member"})
	e.noop()
}
