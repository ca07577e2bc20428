package github_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
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

// coverEnv: erin and frank leave the org in this plan; erin is in teams eng and web, frank
// is wanted in eng (as napoleon in the plugin's github_org_pending fixture).
func coverEnv(t *testing.T) *env {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.SetMember("acme", "erin", "member")
	e.fake.SetMember("acme", "frank", "member")
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "erin"}})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "web", Members: []string{"bob", "erin"}})
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/teams/eng.txt": "username = alice\nusername = frank\n",
		"ldap-config/github/teams/web.txt": "username = bob\nusername = carol\n",
	})
	return e
}

func teamChange(t *testing.T, p *deploy.Plan, dn string) *providers.Change {
	t.Helper()
	for _, c := range target(p, "github/teams").Changes {
		if strings.HasPrefix(c.DN, dn+",") {
			return c
		}
	}
	return nil
}

// Removing a user from the org removes them from its teams: those team removals are planned
// as covered by the org removal (shown, counted apart, not sent), as the plugin skips them.
// A user the plan removes from the org is not added to a team either: apply could not do it
// (GitHub would invite them back), so the plan does not show it.
func TestOrgRemovalCoversTeamRemovals(t *testing.T) {
	e := coverEnv(t)
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	eng, web := teamChange(t, plan, "cn=eng"), teamChange(t, plan, "cn=web")
	if eng == nil || web == nil {
		t.Fatalf("plan %v", changes(plan))
	}
	if len(eng.Add) != 0 || !slices.Equal(eng.Remove, []string{"erin"}) || len(eng.Covered) != 1 || !eng.OnlyCovered() {
		t.Errorf("eng: +%v -%v covered %v", eng.Add, eng.Remove, eng.Covered)
	}
	if !slices.Equal(web.Add, []string{"carol"}) || !slices.Equal(web.Remove, []string{"erin"}) || len(web.Covered) != 1 || web.OnlyCovered() {
		t.Errorf("web: +%v -%v covered %v", web.Add, web.Remove, web.Covered)
	}
	if by := eng.Covered[0].By; by == nil || by.OU != "github/org" || !slices.Contains(by.Remove, "erin") {
		t.Errorf("eng's removal covered by %+v", by)
	}
	if !strings.Contains(e.log.String(), "frank") || !strings.Contains(e.log.String(), "removes from the org are not added") {
		t.Errorf("frank's add is dropped silently: %s", e.log.String())
	}
	if tot := plan.Totals(); tot[providers.UpdateGroup] != 2 || plan.Covered() != 1 {
		t.Errorf("totals %v, covered %d; want 2 updates (org member, web) and 1 covered (eng)", tot, plan.Covered())
	}
	e.fake.ResetStats()
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	st := e.fake.Stats()
	if n := st.Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 0 {
		t.Errorf("%d team removals sent", n)
	}
	if n := st.Requests["DELETE /orgs/{org}/memberships/{user}"]; n != 2 {
		t.Errorf("%d org removals, want 2", n)
	}
	if n := st.Requests["PUT /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 1 {
		t.Errorf("%d team adds, want 1 (carol)", n)
	}
	for _, o := range outcomes(rep, "github/teams") {
		want := providers.Applied
		if o.Change == eng {
			want = providers.Covered
		}
		if o.Status != want {
			t.Errorf("%s: %s %v, want %s", o.Change, o.Status, o.Err, want)
		}
	}
	engNow, _ := e.fake.Team("acme", "eng")
	webNow, _ := e.fake.Team("acme", "web")
	wantMembers(t, engNow.Members, map[string]string{"alice": "member"})
	wantMembers(t, webNow.Members, map[string]string{"bob": "member", "carol": "member"})
	e.noop()
}

// When the org removal fails, the team removals it covered are sent after all.
func TestFailedOrgRemovalSendsCoveredTeamRemovals(t *testing.T) {
	e := coverEnv(t)
	e.fake.AddFault(fakegithub.Fault{Method: "DELETE", Path: "/orgs/acme/memberships/erin", Kind: fakegithub.Status, Status: 422})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	eng := teamChange(t, plan, "cn=eng")
	rep := e.apply(reg, plan)
	for _, o := range outcomes(rep, "github/org") {
		if slices.Contains(o.Change.Remove, "erin") && o.Status != providers.Failed {
			t.Fatalf("org removal of erin: %s", o.Status)
		}
	}
	for _, o := range outcomes(rep, "github/teams") {
		if o.Status != providers.Applied {
			t.Errorf("%s: %s %v", o.Change, o.Status, o.Err)
		}
		if o.Change == eng && o.Status == providers.Covered {
			t.Error("eng reported covered although the org removal failed")
		}
	}
	if n := e.fake.Stats().Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 2 {
		t.Errorf("%d team removals sent, want 2 (erin from eng and web)", n)
	}
	engNow, _ := e.fake.Team("acme", "eng")
	wantMembers(t, engNow.Members, map[string]string{"alice": "member"})
	if e.fake.Members("acme")["erin"] != "member" {
		t.Fatal("the fault did not keep erin in the org")
	}
}
