package github_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// ---- delete_teams never deletes parents (GitHub deletes child teams with them) ----

func TestDeleteTeamsKeepsParentCreatedOnDemand(t *testing.T) {
	// ops names infra as its parent; no file defines infra, so the first run creates it. The
	// next run must not take infra for a team without a file and delete it (with ops).
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.teamKeys = "    delete_teams: true\n"
	e.write(map[string]string{"ldap-config/github/teams/ops.txt": "username = carol\nmetadata_parent_team_name = infra\n"})
	e.converge()
	if infra, ok := e.fake.Team("acme", "infra"); !ok {
		t.Fatal("the parent was not created")
	} else if ops, _ := e.fake.Team("acme", "ops"); ops.Parent != infra.Slug {
		t.Fatalf("ops parent %q", ops.Parent)
	}
	plan, _ := e.converge()
	if got := changes(plan); len(got) != 0 {
		t.Fatalf("second run plans %v", got)
	}
	for _, slug := range []string{"infra", "ops"} {
		if _, ok := e.fake.Team("acme", slug); !ok {
			t.Errorf("team %s was deleted", slug)
		}
	}
	if !strings.Contains(e.log.String(), "teams without a file are kept") {
		t.Errorf("keeping infra is not logged: %s", e.log.String())
	}
	e.noop()
}

func TestDeleteTeamsNeverDeletesATeamWithChildren(t *testing.T) {
	// legacy > legacy-web > legacy-web-a, and eng > eng-old: none but eng has a file. eng-old
	// and legacy-web-a are leaves: they go. legacy and legacy-web have child teams: they stay
	// (deleting legacy would delete the whole tree in one DELETE). Next run, legacy-web is a
	// leaf and goes; then legacy.
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.teamKeys = "    delete_teams: true\n"
	for _, s := range []fakegithub.TeamSpec{
		{Name: "legacy", Members: []string{"alice"}},
		{Name: "legacy-web", Parent: "legacy", Members: []string{"bob"}},
		{Name: "legacy-web-a", Parent: "legacy-web", Members: []string{"carol", "dave"}},
		{Name: "eng", Members: []string{"alice"}},
		{Name: "eng-old", Parent: "eng", Members: []string{"bob"}},
	} {
		if _, err := e.fake.AddTeam("acme", s); err != nil {
			t.Fatal(err)
		}
	}
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	deletes := func(tp []*providers.Change) map[string][]string {
		out := map[string][]string{}
		for _, c := range tp {
			if c.Kind == providers.DeleteGroup {
				out[c.Current.CN] = c.Remove
			}
		}
		return out
	}
	wantTeams := func(want ...string) {
		t.Helper()
		var got []string
		for _, ti := range e.fake.Teams("acme") {
			got = append(got, ti.Slug)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("teams %v, want %v", got, want)
		}
	}

	plan, _ := e.converge()
	d := deletes(target(plan, "github/teams").Changes)
	// The Remove list of a deletion is everything GitHub removes: the team has no child team.
	if len(d) != 2 || !slices.Equal(d["legacy-web-a"], []string{"carol", "dave"}) || !slices.Equal(d["eng-old"], []string{"bob"}) {
		t.Fatalf("first run deletes %v", d)
	}
	wantTeams("eng", "legacy", "legacy-web")

	plan, _ = e.converge()
	if d := deletes(target(plan, "github/teams").Changes); len(d) != 1 || !slices.Equal(d["legacy-web"], []string{"bob"}) {
		t.Fatalf("second run deletes %v", d)
	}
	wantTeams("eng", "legacy")
	e.converge()
	wantTeams("eng")
	e.noop()
}

func TestDeleteTeamsRechecksChildrenBeforeDeleting(t *testing.T) {
	// Between the plan and the apply, someone nests a team under the one being deleted: the
	// delete is skipped (with a warning) instead of taking the new child team with it.
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.teamKeys = "    delete_teams: true\n"
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "old", Members: []string{"bob"}})
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	reg := e.registry()
	plan := e.plan(reg)
	if got := changes(plan); len(got) != 2 {
		t.Fatalf("plan %v", got)
	}
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "new-child", Parent: "old", Members: []string{"carol"}}); err != nil {
		t.Fatal(err)
	}
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	var del *providers.Outcome
	for _, o := range outcomes(rep, "github/teams") {
		if o.Change.Kind == providers.DeleteGroup {
			del = &o
		}
	}
	if del == nil || del.Status != providers.Skipped || del.Err == nil || !strings.Contains(del.Err.Error(), "new-child") {
		t.Fatalf("delete outcome %+v", del)
	}
	for _, slug := range []string{"old", "new-child"} {
		if _, ok := e.fake.Team("acme", slug); !ok {
			t.Errorf("team %s was deleted", slug)
		}
	}
	if n := e.fake.Stats().Requests["DELETE /orgs/{org}/teams/{slug}"]; n != 0 {
		t.Errorf("%d team DELETEs sent", n)
	}
}

// ---- the org snapshot lives one plan; planned team removals are always sent ----

func TestOrgSnapshotIsReadAgainForEachPlan(t *testing.T) {
	// A long-running embedder keeps one registry. frank joins the org (outside the tool)
	// between two plans: the second plan must see him.
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(map[string]string{
		"ldap-config/github/org/admin.txt":  "username = alice\n",
		"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = frank\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = frank\n",
	})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice"}})
	reg := e.registry()
	e.fake.ResetStats()
	plan := e.plan(reg)
	// frank is invited to the org, and left out of eng (not an org member).
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "cn=member") {
		t.Fatalf("first plan %v", got)
	}
	// One org read per plan, shared by the org target and the team target.
	if n := e.fake.Stats().Requests["GET /orgs/{org}/members"]; n != 2 {
		t.Errorf("%d member list requests in one plan, want 2 (admins and members, once)", n)
	}
	e.fake.SetMember("acme", "frank", "member") // he joined meanwhile
	plan = e.plan(reg)
	if got := changes(plan); len(got) != 1 || !strings.Contains(got[0], "cn=eng") {
		t.Fatalf("second plan (same registry) %v", got)
	}
	if err := e.apply(reg, plan).Err(); err != nil {
		t.Fatal(err)
	}
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "member", "frank": "member"})
}

func TestStaleOrgSnapshotTeamRemovalIsApplied(t *testing.T) {
	// The reviewer's scenario: frank joins the org and team eng2 outside the tool after a
	// plan with the same registry. The removal is planned and really made.
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.write(map[string]string{"ldap-config/github/teams/eng2.txt": "username = alice\n"})
	reg := e.registry()
	e.plan(reg)
	e.fake.SetMember("acme", "frank", "member")
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng2", Members: []string{"alice", "frank"}})
	plan := e.plan(reg)
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if o := outcomes(rep, "github/teams"); len(o) != 1 || o[0].Status != providers.Applied {
		t.Fatalf("outcomes %v", o)
	}
	eng2, _ := e.fake.Team("acme", "eng2")
	wantMembers(t, eng2.Members, map[string]string{"alice": "member"})
}

// ---- the org member lists are checked for consistency ----

// orgOfMany gives acme 250 members u000..u249 besides seedOrg's four, all in the member file.
func orgOfMany(e *env) []string {
	seedOrg(e)
	var us []string
	var ppl, lines strings.Builder
	for _, u := range everyone {
		ppl.WriteString(u + ": {cn: " + u + "}\n")
	}
	for i := range 250 {
		u := "u" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i)
		us = append(us, u)
		e.fake.SetMember("acme", u, "member")
		ppl.WriteString(u + ": {cn: " + u + "}\n")
	}
	lines.WriteString("username = bob\nusername = carol\nusername = dave\n")
	for _, u := range us {
		if u != "u050" {
			lines.WriteString("username = " + u + "\n")
		}
	}
	e.write(map[string]string{"people.yaml": ppl.String(), "ldap-config/github/org/admin.txt": "username = alice\n",
		"ldap-config/github/org/member.txt": lines.String()})
	return us
}

func isMemberPage(r *http.Request, page string) bool {
	q := r.URL.Query()
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/orgs/acme/members") &&
		q.Get("role") == "member" && q.Get("page") == page
}

func TestOrgMembersChangingWhileReadAreReadAgain(t *testing.T) {
	// u050 leaves the org (outside the tool) just before the second page of members is
	// served: every later user slides one place back, so u100 moves from page 2 to page 1,
	// which was read already. Offset paging alone misses u100 (and still lists u050): the plan
	// would invite u100 and remove u050. The counts before and after the lists disagree, so the
	// lists are read again and the plan is empty.
	e := newEnv(t, fakegithub.Options{})
	orgOfMany(e)
	var once sync.Once
	e.fake.OnRequest(func(r *http.Request) {
		if isMemberPage(r, "2") {
			once.Do(func() { e.fake.RemoveMember("acme", "u050") })
		}
	})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	if got := changes(plan); len(got) != 0 {
		t.Fatalf("plan %v", got)
	}
	if !strings.Contains(e.log.String(), "do not add up") {
		t.Errorf("the re-read is not logged: %s", e.log.String())
	}
}

func TestOrgMembersThatKeepChangingFailTheRead(t *testing.T) {
	// Someone joins on every read of page 2: no two counts agree, and after MaxAttempts the
	// read fails; nothing is planned for the org or its teams.
	e := newEnv(t, fakegithub.Options{})
	orgOfMany(e)
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	var n atomic.Int32
	e.fake.OnRequest(func(r *http.Request) {
		if isMemberPage(r, "2") {
			e.fake.SetMember("acme", "joiner"+itoa(int(n.Add(1))), "member")
		}
	})
	plan := e.plan(e.registry())
	for _, ou := range []string{"github/org", "github/teams"} {
		tp := target(plan, ou)
		if tp.Err == nil || !strings.Contains(tp.Err.Error(), "kept changing") || len(tp.Changes) != 0 {
			t.Errorf("%s: err %v, %d changes", ou, tp.Err, len(tp.Changes))
		}
	}
}

// ---- logins and slugs are validated before they reach a REST path ----

func TestInvalidLoginsAreSkippedNeverSent(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	bad := []string{"../teams/eng", "x..y", "-dash", strings.Repeat("a", 40)}
	var ppl strings.Builder
	for _, u := range everyone {
		ppl.WriteString(u + ": {cn: " + u + "}\n")
	}
	members := "username = bob\nusername = carol\nusername = dave\n"
	for _, u := range bad {
		ppl.WriteString("'" + u + "': {cn: x}\n")
		members += "username = " + u + "\n"
	}
	e.write(map[string]string{"people.yaml": ppl.String(), "ldap-config/github/org/admin.txt": "username = alice\n",
		"ldap-config/github/org/member.txt": members})
	e.fake.ResetStats()
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	o := outcomes(rep, "github/org")
	if len(o) != 1 || o[0].Status != providers.Skipped || o[0].Err == nil {
		t.Fatalf("outcomes %v", o)
	}
	for _, u := range bad {
		if !strings.Contains(o[0].Err.Error(), u) || !strings.Contains(o[0].Err.Error(), "not a valid GitHub login") {
			t.Errorf("%q not reported: %v", u, o[0].Err)
		}
	}
	if st := e.fake.Stats(); st.Writes != 0 {
		t.Fatalf("%d writes sent: %v", st.Writes, st.Requests)
	}
}

func TestInvalidOrgNameIsRefusedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.write(orgFiles)
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\n"})
	e.orgName = "acme/../../user"
	plan := e.plan(e.registry())
	for _, ou := range []string{"github/org", "github/teams"} {
		if tp := target(plan, ou); tp.Err == nil || !strings.Contains(tp.Err.Error(), "not a GitHub organization name") {
			t.Fatalf("%s: error %v", ou, tp.Err)
		}
	}
	if st := e.fake.Stats(); st.REST+st.GraphQL != 0 {
		t.Fatalf("requests sent: %v", st.Requests)
	}
}

// ---- one transport per host:port ----

func TestGraphQLURLSharesTheHostTransport(t *testing.T) {
	// The team OU names its own graphql_url on the API host: it must share the org OU's
	// transport (one pool of PoolSize connections), not open a second pool.
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.write(teamFiles())
	e.teamKeys = "    graphql_url: " + e.fake.URL() + "/api/graphql\n"
	e.opt.PoolSize, e.opt.ReadConcurrency, e.opt.WriteConcurrency = 1, 1, 1
	e.fake.ResetStats()
	reg := e.registry()
	if err := e.apply(reg, e.plan(reg)).Err(); err != nil {
		t.Fatal(err)
	}
	st := e.fake.Stats()
	if st.Requests["POST /graphql"] == 0 {
		t.Fatal("no GraphQL request")
	}
	if c := reg.Counters(); st.Connections != 1 || c["connections_opened"] != 1 {
		t.Fatalf("connections: fake %d, counted %d; want 1 (pool 1)", st.Connections, c["connections_opened"])
	}
}

// ---- every write is logged ----

func TestEveryWriteIsLogged(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.SetMember("acme", "frank", "member")
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "bob", "carol"}})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "old", Members: []string{"dave"}})
	e.teamKeys = "    delete_teams: true\n"
	e.write(map[string]string{
		"ldap-config/github/org/admin.txt":  "username = alice\nusername = bob\n",
		"ldap-config/github/org/member.txt": "username = carol\nusername = dave\nusername = erin\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = bob\nusername = dave\nmetadata_team_maintainers = dave\n",
		// eng-parent does not exist: it is created on demand.
		"ldap-config/github/teams/web.txt": "username = carol\nmetadata_parent_team_name = eng-parent\n",
	})
	e.converge()
	log := e.log.String()
	for _, want := range [][]string{
		{`msg="set org membership"`, "user=bob", "role=admin", "status=applied"},
		{`msg="invited to the org`, "user=erin", "role=member"},
		{`msg="removed org membership"`, "user=frank", "org=acme"},
		{`msg="created team"`, "team=eng-parent"},
		{`msg="created team"`, "team=web", "parent_id="},
		{`msg="set team membership"`, "team=web", "user=carol", "role=member"},
		{`msg="set team membership"`, "team=eng", "user=dave", "role=maintainer"},
		{`msg="removed team membership"`, "team=eng", "user=carol"},
		{`msg="deleted team"`, "team=old", "members=dave"},
	} {
		if !hasLine(log, append([]string{"level=INFO"}, want...)...) {
			t.Errorf("no info line with %v in:\n%s", want, log)
		}
	}
	// A team patch is logged with what changed.
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "solo", Members: []string{"carol"}, Privacy: "secret"})
	e.write(map[string]string{"ldap-config/github/teams/solo.txt": "username = carol\nmetadata_parent_team_name = eng\n"})
	e.converge()
	if log := e.log.String(); !hasLine(log, "level=INFO", `msg="changed team"`, "team=solo", "parent=eng", "privacy=closed", "status=applied") {
		t.Errorf("no patch line in:\n%s", log)
	}
}

// hasLine reports whether one line of log holds every string of want.
func hasLine(log string, want ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			return true
		}
	}
	return false
}
