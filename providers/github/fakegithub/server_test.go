package fakegithub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// newServer starts a fake that validates GraphQL against GitHub's published schema (when
// ../shared is there; see TestSchema).
func newServer(t *testing.T, opt Options) *Server {
	t.Helper()
	opt.Schema = TestSchema(t)
	s := New(opt)
	t.Cleanup(s.Close)
	return s
}

func client(t *testing.T, s *Server, enterprise bool) *gh.Client {
	t.Helper()
	c := gh.NewClient(s.Client()).WithAuthToken("tok")
	if enterprise {
		var err error
		if c, err = c.WithEnterpriseURLs(s.APIURL(), s.APIURL()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c.BaseURL, _ = c.BaseURL.Parse(s.URL() + "/")
	return c
}

func gql(t *testing.T, s *Server, query string, vars map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/graphql", bytes.NewReader(b))
	req.Header.Set("Authorization", "bearer tok")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRESTWithGoGitHub(t *testing.T) {
	ctx := context.Background()
	for _, enterprise := range []bool{false, true} {
		s := newServer(t, Options{})
		c := client(t, s, enterprise)
		for i := range 150 {
			s.SetMember("acme", fmt.Sprintf("user%03d", i), "member")
		}
		s.SetMember("acme", "Boss", "admin")
		var all []*gh.User
		opt := &gh.ListMembersOptions{Role: "member", ListOptions: gh.ListOptions{PerPage: 100}}
		for {
			us, resp, err := c.Organizations.ListMembers(ctx, "acme", opt)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, us...)
			if resp.NextPage == 0 {
				break
			}
			opt.Page = resp.NextPage
		}
		if len(all) != 150 {
			t.Fatalf("listed %d members, want 150", len(all))
		}
		role := "admin"
		m, _, err := c.Organizations.EditOrgMembership(ctx, "newbie", "acme", &gh.Membership{Role: &role})
		if httpStatus(err) != 404 {
			t.Fatalf("unknown user: %v %v", m, err)
		}
		s.AddUsers("newbie")
		m, _, err = c.Organizations.EditOrgMembership(ctx, "newbie", "acme", &gh.Membership{Role: &role})
		if err != nil || m.GetState() != "pending" || m.GetRole() != "admin" {
			t.Fatalf("invite: %v %v", m, err)
		}
		closed := "closed"
		tm, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "Core Eng", Privacy: &closed})
		if err != nil || tm.GetSlug() != "core-eng" {
			t.Fatalf("create: %v %v", tm, err)
		}
		if _, _, err = c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "core eng"}); httpStatus(err) != 422 {
			t.Fatalf("duplicate create: %v", err)
		}
		id := tm.GetID()
		child, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "kid", ParentTeamID: &id})
		if err != nil || child.GetPrivacy() != "closed" || child.GetParent().GetSlug() != "core-eng" {
			t.Fatalf("child: %v %v", child, err)
		}
		if m, _, err := c.Teams.AddTeamMembershipBySlug(ctx, "acme", "kid", "newbie", nil); err != nil || m.GetState() != "pending" {
			t.Fatalf("invited user added to team: %v %v", m, err)
		}
		tmm, _, err := c.Teams.AddTeamMembershipBySlug(ctx, "acme", "kid", "boss", &gh.TeamAddTeamMembershipOptions{Role: "maintainer"})
		if err != nil || tmm.GetRole() != "maintainer" {
			t.Fatalf("add: %v %v", tmm, err)
		}
		if _, _, err := c.Teams.EditTeamBySlug(ctx, "acme", "kid", gh.NewTeam{Name: "kid"}, true); err != nil {
			t.Fatal(err)
		}
		if ti, _ := s.Team("acme", "kid"); ti.Parent != "" || ti.Members["Boss"] != "maintainer" {
			t.Fatalf("after edit: %+v", ti)
		}
		if _, err := c.Organizations.RemoveOrgMembership(ctx, "boss", "acme"); err != nil {
			t.Fatal(err)
		}
		if ti, _ := s.Team("acme", "kid"); len(ti.Members) != 0 {
			t.Fatalf("org removal kept team membership: %+v", ti)
		}
		st := s.Stats()
		if st.Connections < 1 || st.Connections > 2 || st.Writes != 9 {
			t.Fatalf("stats %+v", st)
		}
	}
}

func httpStatus(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		return er.Response.StatusCode
	}
	return 0
}

func itoa(i int) string { return fmt.Sprintf("%03d", i) }

func TestGraphQLAliasesAndPages(t *testing.T) {
	s := newServer(t, Options{})
	var members []string
	for i := range 130 {
		members = append(members, "m"+itoa(i))
		s.SetMember("acme", "m"+itoa(i), "member")
	}
	if _, err := s.AddTeam("acme", TeamSpec{Name: "big", Members: members, Maintainers: []string{"m000"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTeam("acme", TeamSpec{Name: "small-one", Parent: "big", Members: []string{"m001"}}); err != nil {
		t.Fatal(err)
	}
	q := `query($org: String!, $s0: String!, $s1: String!, $s2: String!) { organization(login: $org) {
	  t0: team(slug: $s0) { databaseId slug parentTeam { slug } members(first: 100, membership: IMMEDIATE) { edges { role node { login } } pageInfo { hasNextPage endCursor } } }
	  t1: team(slug: $s1) { slug parentTeam { slug databaseId } members(first: 100, membership: IMMEDIATE) { edges { role node { login } } pageInfo { hasNextPage endCursor } } }
	  t2: team(slug: $s2) { slug }
	} }`
	out := gql(t, s, q, map[string]any{"org": "acme", "s0": "big", "s1": "small-one", "s2": "nope"})
	if out["errors"] != nil {
		t.Fatalf("errors: %v", out["errors"])
	}
	org := out["data"].(map[string]any)["organization"].(map[string]any)
	t0 := org["t0"].(map[string]any)
	mem := t0["members"].(map[string]any)
	if len(mem["edges"].([]any)) != 100 || !mem["pageInfo"].(map[string]any)["hasNextPage"].(bool) {
		t.Fatalf("first page %v", mem["pageInfo"])
	}
	if org["t2"] != nil || org["t1"].(map[string]any)["parentTeam"].(map[string]any)["slug"] != "big" {
		t.Fatalf("t1/t2: %v %v", org["t1"], org["t2"])
	}
	cur := mem["pageInfo"].(map[string]any)["endCursor"].(string)
	out = gql(t, s, `query($org: String!, $s0: String!, $c0: String!) { organization(login: $org) {
	  t0: team(slug: $s0) { members(first: 100, after: $c0, membership: IMMEDIATE) { edges { role node { login } } pageInfo { hasNextPage endCursor } } } } }`,
		map[string]any{"org": "acme", "s0": "big", "c0": cur})
	mem = out["data"].(map[string]any)["organization"].(map[string]any)["t0"].(map[string]any)["members"].(map[string]any)
	if len(mem["edges"].([]any)) != 30 || mem["pageInfo"].(map[string]any)["hasNextPage"].(bool) {
		t.Fatalf("second page %v", mem)
	}
	st := s.Stats()
	if st.GraphQLTeamDocs != 2 || st.TeamAliases != 4 || st.MaxTeamAliases != 3 {
		t.Fatalf("stats %+v", st)
	}

	// Strictness, in GitHub's words: undeclared and unused variables, unknown fields and
	// arguments, missing selections, first > 100 (an execution error), unknown fragments.
	for _, bad := range []struct{ q, want string }{
		{`query { organization(login: $org) { login } }`, "Variable $org is used by anonymous query but not declared"},
		{`query($org: String!, $x: String) { organization(login: $org) { login } }`, "Variable $x is declared by anonymous query but not used"},
		{`query($org: String!) { organization(login: $org) { nope } }`, "Field 'nope' doesn't exist on type 'Organization'"},
		{`query($org: String!) { organization(login: $org) { team(slug: "big", name: "x") { slug } } }`, "Field 'team' doesn't accept argument 'name'"},
		{`query($org: String!) { organization(login: $org) { team { slug } } }`, "Field 'team' is missing required arguments: slug"},
		{`query($org: String!) { organization(login: $org) { team(slug: "big") { parentTeam } } }`, "Field must have selections (field 'parentTeam' returns Team"},
		{`query($org: String!) { organization(login: $org) { login { x } } }`, "Selections can't be made on scalars (field 'login' returns String! but has selections [x])"},
		{`query($org: String!) { organization(login: $org) { team(slug: "big") { members(first: 101) { totalCount } } } }`, "exceeds"},
		{`query($org: String!) { organization(login: $org) { ...F } }`, `Unknown fragment \"F\"`},
	} {
		if s.opt.Schema == nil && !strings.Contains(bad.want, "exceeds") {
			continue // checked only against the published schema
		}
		out := gql(t, s, bad.q, map[string]any{"org": "acme"})
		b, _ := json.Marshal(out["errors"])
		if !strings.Contains(string(b), bad.want) {
			t.Errorf("%s: errors %s, want %q", bad.q, b, bad.want)
		}
	}

	// Per-alias failure.
	s.FailTeamAlias("acme", "big", 1)
	out = gql(t, s, `query($org: String!, $a: String!, $b: String!) { organization(login: $org) { x: team(slug: $a) { slug } y: team(slug: $b) { slug } } }`,
		map[string]any{"org": "acme", "a": "big", "b": "small-one"})
	errs := out["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["path"].([]any)[1] != "x" {
		t.Fatalf("alias errors %v", errs)
	}
	if out["data"].(map[string]any)["organization"].(map[string]any)["y"] == nil {
		t.Fatal("other alias lost")
	}
}

func TestOrgMembersGraphQL(t *testing.T) {
	s := newServer(t, Options{})
	s.SetMember("acme", "Alice", "admin")
	s.SetMember("acme", "bob", "member")
	s.Invite("acme", "carol", "member")
	out := gql(t, s, `query($org: String!) { organization(login: $org) {
	  membersWithRole(first: 100) { edges { role node { login } } pageInfo { hasNextPage endCursor } }
	  pendingMembers(first: 100) { nodes { login } pageInfo { hasNextPage } } } }`, map[string]any{"org": "acme"})
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `{"node":{"login":"Alice"},"role":"ADMIN"}`) || !strings.Contains(string(b), `"nodes":[{"login":"carol"}]`) {
		t.Fatalf("answer %s", b)
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Options{MaxHang: 2 * time.Second})
	s.AddOrg("acme")
	c := client(t, s, false)
	s.AddFault(Fault{Method: "POST", Path: "/orgs/acme/teams", Kind: TooManyRequests, RetryAfter: 3 * time.Second, Times: 1})
	_, resp, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "x"})
	if err == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("429: %v", err)
	}
	s.AddFault(Fault{Path: "/orgs/*/teams/*", Kind: SecondaryLimit, RetryAfter: time.Second, Times: 1})
	if _, _, err := c.Teams.GetTeamBySlug(ctx, "acme", "x"); !isAbuse(err) {
		t.Fatalf("secondary: %T %v", err, err)
	}
	// A lost answer: the team is created, the connection dropped. (A new client: go-github
	// refuses requests by itself for a while after a secondary limit.)
	c = client(t, s, false)
	s.AddFault(Fault{Method: "POST", Path: "/orgs/acme/teams", Kind: Reset, After: true, Times: 1})
	if _, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "lost"}); err == nil {
		t.Fatal("reset: no error")
	}
	if _, ok := s.Team("acme", "lost"); !ok {
		t.Fatal("the write behind the reset did not happen")
	}
	// Hang until the client gives up.
	s.AddFault(Fault{Path: "/meta", Kind: Hang, Times: 1})
	hctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := c.Meta.Get(hctx); err == nil || time.Since(start) > time.Second {
		t.Fatalf("hang: %v after %s", err, time.Since(start))
	}
	if st := s.Stats(); st.Faults != 4 {
		t.Fatalf("faults %d", st.Faults)
	}
	// No token.
	resp2, err := http.Get(s.URL() + "/meta")
	if err != nil || resp2.StatusCode != 401 {
		t.Fatalf("no token: %v %v", resp2, err)
	}
	resp2.Body.Close()
}

func isAbuse(err error) bool {
	var ab *gh.AbuseRateLimitError
	return errors.As(err, &ab)
}

func TestChildTeamsHookAndRemoveMember(t *testing.T) {
	s := newServer(t, Options{Token: "tok"})
	s.SetMember("acme", "alice", "member")
	s.AddTeam("acme", TeamSpec{Name: "eng", Members: []string{"alice"}})
	s.AddTeam("acme", TeamSpec{Name: "eng-web", Parent: "eng"})
	s.AddTeam("acme", TeamSpec{Name: "eng-web-a", Parent: "eng-web"})
	var seen []string
	s.OnRequest(func(r *http.Request) { seen = append(seen, r.Method+" "+r.URL.Path) })
	c := client(t, s, false)
	ctx := context.Background()
	kids, _, err := c.Teams.ListChildTeamsByParentSlug(ctx, "acme", "eng", nil)
	if err != nil || len(kids) != 1 || kids[0].GetSlug() != "eng-web" || kids[0].GetParent().GetSlug() != "eng" {
		t.Fatalf("children %v %v", kids, err)
	}
	if _, _, err := c.Teams.ListChildTeamsByParentSlug(ctx, "acme", "nope", nil); err == nil {
		t.Fatal("children of a missing team")
	}
	if len(seen) != 2 || seen[0] != "GET /orgs/acme/teams/eng/teams" {
		t.Fatalf("hook saw %v", seen)
	}
	if st := s.Stats(); st.Requests["GET /orgs/{org}/teams/{slug}/teams"] != 2 {
		t.Fatalf("requests %v", st.Requests)
	}
	s.RemoveMember("acme", "alice")
	if _, ok := s.Members("acme")["alice"]; ok {
		t.Fatal("alice still a member")
	}
	if eng, _ := s.Team("acme", "eng"); len(eng.Members) != 0 {
		t.Fatalf("alice still in eng: %v", eng.Members)
	}
}

// TestInventedFieldAnswersLikeGitHub: a document with a field the published schema does not
// have is answered as GitHub answers it: HTTP 200, no data, an error with GitHub's message,
// extensions.code undefinedField, the path from the operation, and the location.
func TestInventedFieldAnswersLikeGitHub(t *testing.T) {
	s := newServer(t, Options{})
	if s.opt.Schema == nil {
		t.Skip("GitHub's published schema is not available (see TestSchema)")
	}
	s.AddOrg("acme")
	b, _ := json.Marshal(map[string]any{"query": "query($org: String!) {\n  organization(login: $org) { login inventedField }\n}",
		"variables": map[string]any{"org": "acme"}})
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/graphql", bytes.NewReader(b))
	req.Header.Set("Authorization", "bearer tok")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, GitHub answers 200", resp.StatusCode)
	}
	if _, ok := out["data"]; ok {
		t.Errorf("an invalid document has no data: %v", out)
	}
	got, _ := json.Marshal(out["errors"])
	want := `[{"extensions":{"code":"undefinedField","fieldName":"inventedField","typeName":"Organization"},` +
		`"locations":[{"column":37,"line":2}],"message":"Field 'inventedField' doesn't exist on type 'Organization'",` +
		`"path":["query","organization","inventedField"]}]`
	if string(got) != want {
		t.Errorf("errors\n%s\nwant\n%s", got, want)
	}
	if st := s.Stats(); st.GraphQLOrgDocs != 0 || st.GraphQL != 1 {
		t.Errorf("an invalid document was executed: %+v", st)
	}
}

// TestVariablesAreCheckedAgainstTheirTypes: a variable of the wrong type (or a missing
// required one) is refused before execution, as GitHub does.
func TestVariablesAreCheckedAgainstTheirTypes(t *testing.T) {
	s := newServer(t, Options{})
	if s.opt.Schema == nil {
		t.Skip("GitHub's published schema is not available (see TestSchema)")
	}
	s.AddOrg("acme")
	for _, vars := range []map[string]any{{"org": 12}, {}, {"org": nil}} {
		out := gql(t, s, `query($org: String!) { organization(login: $org) { login } }`, vars)
		b, _ := json.Marshal(out["errors"])
		if !strings.Contains(string(b), "Variable $org of type String! was provided invalid value") || out["data"] != nil {
			t.Errorf("vars %v: %s", vars, b)
		}
	}
	out := gql(t, s, `query($org: String!, $n: Int!) { organization(login: $org) { teams(first: $n) { totalCount } } }`,
		map[string]any{"org": "acme", "n": 5})
	if out["errors"] != nil {
		t.Errorf("valid variables refused: %v", out["errors"])
	}
}

// TestSchemaLoadsWithDuplicatesDropped: the published file defines two fields twice; the
// loader drops the second definitions and the schema is otherwise complete.
func TestSchemaLoadsWithDuplicatesDropped(t *testing.T) {
	sc := TestSchema(t)
	if sc == nil {
		t.Skip("GitHub's published schema is not available")
	}
	def := sc.s.Types["EnterpriseOwnerInfo"]
	n := 0
	for _, f := range def.Fields {
		if f.Name == "repositoryDeployKeySetting" {
			n++
		}
	}
	if n != 1 || sc.s.Types["Team"].Fields.ForName("invitations") == nil {
		t.Fatalf("repositoryDeployKeySetting defined %d times; Team.invitations %v", n, sc.s.Types["Team"].Fields.ForName("invitations"))
	}
	if _, err := FindSchemaFile(t.TempDir()); !errors.Is(err, ErrNoSchema) {
		t.Errorf("outside a module: %v, want ErrNoSchema", err)
	}
}

// TestTokensAndTeamCreators: a user token sees itself as viewer and becomes the maintainer of
// the teams it creates; an app installation token's viewer is its bot, GET /user answers 403,
// and its teams start empty.
func TestTokensAndTeamCreators(t *testing.T) {
	ctx := context.Background()
	for _, user := range []string{"", "Alice"} {
		s := newServer(t, Options{TokenUser: user, AppSlug: "ent"})
		s.SetMember("acme", "Alice", "admin")
		c := client(t, s, false)
		out := gql(t, s, `query { viewer { login } }`, nil)
		b, _ := json.Marshal(out["data"])
		wantViewer := map[string]string{"": `{"viewer":{"login":"ent[bot]"}}`, "Alice": `{"viewer":{"login":"Alice"}}`}[user]
		if string(b) != wantViewer {
			t.Errorf("token %q: viewer %s", user, b)
		}
		u, _, err := c.Users.Get(ctx, "")
		if user == "" && httpStatus(err) != http.StatusForbidden || user != "" && u.GetLogin() != "Alice" {
			t.Errorf("token %q: GET /user %v %v", user, u, err)
		}
		if _, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "eng"}); err != nil {
			t.Fatal(err)
		}
		ti, _ := s.Team("acme", "eng")
		want := map[string]string{}
		if user != "" {
			want["Alice"] = "maintainer"
		}
		if fmt.Sprint(ti.Members) != fmt.Sprint(want) {
			t.Errorf("token %q: creator membership %v, want %v", user, ti.Members, want)
		}
	}
}

// TestSecretTeamsCannotBeParents: GitHub refuses to nest under a secret team, and to make a
// parent secret.
func TestSecretTeamsCannotBeParents(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Options{})
	s.AddOrg("acme")
	c := client(t, s, false)
	secret, closed := "secret", "closed"
	vault, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "vault", Privacy: &secret})
	if err != nil {
		t.Fatal(err)
	}
	id := vault.GetID()
	if _, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "kid", ParentTeamID: &id}); httpStatus(err) != 422 {
		t.Fatalf("child of a secret team: %v", err)
	}
	if _, _, err := c.Teams.EditTeamBySlug(ctx, "acme", "vault", gh.NewTeam{Name: "vault", Privacy: &closed}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.CreateTeam(ctx, "acme", gh.NewTeam{Name: "kid", ParentTeamID: &id}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Teams.EditTeamBySlug(ctx, "acme", "vault", gh.NewTeam{Name: "vault", Privacy: &secret}, false); httpStatus(err) != 422 {
		t.Fatalf("parent made secret: %v", err)
	}
}

// TestPendingTeamMembershipAndInvitationLimits: adding a non-member to a team invites them
// to the org for that team (pending; they join on accepting); invitations stop at the
// 24-hour limit with a 422, and a user who blocked the org cannot be invited.
func TestPendingTeamMembershipAndInvitationLimits(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newServer(t, Options{InvitationLimit: 2, Now: func() time.Time { return now }})
	s.AddUsers("erin", "frank", "gina", "zed")
	s.SetMember("acme", "boss", "admin")
	s.AddTeam("acme", TeamSpec{Name: "eng"})
	s.Block("acme", "zed")
	c := client(t, s, false)
	m, _, err := c.Teams.AddTeamMembershipBySlug(ctx, "acme", "eng", "erin", &gh.TeamAddTeamMembershipOptions{Role: "maintainer"})
	if err != nil || m.GetState() != "pending" {
		t.Fatalf("team add of a non-member: %v %v", m, err)
	}
	if s.Pending("acme")["erin"] != "member" || s.TeamInvitations("acme", "eng")["erin"] != "maintainer" {
		t.Fatalf("pending %v, team invitations %v", s.Pending("acme"), s.TeamInvitations("acme", "eng"))
	}
	out := gql(t, s, `query($org: String!) { organization(login: $org) { team(slug: "eng") {
	  members(first: 10) { totalCount } invitations(first: 10) { nodes { invitee { login } role } } } pendingMembers(first: 10) { nodes { login } } } }`,
		map[string]any{"org": "acme"})
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"invitations":{"nodes":[{"invitee":{"login":"erin"},"role":"DIRECT_MEMBER"}]}`) ||
		!strings.Contains(string(b), `"members":{"totalCount":0}`) || !strings.Contains(string(b), `"pendingMembers":{"nodes":[{"login":"erin"}]}`) {
		t.Fatalf("GraphQL %s", b)
	}
	member := "member"
	if _, _, err := c.Organizations.EditOrgMembership(ctx, "zed", "acme", &gh.Membership{Role: &member}); httpStatus(err) != 422 {
		t.Fatalf("blocked user invited: %v", err)
	}
	if _, _, err := c.Organizations.EditOrgMembership(ctx, "frank", "acme", &gh.Membership{Role: &member}); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Organizations.EditOrgMembership(ctx, "gina", "acme", &gh.Membership{Role: &member})
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != 422 || len(er.Errors) != 1 || er.Errors[0].Message != "Over invitation rate limit" {
		t.Fatalf("third invitation: %v", err)
	}
	// Changing a pending invitation's role is not a new invitation.
	admin := "admin"
	if m, _, err := c.Organizations.EditOrgMembership(ctx, "frank", "acme", &gh.Membership{Role: &admin}); err != nil || m.GetState() != "pending" {
		t.Fatalf("role of a pending invitation: %v %v", m, err)
	}
	now = now.Add(25 * time.Hour)
	if _, _, err := c.Organizations.EditOrgMembership(ctx, "gina", "acme", &gh.Membership{Role: &member}); err != nil {
		t.Fatalf("a day later: %v", err)
	}
	s.Accept("acme", "erin")
	if ti, _ := s.Team("acme", "eng"); ti.Members["erin"] != "maintainer" {
		t.Fatalf("after accepting: %v", ti.Members)
	}
}

// recorder is a testing.TB that records what a helper says instead of failing.
type recorder struct {
	testing.TB
	logs, fatals []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(f string, a ...any)   { r.logs = append(r.logs, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatals = append(r.fatals, fmt.Sprintf(f, a...)) }

// TestMissingSchemaSkipsOutsideCIAndFailsInCI: without ../shared the fake does not validate
// and the test says so; under CI=true the same absence fails the test.
func TestMissingSchemaSkipsOutsideCIAndFailsInCI(t *testing.T) {
	dir := t.TempDir()
	load := func() (*Schema, error) { _, err := FindSchemaFile(dir); return nil, err }
	r := &recorder{TB: t}
	if s := schemaForTest(r, load, false); s != nil || len(r.fatals) != 0 || len(r.logs) != 1 || !strings.Contains(r.logs[0], "skipping") {
		t.Errorf("outside CI: schema %v, logs %q, fatals %q", s, r.logs, r.fatals)
	}
	r = &recorder{TB: t}
	if schemaForTest(r, load, true); len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "not found") {
		t.Errorf("under CI: logs %q, fatals %q", r.logs, r.fatals)
	}
}

// Each layout answers only the paths its kind of host serves; the others are 404 and counted.
func TestLayouts(t *testing.T) {
	paths := []string{"/meta", "/graphql", "/api/v3/meta", "/api/graphql", "/api/v3/graphql"}
	for _, tc := range []struct {
		layout Layout
		served []bool // per path above
	}{
		{AnyLayout, []bool{true, true, true, true, true}},
		{RootLayout, []bool{true, true, false, false, false}},
		{EnterpriseLayout, []bool{false, false, true, true, false}},
	} {
		s := newServer(t, Options{Layout: tc.layout})
		for i, p := range paths {
			method, body := http.MethodGet, ""
			if strings.HasSuffix(p, "graphql") {
				method, body = http.MethodPost, `{"query":"{ viewer { login } }"}`
			}
			req, _ := http.NewRequest(method, s.URL()+p, strings.NewReader(body))
			req.Header.Set("Authorization", "bearer tok")
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.StatusCode == http.StatusOK; got != tc.served[i] {
				t.Errorf("layout %d: %s %s answered %d, want served=%v", tc.layout, method, p, resp.StatusCode, tc.served[i])
			}
		}
		want := 0
		for _, ok := range tc.served {
			if !ok {
				want++
			}
		}
		if n := s.Stats().NotServed; n != want {
			t.Errorf("layout %d: NotServed %d, want %d", tc.layout, n, want)
		}
	}
}

// RejectMixedCaseLogins refuses membership writes whose login has upper-case letters, as the
// Ruby plugin's acceptance fake does; reads and lower-case writes go through.
func TestRejectMixedCaseLogins(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Options{RejectMixedCaseLogins: true, AutoAccept: true})
	s.AddUsers("DonSkoy")
	s.AddOrg("meowsister")
	if _, err := s.AddTeam("meowsister", TeamSpec{Name: "employees"}); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, false)
	member := "member"
	if _, resp, err := c.Organizations.EditOrgMembership(ctx, "DONSKoy", "meowsister", &gh.Membership{Role: &member}); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("mixed-case org PUT: %v", err)
	}
	if resp, err := c.Teams.RemoveTeamMembershipBySlug(ctx, "meowsister", "employees", "DonSkoy"); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("mixed-case team DELETE: %v", err)
	}
	if _, _, err := c.Organizations.EditOrgMembership(ctx, "donskoy", "meowsister", &gh.Membership{Role: &member}); err != nil {
		t.Fatalf("lower-case org PUT: %v", err)
	}
	if _, _, err := c.Teams.AddTeamMembershipBySlug(ctx, "meowsister", "employees", "donskoy", nil); err != nil {
		t.Fatalf("lower-case team PUT: %v", err)
	}
	if st := s.Stats(); st.RejectedLogins != 2 {
		t.Errorf("RejectedLogins %d, want 2", st.RejectedLogins)
	}
	if m := s.Members("meowsister"); m["DonSkoy"] != "member" {
		t.Errorf("members %v", m)
	}
}

// With TLS the Link header of a paged list stays on https.
func TestTLSLinks(t *testing.T) {
	s := newServer(t, Options{TLS: true})
	for i := range 3 {
		s.SetMember("acme", fmt.Sprintf("u%d", i), "member")
	}
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL %s", s.URL())
	}
	_, resp, err := client(t, s, false).Organizations.ListMembers(context.Background(), "acme",
		&gh.ListMembersOptions{ListOptions: gh.ListOptions{PerPage: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if l := resp.Header.Get("Link"); !strings.Contains(l, "<https://") {
		t.Errorf("Link %s", l)
	}
}

// With SecondaryLimits, the 81st content-creating request in a minute and the 501st in an hour
// are refused with GitHub's secondary-limit 403 (no retry-after) and not performed; reads are
// never refused; the windows slide on the server's clock.
func TestSecondaryLimits(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		step   time.Duration // clock advance between writes
		ok     int           // writes accepted before the first refusal
		reopen time.Duration // wait after which one more is accepted
	}{
		{"minute", 0, 80, time.Minute},
		{"hour", 7 * time.Second, 500, 7 * time.Second}, // 500 at 8.6/min: the hour fills first; the oldest leaves 1 h after it was sent
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			clk := now
			s := newServer(t, Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clk }, SecondaryLimits: true, RateLimit: 100000})
			set := func(t time.Time) { mu.Lock(); clk = t; mu.Unlock() }
			s.AddOrg("acme")
			s.AddUsers("alice")
			ctx := context.Background()
			// A new client per request: go-github remembers a secondary limit and would refuse
			// later requests itself, by the wall clock.
			put := func() error {
				_, _, err := client(t, s, false).Organizations.EditOrgMembership(ctx, "alice", "acme", &gh.Membership{Role: gh.String("member")})
				return err
			}
			c := client(t, s, false)
			first := clk
			n := 0
			for ; n < 1000; n++ {
				if err := put(); err != nil {
					var ab *gh.AbuseRateLimitError
					if !errors.As(err, &ab) || ab.Response.Header.Get("Retry-After") != "" || !strings.Contains(ab.Message, "secondary rate limit") {
						t.Fatalf("refusal %v, want a secondary limit without retry-after", err)
					}
					break
				}
				set(clk.Add(tc.step))
			}
			if n != tc.ok {
				t.Fatalf("%d writes accepted, want %d", n, tc.ok)
			}
			if _, _, err := c.Organizations.GetOrgMembership(ctx, "alice", "acme"); err != nil {
				t.Fatalf("a read was refused: %v", err)
			}
			if st := s.Stats(); st.SecondaryLimitHits != 1 || st.Writes != tc.ok+1 {
				t.Fatalf("hits %d writes %d", st.SecondaryLimitHits, st.Writes)
			}
			if tc.name == "hour" {
				set(first.Add(time.Hour - time.Nanosecond))
				if put() == nil {
					t.Fatal("accepted before the oldest write left the hour")
				}
				set(first.Add(time.Hour))
			} else {
				set(clk.Add(tc.reopen))
			}
			if err := put(); err != nil {
				t.Fatalf("still refused once the window slid: %v", err)
			}
		})
	}
}

// SetSecondaryLimits switches the limits at run time: writes made while they are off are
// neither refused nor counted in the windows, so a benchmark can set its state up fast and
// then measure against the limits from empty windows.
func TestSetSecondaryLimits(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newServer(t, Options{Now: func() time.Time { return now }, RateLimit: 100000})
	s.AddOrg("acme")
	s.AddUsers("alice")
	put := func() error {
		_, _, err := client(t, s, false).Organizations.EditOrgMembership(context.Background(), "alice", "acme", &gh.Membership{Role: gh.String("member")})
		return err
	}
	writes := func(n int) int {
		ok := 0
		for range n {
			if put() == nil {
				ok++
			}
		}
		return ok
	}
	for _, step := range []struct {
		on     bool
		writes int
		ok     int
	}{
		{false, 100, 100}, // off: nothing refused
		{true, 81, 80},    // on: a fresh minute window of 80
		{false, 10, 10},   // off again
		{true, 1, 1},      // on again: the windows start empty
	} {
		s.SetSecondaryLimits(step.on)
		if got := writes(step.writes); got != step.ok {
			t.Fatalf("limits %v: %d of %d writes accepted, want %d", step.on, got, step.writes, step.ok)
		}
	}
	if st := s.Stats(); st.SecondaryLimitHits != 1 {
		t.Fatalf("%d secondary limits hit, want 1", st.SecondaryLimitHits)
	}
}
