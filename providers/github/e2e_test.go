package github_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// seedOrg makes alice an admin and bob, carol, dave members of acme.
func seedOrg(e *env) {
	e.fake.SetMember("acme", "alice", "admin")
	for _, u := range []string{"bob", "carol", "dave"} {
		e.fake.SetMember("acme", u, "member")
	}
}

var orgFiles = map[string]string{
	"ldap-config/github/org/admin.txt":  "username = alice\n",
	"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\n",
}

func TestFirstRunCreatesTeamsThenNoop(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/teams/eng.txt":     "username = alice\nusername = bob\nmetadata_team_maintainers = alice\n",
		"ldap-config/github/teams/eng-web.txt": "username = carol\nusername = Bob\nmetadata_parent_team_name = eng\n",
		"ldap-config/github/teams/vault.txt":   "username = dave\nmetadata_team_privacy = secret\n",
	})
	plan, rep := e.converge()
	if tp := target(plan, "github/org"); len(tp.Changes) != 0 {
		t.Errorf("org changes %v", changes(plan))
	}
	if tp := target(plan, "github/teams"); len(tp.Changes) != 3 {
		t.Fatalf("team changes %v", changes(plan))
	}
	for _, o := range outcomes(rep, "github/teams") {
		if o.Status != providers.Applied {
			t.Errorf("%s: %s %v", o.Change, o.Status, o.Err)
		}
	}
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "maintainer", "bob": "member"})
	if eng.Privacy != "closed" || eng.Parent != "" {
		t.Errorf("eng %+v", eng)
	}
	web, _ := e.fake.Team("acme", "eng-web")
	wantMembers(t, web.Members, map[string]string{"bob": "member", "carol": "member"})
	if web.Parent != "eng" {
		t.Errorf("eng-web parent %q", web.Parent)
	}
	if v, _ := e.fake.Team("acme", "vault"); v.Privacy != "secret" {
		t.Errorf("vault privacy %q", v.Privacy)
	}
	if c := rep.Targets[1].Counters; c["writes"] != 8 || c["graphql_requests"] < 1 {
		t.Errorf("team counters %v", c)
	}
	e.noop()
}

func TestApplyThenPlanWithOneRegistry(t *testing.T) {
	// One registry for several runs: the org state changed by an apply must be read again by
	// the next plan, not served from the run's cache.
	e := newEnv(t, fakegithub.Options{AutoAccept: true})
	seedOrg(e)
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice"}})
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = erin\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = erin\n",
	})
	reg := e.registry()
	plan := e.plan(reg)
	// erin is not an org member yet: she is left out of the team, the org invites her.
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "cn=member") {
		t.Fatalf("first plan %v", got)
	}
	if err := e.apply(reg, plan).Err(); err != nil {
		t.Fatal(err)
	}
	plan = e.plan(reg)
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "cn=eng") {
		t.Fatalf("second plan %v", got)
	}
	if err := e.apply(reg, plan).Err(); err != nil {
		t.Fatal(err)
	}
	if got := changes(e.plan(reg)); len(got) != 0 {
		t.Fatalf("third plan %v", got)
	}
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "member", "erin": "member"})
}

func TestOrgRoles(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.fake.SetMember("acme", "alice", "admin")
	e.fake.SetMember("acme", "bob", "member")
	e.fake.SetMember("acme", "frank", "member")
	e.fake.Invite("acme", "gina", "member")
	e.fake.Invite("acme", "hank", "member")
	e.write(map[string]string{
		// bob moves up, alice moves down, erin is invited, frank is removed, gina's pending
		// invitation is left alone (even for another role), hank's is cancelled.
		"ldap-config/github/org/admin.txt":  "username = bob\nusername = gina\n",
		"ldap-config/github/org/member.txt": "username = alice\nusername = erin\n",
	})
	e.fake.ResetStats()
	plan, rep := e.converge()
	if n := len(changes(plan)); n != 2 {
		t.Fatalf("changes %v", changes(plan))
	}
	for _, o := range outcomes(rep, "github/org") {
		if o.Status != providers.Applied {
			t.Errorf("%s: %s %v", o.Change, o.Status, o.Err)
		}
	}
	st := e.fake.Stats()
	if st.Requests["PUT /orgs/{org}/memberships/{user}"] != 3 || st.Requests["DELETE /orgs/{org}/memberships/{user}"] != 2 {
		t.Errorf("writes %v", st.Requests)
	}
	wantMembers(t, e.fake.Members("acme"), map[string]string{"alice": "member", "bob": "admin"})
	wantMembers(t, e.fake.Pending("acme"), map[string]string{"erin": "member", "gina": "member"})
	e.noop()
}

func TestOrgValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"user in both roles", map[string]string{
			"ldap-config/github/org/admin.txt":  "username = alice\n",
			"ldap-config/github/org/member.txt": "username = alice\nusername = bob\n"}, "both admin and member"},
		{"missing role", map[string]string{"ldap-config/github/org/admin.txt": "username = alice\n"}, "missing: member"},
		{"extra group", map[string]string{
			"ldap-config/github/org/admin.txt":   "username = alice\n",
			"ldap-config/github/org/member.txt":  "username = bob\n",
			"ldap-config/github/org/billing.txt": "username = bob\n"}, `"billing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.write(tc.files)
			plan := e.plan(e.registry())
			tp := target(plan, "github/org")
			if tp.Err == nil || !strings.Contains(tp.Err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", tp.Err, tc.want)
			}
			if st := e.fake.Stats(); st.Writes != 0 {
				t.Fatal("wrote")
			}
		})
	}
}

func TestOrgFeaturesAndIgnore(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.SetMember("acme", "frank", "member")
	e.fake.SetMember("acme", "ivan", "admin")
	e.orgKeys = "    features: [remove]\n    ignore: [ivan]\n"
	e.write(map[string]string{
		// erin would be invited (invite disabled), frank removed (allowed), ivan is ignored
		// although he is in no file.
		"ldap-config/github/org/admin.txt":  "username = alice\n",
		"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = erin\n",
	})
	plan, _ := e.converge()
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "cn=member") {
		t.Fatalf("changes %v", got)
	}
	wantMembers(t, e.fake.Members("acme"), map[string]string{"alice": "admin", "bob": "member", "carol": "member",
		"dave": "member", "ivan": "admin"})
	e.noop()

	e.orgKeys = "    features: [invite]\n"
	e.fake.SetMember("acme", "frank", "member")
	plan, _ = e.converge()
	if got := changes(plan); len(got) != 1 {
		t.Fatalf("changes %v", got) // erin invited; frank and ivan stay
	}
	if _, ok := e.fake.Pending("acme")["erin"]; !ok {
		t.Fatal("erin not invited")
	}
	if e.fake.Members("acme")["frank"] == "" {
		t.Fatal("frank removed although remove is disabled")
	}
	e.noop()
}

func TestNonOrgMembersAreLeftOut(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.Invite("acme", "erin", "member")
	e.noOrg = true
	e.write(map[string]string{
		// zed is a GitHub user outside the org, erin only invited: neither can be added.
		"ldap-config/github/teams/eng.txt": "username = alice\nusername = zed\nusername = erin\nmetadata_team_maintainers = zed\n",
	})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	tc := target(plan, "github/teams").Changes
	if len(tc) != 1 || tc[0].Kind != providers.CreateGroup {
		t.Fatalf("changes %v", changes(plan))
	}
	rep := e.apply(reg, plan)
	o := outcomes(rep, "github/teams")[0]
	var w github.Warnings
	if o.Status != providers.Applied || !errors.As(o.Err, &w) || len(w) != 2 {
		t.Fatalf("outcome %s %v", o.Status, o.Err)
	}
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "member"})
	// The next plan leaves them out and reports them.
	reg = e.registry()
	plan = e.plan(reg)
	if got := changes(plan); len(got) != 0 {
		t.Fatalf("changes %v", got)
	}
	if !strings.Contains(e.log.String(), "left out of the team") || !strings.Contains(e.log.String(), "zed") {
		t.Errorf("log %s", e.log.String())
	}
}

func TestMaintainersAndParents(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "platform"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"bob", "carol"},
		Maintainers: []string{"alice"}, Privacy: "secret"}); err != nil {
		t.Fatal(err)
	}
	e.write(map[string]string{
		// alice is demoted, bob promoted, eng moves under platform (GitHub wants nested teams
		// closed), carol stays a member; dave is new and a maintainer straight away.
		"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\nusername = carol\nusername = dave\n" +
			"metadata_team_maintainers = bob, dave, nobody\nmetadata_parent_team_name = Platform\n",
		// A parent that exists nowhere is created first.
		"ldap-config/github/teams/ops.txt": "username = carol\nmetadata_parent_team_name = infra\n",
	})
	plan, _ := e.converge()
	if got := changes(plan); len(got) != 2 {
		t.Fatalf("changes %v", got)
	}
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "member", "bob": "maintainer", "carol": "member", "dave": "maintainer"})
	if eng.Parent != "platform" || eng.Privacy != "closed" {
		t.Errorf("eng %+v", eng)
	}
	if ops, _ := e.fake.Team("acme", "ops"); ops.Parent != "infra" {
		t.Errorf("ops %+v", ops)
	}
	if !strings.Contains(e.log.String(), "nobody") {
		t.Errorf("no warning for a maintainer who is not a member: %s", e.log.String())
	}
	e.noop()

	// Dropping the metadata keys changes nothing: parents and maintainers are never removed
	// just because a key is absent, and privacy is not forced.
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\nusername = carol\nusername = dave\n"})
	e.noop()
}

func TestIgnoreNotFound(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(map[bool]string{false: "fails", true: "skips"}[ignore], func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			if ignore {
				e.orgKeys = "    ignore_not_found: true\n"
			}
			e.write(orgFiles)
			e.write(map[string]string{"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = ghost\n"})
			reg := e.registry()
			rep := e.apply(reg, e.plan(reg))
			o := outcomes(rep, "github/org")[0]
			want := providers.Failed
			if ignore {
				want = providers.Skipped
			}
			if o.Status != want || o.Err == nil || !strings.Contains(o.Err.Error(), "ghost") {
				t.Fatalf("outcome %s %v, want %s", o.Status, o.Err, want)
			}
		})
	}
}

func TestDeleteTeamsOptIn(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "old", Members: []string{"bob"}})
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	plan, _ := e.converge()
	if _, ok := e.fake.Team("acme", "old"); !ok || len(changes(plan)) != 1 {
		t.Fatalf("deleted without opt-in: %v", changes(plan))
	}
	e.teamKeys = "    delete_teams: true\n"
	plan, rep := e.converge()
	if _, ok := e.fake.Team("acme", "old"); ok {
		t.Fatalf("not deleted with opt-in: %v", changes(plan))
	}
	if o := outcomes(rep, "github/teams"); len(o) != 1 || o[0].Change.Kind != providers.DeleteGroup {
		t.Fatalf("outcomes %v", o)
	}
}

func TestEnterpriseServer(t *testing.T) {
	// Only the paths GHES serves: REST under /api/v3, GraphQL at /api/graphql.
	e := newEnv(t, fakegithub.Options{GHES: true, Layout: fakegithub.EnterpriseLayout})
	seedOrg(e)
	e.fake.Invite("acme", "hank", "member") // not read on GHES (Ruby parity)
	e.addr = e.fake.APIURL()
	e.write(orgFiles)
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	e.converge()
	if _, ok := e.fake.Team("acme", "eng"); !ok {
		t.Fatal("team not created through the GHES URL")
	}
	st := e.fake.Stats()
	if st.NotServed != 0 {
		t.Errorf("requests to paths GHES does not serve: %v", st.Requests)
	}
	if st.Requests["GET /meta"] != 1 {
		t.Errorf("GET /meta %d times, want once per host", st.Requests["GET /meta"])
	}
	e.noop()
}

// `addr` is the API root as written, as in the Ruby plugin (Octokit's api_endpoint): REST at
// addr/..., GraphQL at addr/graphql. A fake mounted at the root, as the plugin's acceptance
// fake is, is reached through its bare URL; nothing is sent to /api/v3.
func TestAddrIsTheAPIRoot(t *testing.T) {
	for _, suffix := range []string{"", "/"} {
		e := newEnv(t, fakegithub.Options{Layout: fakegithub.RootLayout})
		seedOrg(e)
		e.addr = e.fake.URL() + suffix
		e.write(orgFiles)
		e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
		e.converge()
		if eng, ok := e.fake.Team("acme", "eng"); !ok || len(eng.Members) != 2 {
			t.Fatalf("addr %q: team %+v", e.addr, eng)
		}
		st := e.fake.Stats()
		if st.NotServed != 0 || st.Requests["GET /meta"] != 1 || st.Requests["POST /graphql"] == 0 {
			t.Errorf("addr %q: requests %v", e.addr, st.Requests)
		}
		e.noop()
	}
}

// A bare host as `addr` is the API root: against GitHub Enterprise Server (whose API is under
// /api/v3) every read fails, nothing is written, and the error says which addr to write.
func TestBareHostAddrOnEnterpriseServer(t *testing.T) {
	e := newEnv(t, fakegithub.Options{GHES: true, Layout: fakegithub.EnterpriseLayout})
	seedOrg(e)
	e.addr = e.fake.URL()
	e.write(orgFiles)
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	plan := e.plan(e.registry())
	for _, ou := range []string{"github/org", "github/teams"} {
		tp := target(plan, ou)
		if tp.Err == nil || !strings.Contains(tp.Err.Error(), "addr: "+e.fake.URL()+"/api/v3") {
			t.Errorf("%s: error %v; want the addr to write", ou, tp.Err)
		}
	}
	if st := e.fake.Stats(); st.Writes != 0 {
		t.Errorf("writes %v", st.Requests)
	}
}

func TestMissingToken(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.write(orgFiles)
	e.noToken = true
	e.opt.Getenv = func(string) (string, bool) { return "", false }
	tp := target(e.plan(e.registry()), "github/org")
	if tp.Err == nil || !strings.Contains(tp.Err.Error(), "no GitHub token") {
		t.Fatalf("error %v", tp.Err)
	}
	if st := e.fake.Stats(); st.REST+st.GraphQL != 0 {
		t.Fatalf("requests were sent: %+v", st)
	}
	// GITHUB_TOKEN is the fallback for an empty token setting.
	e.opt.Getenv = func(k string) (string, bool) { return "tok", k == "GITHUB_TOKEN" }
	if tp := target(e.plan(e.registry()), "github/org"); tp.Err != nil {
		t.Fatal(tp.Err)
	}
}

func TestLargeTeamsAndOrgsPage(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.noOrg = true
	var big []string
	var lines strings.Builder
	for i := range 250 {
		u := "u" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i)
		big = append(big, u)
		e.fake.SetMember("acme", u, "member")
		lines.WriteString("username = " + u + "\n")
	}
	var ppl strings.Builder
	for _, u := range big {
		ppl.WriteString(u + ": {cn: " + u + "}\n")
	}
	e.write(map[string]string{"people.yaml": ppl.String()})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "big", Members: big[:240]})
	e.write(map[string]string{"ldap-config/github/teams/big.txt": lines.String()})
	for i := range 30 {
		e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "t" + itoa(i), Members: big[i : i+3]})
		e.write(map[string]string{"ldap-config/github/teams/t" + itoa(i) + ".txt": "username = " + strings.Join(big[i:i+3], "\nusername = ") + "\n"})
	}
	e.opt.BatchSize = 20
	e.fake.ResetStats()
	plan, _ := e.converge()
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "+10 -0") {
		t.Fatalf("changes %v", got)
	}
	st := e.fake.Stats()
	// 31 teams at 20 per query = 2 first-page queries; the 240-member team needs 2 more pages
	// (one continuation query per round). The org read is 3 REST pages of members, 1 of
	// admins, one GraphQL query for pending invitations with the member count, and one more
	// member count after the lists (the consistency check).
	if st.GraphQLTeamDocs != 4 || st.MaxTeamAliases != 20 || st.GraphQLOrgDocs != 2 {
		t.Errorf("GraphQL docs: teams %d (max %d aliases), org %d", st.GraphQLTeamDocs, st.MaxTeamAliases, st.GraphQLOrgDocs)
	}
	if n := st.Requests["GET /orgs/{org}/members"]; n != 4 {
		t.Errorf("%d member list pages, want 4", n)
	}
	if st.Connections > 8 {
		t.Errorf("%d connections for %d requests", st.Connections, st.REST+st.GraphQL)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestCountersAndConnections(t *testing.T) {
	e := newEnv(t, fakegithub.Options{Latency: time.Millisecond})
	seedOrg(e)
	e.write(orgFiles)
	var files = map[string]string{}
	for i := range 40 {
		files["ldap-config/github/teams/team"+itoa(i)+".txt"] = "username = alice\nusername = bob\nusername = carol\n"
	}
	e.write(files)
	e.opt.PoolSize = 3
	e.opt.ReadConcurrency = 2
	e.opt.WriteConcurrency = 1
	e.fake.ResetStats()
	reg := e.registry()
	rep := e.apply(reg, e.plan(reg))
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	st := e.fake.Stats()
	c := reg.Counters()
	if st.Connections > 3 || c["connections_opened"] != int64(st.Connections) {
		t.Errorf("connections: fake %d, counted %d, pool 3", st.Connections, c["connections_opened"])
	}
	if c["rest_requests"] != int64(st.REST) || c["graphql_requests"] != int64(st.GraphQL) || c["writes"] != 160 {
		t.Errorf("counters %v vs fake %+v", c, st)
	}
}

func TestCallerTransport(t *testing.T) {
	// With Options.HTTPClient the caller's transport is used (and connections are counted
	// from the client side).
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.write(teamFiles())
	e.opt.HTTPClient = e.fake.Client()
	e.fake.ResetStats()
	reg := e.registry()
	if err := e.apply(reg, e.plan(reg)).Err(); err != nil {
		t.Fatal(err)
	}
	if c := reg.Counters(); c["connections_opened"] < 1 || c["connections_opened"] > int64(e.fake.Stats().Connections) {
		t.Fatalf("counters %v, fake %d connections", c, e.fake.Stats().Connections)
	}
	e.noop()
}
