package github_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Issue 25 §4: a role change is one PUT with the new role, never a removal and an addition
// (removals email people and drop their team memberships): org member ↔ admin, team
// member ↔ maintainer.
func TestRoleChangesAreOneWrite(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.fake.SetMember("acme", "alice", "admin")
	e.fake.SetMember("acme", "ivan", "admin")
	for _, u := range []string{"bob", "carol", "dave"} {
		e.fake.SetMember("acme", u, "member")
	}
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"bob"}, Maintainers: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	e.write(map[string]string{
		// bob becomes an admin, ivan a member; in eng, bob becomes maintainer and alice member.
		"ldap-config/github/org/admin.txt":  "username = alice\nusername = bob\n",
		"ldap-config/github/org/member.txt": "username = carol\nusername = dave\nusername = ivan\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = bob\nmetadata_team_maintainers = bob\n",
	})
	e.fake.ResetStats()
	e.converge()
	st := e.fake.Stats()
	for route, want := range map[string]int{
		"PUT /orgs/{org}/memberships/{user}":                    2,
		"DELETE /orgs/{org}/memberships/{user}":                 0,
		"PUT /orgs/{org}/teams/{slug}/memberships/{user}":       2,
		"DELETE /orgs/{org}/teams/{slug}/memberships/{user}":    0,
		"GET /orgs/{org}/teams/{slug}/team-sync/group-mappings": 1, // eng changes: is it synced?
	} {
		if st.Requests[route] != want {
			t.Errorf("%s: %d requests, want %d (all: %v)", route, st.Requests[route], want, st.Requests)
		}
	}
	if st.Writes != 4 {
		t.Errorf("%d writes, want 4", st.Writes)
	}
	wantMembers(t, e.fake.Members("acme"), map[string]string{"alice": "admin", "bob": "admin", "ivan": "member", "carol": "member", "dave": "member"})
	if ti, _ := e.fake.Team("acme", "eng"); ti.Members["bob"] != "maintainer" || ti.Members["alice"] != "member" {
		t.Errorf("eng: %v", ti.Members)
	}
	e.noop()
}

// Teams whose membership GitHub does not let the API change are detected on read, reported
// with a warning and left alone, and the run succeeds: a team synced with an identity
// provider (changed by its file, or without a file under delete_teams) and an enterprise
// team (ent: slug). A team that does not change is not asked about.
func TestManagedTeamsAreLeftAlone(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.teamKeys = "    delete_teams: true\n"
	seedOrg(e)
	for _, spec := range []fakegithub.TeamSpec{
		{Name: "sso", Members: []string{"alice"}},
		{Name: "sso-orphan", Members: []string{"bob"}},
		{Name: "platform", Members: []string{"carol"}, Enterprise: true},
		{Name: "quiet", Members: []string{"dave"}},
		{Name: "plain", Members: []string{"dave"}},
	} {
		if _, err := e.fake.AddTeam("acme", spec); err != nil {
			t.Fatal(err)
		}
	}
	for _, slug := range []string{"sso", "sso-orphan", "quiet"} {
		if err := e.fake.SyncTeam("acme", slug, "okta-"+slug); err != nil {
			t.Fatal(err)
		}
	}
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/teams/sso.txt":   "username = alice\nusername = bob\n",  // bob is added in the IdP, not here
		"ldap-config/github/teams/quiet.txt": "username = dave\n",                   // no change: not asked about
		"ldap-config/github/teams/plain.txt": "username = dave\nusername = carol\n", // a normal change
	})
	e.fake.ResetStats()
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatalf("plan: %v", err)
	}
	got := changes(plan)
	if len(got) != 1 || !strings.Contains(got[0], "cn=plain") {
		t.Fatalf("changes %v, want only plain's", got)
	}
	if n := e.fake.Stats().Requests["GET /orgs/{org}/teams/{slug}/team-sync/group-mappings"]; n != 3 {
		t.Errorf("%d group-mapping lookups, want 3 (sso, sso-orphan, plain)", n)
	}
	if c := target(plan, "github/teams").Counters; c["managed_teams"] != 3 {
		t.Errorf("managed_teams %d, want 3 (sso, sso-orphan, ent:platform)", c["managed_teams"])
	}
	log := e.log.String()
	for _, want := range []string{"team=sso idp_groups=okta-sso", "team=sso-orphan", "teams=ent:platform"} {
		if !strings.Contains(log, want) {
			t.Errorf("no warning with %q:\n%s", want, log)
		}
	}
	if err := e.apply(reg, plan).Err(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	for slug, want := range map[string][]string{"sso": {"alice"}, "sso-orphan": {"bob"}, "ent:platform": {"carol"}, "plain": {"carol", "dave"}} {
		ti, ok := e.fake.Team("acme", slug)
		if !ok || !slices.Equal(sortedKeys(ti.Members), want) {
			t.Errorf("%s: %v (exists %v), want %v", slug, ti.Members, ok, want)
		}
	}
}

// Per-item failures (a user who blocked the org, an organization given as a member, an
// unknown or renamed login) are classified, do not stop the other writes, fail the run (the
// report's Err), and are summed up in one table.
func TestPerItemFailuresAreClassified(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.AddUsers("zed")
	e.fake.Block("acme", "zed")
	e.fake.AddOrg("otherorg")
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	var ppl strings.Builder
	for _, u := range append(everyone, "otherorg", "renamed") {
		fmt.Fprintf(&ppl, "%s: {cn: %s}\n", u, u)
	}
	e.write(map[string]string{"people.yaml": ppl.String()})
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\n" +
			"username = zed\nusername = otherorg\nusername = renamed\nusername = erin\n",
		"ldap-config/github/teams/eng.txt": "username = bob\nusername = carol\n",
	})
	reg := e.registry()
	rep := e.apply(reg, e.plan(reg))
	err := rep.Err()
	if err == nil {
		t.Fatal("the run did not fail")
	}
	kinds := map[string]github.FailureKind{}
	for _, ie := range github.ItemErrors(err) {
		kinds[ie.Login] = ie.Kind
	}
	want := map[string]github.FailureKind{"zed": github.FailBlocked, "otherorg": github.FailOrganization, "renamed": github.FailNotFound}
	if !maps.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v\n%v", kinds, want, err)
	}
	// The other writes of the same change and of the other target went through.
	if _, ok := e.fake.Pending("acme")["erin"]; !ok {
		t.Errorf("erin was not invited: %v", e.fake.Pending("acme"))
	}
	if ti, _ := e.fake.Team("acme", "eng"); ti.Members["carol"] == "" {
		t.Errorf("eng: %v", ti.Members)
	}
	var b bytes.Buffer
	if err := github.WriteFailureSummary(&b, github.ItemErrors(err)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "\nblocked ") || !strings.Contains(out, " zed ") {
		t.Errorf("no blocked row for zed:\n%s", out)
	}
	for _, want := range []string{"3 item(s) failed (blocked 1, not_found 1, organization 1)", "KIND", "organization", "renamed"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
