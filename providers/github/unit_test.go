package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{"-5", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
	} {
		h := http.Header{}
		if tc.v != "" {
			h.Set("Retry-After", tc.v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("Retry-After %q: %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestRateLimitedClassification(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := NewRegistry(Options{Now: func() time.Time { return now }})
	s := &session{h: &host{reg: r}}
	for _, tc := range []struct {
		name   string
		status int
		hdr    map[string]string
		body   string
		kind   string
		wait   time.Duration
	}{
		{"permission denied is not a limit", 403, nil, `{"message":"Must have admin rights"}`, "", 0},
		{"primary", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000100"}, `{}`, "primary", 101 * time.Second},
		{"secondary with Retry-After", 403, map[string]string{"Retry-After": "7"},
			`{"message":"You have exceeded a secondary rate limit"}`, "secondary", 7 * time.Second},
		{"secondary without Retry-After", 403, nil,
			`{"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, "secondary", time.Minute},
		{"429 with Retry-After", 429, map[string]string{"Retry-After": "3"}, ``, "429", 3 * time.Second},
		{"429 without headers", 429, nil, ``, "429", time.Second},
		{"500 is not a limit", 500, nil, ``, "", 0},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
		for k, v := range tc.hdr {
			resp.Header.Set(k, v)
		}
		kind, wait, _ := s.rateLimited(resp)
		if kind != tc.kind || wait != tc.wait {
			t.Errorf("%s: kind %q wait %s, want %q %s", tc.name, kind, wait, tc.kind, tc.wait)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != tc.body {
			t.Errorf("%s: body not restored: %q", tc.name, b)
		}
	}
}

func TestDeriveGraphQLURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/":              "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3/":      "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:8080/":               "http://127.0.0.1:8080/graphql",
		"https://proxy.example.com/github/v3/": "https://proxy.example.com/github/v3/graphql",
	} {
		u, _ := url.Parse(in)
		if got := deriveGraphQLURL(u); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	r := NewRegistry(Options{})
	// addr is the API root as written (the Ruby plugin's Octokit api_endpoint).
	for _, tc := range []struct{ addr, rest, graphql string }{
		{"https://github.fake", "https://github.fake/", "https://github.fake/graphql"},
		{"https://github.fake/", "https://github.fake/", "https://github.fake/graphql"},
		{"https://api.github.com", "https://api.github.com/", "https://api.github.com/graphql"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql"},
		{"https://proxy.example.com/github", "https://proxy.example.com/github/", "https://proxy.example.com/github/graphql"},
	} {
		h, err := r.hostFor(tc.addr, "")
		if err != nil || h.restBase.String() != tc.rest || h.graphqlURL != tc.graphql || !h.checkMeta {
			t.Errorf("addr %s: REST %v GraphQL %v (%v); want %s %s", tc.addr, h.restBase, h.graphqlURL, err, tc.rest, tc.graphql)
		}
	}
	for _, bad := range []string{"ghe.example.com", "ftp://ghe.example.com", "https://"} {
		if _, err := r.hostFor(bad, ""); err == nil {
			t.Errorf("addr %q accepted", bad)
		}
	}
	h, _ := r.hostFor("https://ghe.example.com/api/v3/", "")
	if h2, _ := r.hostFor("https://ghe.example.com/api/v3", ""); h2 != h {
		t.Fatal("the same host twice got two transports")
	}
	tr := r.pools["ghe.example.com:443"].t
	if tr.MaxConnsPerHost != 8 || tr.MaxIdleConnsPerHost != 8 {
		t.Fatalf("pool %d/%d", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost)
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"eng":            "eng",
		"Eng_Web":        "eng_web",
		"Core Eng":       "core-eng",
		"a  --  b":       "a----b",
		"  trailing!!  ": "trailing",
		"Ünïcode":        "n-code",
	} {
		if got := slugify(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestUnseen(t *testing.T) {
	mk := func(code int) error {
		return &gh.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "PUT", URL: &url.URL{}}}}
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("connection reset by peer"), true},
		{fmt.Errorf("wrapped: %w", mk(502)), true},
		{mk(500), true},
		{mk(404), false},
		{mk(422), false},
		{fmt.Errorf("x: %w", ErrBudget), false},
		{&RateLimitError{Status: 429}, false},
	} {
		if got := unseen(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	c := &providers.Change{}
	for _, tc := range []struct {
		rs   []userResult
		want providers.Status
		err  bool
	}{
		{nil, providers.AlreadyInState, false},
		{[]userResult{applied(), already()}, providers.Applied, false},
		{[]userResult{applied(), skipped("x")}, providers.Applied, true},
		{[]userResult{skipped("x"), skipped("y")}, providers.Skipped, true},
		{[]userResult{applied(), {status: providers.Unknown, err: errors.New("lost")}}, providers.Unknown, true},
		{[]userResult{{status: providers.Unknown, err: errors.New("lost")}, failed(errors.New("no"))}, providers.Failed, true},
	} {
		o := outcome(c, tc.rs)
		if o.Status != tc.want || (o.Err != nil) != tc.err {
			t.Errorf("%v: %s %v", tc.rs, o.Status, o.Err)
		}
	}
}

func TestValidLoginAndSlug(t *testing.T) {
	for s, want := range map[string]bool{
		"alice": true, "Alice-B": true, "a": true, "0x": true, strings.Repeat("a", 39): true,
		"": false, "-a": false, "a_b": true, "a/b": false, "..": false, "a..b": false, "../x": false,
		"a b": false, "a%2F": false, strings.Repeat("a", 40): false, "ünï": false,
	} {
		if got := validLogin(s); got != want {
			t.Errorf("validLogin(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{
		"eng": true, "eng_web": true, "core-eng": true, "-x": true, "Eng": true,
		"": false, "a/b": false, "..": false, ".": false, "a.b": false, "a%2f": false, "a?b": false,
	} {
		if got := validSlug(s); got != want {
			t.Errorf("validSlug(%q) = %v", s, got)
		}
	}
}

func TestOneTransportPerHostPort(t *testing.T) {
	r := NewRegistry(Options{BaseURL: "http://127.0.0.1:8080/"})
	h1, err := r.hostFor("", "")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := r.hostFor("", "http://127.0.0.1:8080/custom/graphql")
	if err != nil {
		t.Fatal(err)
	}
	h3, err := r.hostFor("http://127.0.0.1:8080", "")
	if err != nil {
		t.Fatal(err)
	}
	if h1 == h2 || h2 == h3 {
		t.Fatal("distinct endpoints share a host entry")
	}
	if len(r.pools) != 1 || r.pools["127.0.0.1:8080"] == nil {
		t.Fatalf("pools %v, want one for 127.0.0.1:8080", maps.Keys(r.pools))
	}
	if _, err := r.hostFor("", "https://other.example.com/graphql"); err != nil {
		t.Fatal(err)
	}
	if len(r.pools) != 2 || r.pools["other.example.com:443"] == nil {
		t.Fatalf("pools %d", len(r.pools))
	}
}

// teamProvider builds the provider of a github_team OU for org acme on a fake GitHub.
func teamProvider(t *testing.T, f *fakegithub.Server) *TeamProvider {
	t.Helper()
	settings, err := config.ParseValue("org: acme\ntoken: tok\n")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Options{BaseURL: f.URL() + "/"})
	t.Cleanup(r.Close)
	p, err := r.Provider(&config.OU{Key: "github/teams", Type: "github_team", Base: "ou=teams,dc=example,dc=net", Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*TeamProvider)
}

func TestPlannedTeamRemovalIsSentWhateverTheOrgSnapshotSays(t *testing.T) {
	// The snapshot says frank is not an org member (it is older than his joining, or the
	// member list missed him), but GitHub has him in the team: the planned removal must be
	// sent, not reported as already done.
	f := fakegithub.New(fakegithub.Options{Token: "tok", Schema: fakegithub.TestSchema(t)})
	defer f.Close()
	f.SetMember("acme", "alice", "member")
	f.SetMember("acme", "frank", "member")
	f.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "frank"}})
	p := teamProvider(t, f)
	p.st = &orgState{roles: map[string]string{"alice": "member"}, pending: map[string]bool{}}
	cur := &providers.Group{DN: "cn=eng,ou=teams,dc=example,dc=net", CN: "eng", Members: []string{"alice", "frank"}}
	des := &providers.Group{DN: cur.DN, CN: "eng", Members: []string{"alice"}, Attrs: map[string][]string{}}
	c := &providers.Change{Kind: providers.UpdateGroup, DN: cur.DN, Desired: des, Current: cur, Remove: []string{"frank"},
		Add: nil}
	// ghost is in no team: the DELETE is sent too, and its 404 means already in state.
	c2 := &providers.Change{Kind: providers.UpdateGroup, DN: cur.DN, Desired: des, Current: cur, Remove: []string{"ghost"}}
	f.AddUsers("ghost")
	out := p.Apply(context.Background(), &providers.Target{}, []*providers.Change{c, c2})
	if out[0].Status != providers.Applied || out[1].Status != providers.AlreadyInState {
		t.Fatalf("outcomes %s %v / %s %v", out[0].Status, out[0].Err, out[1].Status, out[1].Err)
	}
	eng, _ := f.Team("acme", "eng")
	if _, ok := eng.Members["frank"]; ok || len(eng.Members) != 1 {
		t.Fatalf("eng members %v", eng.Members)
	}
	if n := f.Stats().Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 2 {
		t.Errorf("%d DELETEs sent, want 2", n)
	}
}

func TestInvalidLoginNeverReachesATeamPath(t *testing.T) {
	f := fakegithub.New(fakegithub.Options{Token: "tok", Schema: fakegithub.TestSchema(t)})
	defer f.Close()
	f.SetMember("acme", "alice", "member")
	f.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice"}})
	p := teamProvider(t, f)
	evil := "../../../orgs/acme/teams/eng"
	p.st = &orgState{roles: map[string]string{"alice": "member", strings.ToLower(evil): "member"}, pending: map[string]bool{}}
	cur := &providers.Group{DN: "cn=eng,ou=teams,dc=example,dc=net", CN: "eng", Members: []string{"alice"}}
	des := &providers.Group{DN: cur.DN, CN: "eng", Members: []string{"alice", evil}, Attrs: map[string][]string{}}
	out := p.Apply(context.Background(), &providers.Target{}, []*providers.Change{
		{Kind: providers.UpdateGroup, DN: cur.DN, Desired: des, Current: cur, Add: []string{evil}},
		{Kind: providers.UpdateGroup, DN: cur.DN, Desired: des, Current: cur, Remove: []string{evil}},
		{Kind: providers.DeleteGroup, DN: "cn=x,ou=teams,dc=example,dc=net", Current: &providers.Group{CN: "a/../../b"}},
	})
	for i, o := range out[:2] {
		if o.Status != providers.Skipped || o.Err == nil || !strings.Contains(o.Err.Error(), "not a valid GitHub login") {
			t.Errorf("change %d: %s %v", i, o.Status, o.Err)
		}
	}
	if out[2].Status != providers.Failed || !strings.Contains(out[2].Err.Error(), "not a valid GitHub team slug") {
		t.Errorf("delete: %s %v", out[2].Status, out[2].Err)
	}
	if st := f.Stats(); st.REST+st.GraphQL != 0 {
		t.Fatalf("requests sent: %v", st.Requests)
	}
	if _, ok := f.Team("acme", "eng"); !ok {
		t.Fatal("team eng deleted")
	}
}

func TestClassifyInviteRefusal(t *testing.T) {
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code, Request: &http.Request{}} }
	for _, tc := range []struct {
		name string
		err  error
		want inviteRefusal
	}{
		{"limit in a field error", &gh.ErrorResponse{Response: resp(422), Message: "Validation Failed",
			Errors: []gh.Error{{Resource: "OrganizationInvitation", Code: "unprocessable", Field: "data", Message: "Over invitation rate limit"}}}, refusedLimit},
		{"limit in the message", &gh.ErrorResponse{Response: resp(422), Message: "You have exceeded the invitation limit for this organization"}, refusedLimit},
		{"invalid role", &gh.ErrorResponse{Response: resp(422), Message: "Validation Failed",
			Errors: []gh.Error{{Resource: "OrganizationInvitation", Code: "invalid", Field: "role"}}}, refusedInvalid},
		{"no reason given (a user who blocked the org)", &gh.ErrorResponse{Response: resp(422), Message: "Validation Failed",
			Errors: []gh.Error{{Resource: "OrganizationInvitation", Code: "unprocessable", Field: "data"}}}, refusedOther},
		{"not a 422", &gh.ErrorResponse{Response: resp(403), Message: "rate limit"}, refusedOther},
		{"not a GitHub error", errors.New("rate limit"), refusedOther},
	} {
		if got := classifyInviteRefusal(tc.err); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRefusedDocumentIsAnError: GitHub answers an invalid document with 200, errors whose
// path starts at the operation, and no data; the client reports GitHub's message instead of
// taking a path element for a failed alias or the missing data for a missing organization.
func TestRefusedDocumentIsAnError(t *testing.T) {
	f := fakegithub.New(fakegithub.Options{Token: "tok", Schema: fakegithub.TestSchema(t)})
	defer f.Close()
	if _, err := fakegithub.DefaultSchema(); err != nil {
		t.Skip("GitHub's published schema is not available")
	}
	f.AddOrg("acme")
	p := teamProvider(t, f)
	_, err := p.s.graphql(context.Background(), `query($org: String!) { organization(login: $org) { t0: team(slug: "x") { slug inventedField } } }`,
		map[string]any{"org": "acme"})
	if err == nil || !strings.Contains(err.Error(), "GraphQL query refused: Field 'inventedField' doesn't exist on type 'Team'") {
		t.Fatalf("err %v", err)
	}
}

// TestOrgApplyRechecksSafety: Apply refuses on its own a set of changes that would demote the
// token's own user, for callers that apply changes they did not plan with Read.
func TestOrgApplyRechecksSafety(t *testing.T) {
	f := fakegithub.New(fakegithub.Options{Token: "tok", TokenUser: "alice", Schema: fakegithub.TestSchema(t)})
	defer f.Close()
	f.SetMember("acme", "alice", "admin")
	f.SetMember("acme", "bob", "member")
	settings, err := config.ParseValue("org: acme\ntoken: tok\n")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Options{BaseURL: f.URL() + "/"})
	defer r.Close()
	pv, err := r.Provider(&config.OU{Key: "github/org", Type: "github_org", Base: "ou=org,dc=example,dc=net", Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	p := pv.(*OrgProvider)
	admin := &providers.Group{DN: "cn=admin,ou=org,dc=example,dc=net", CN: "admin", Members: []string{"bob"}}
	member := &providers.Group{DN: "cn=member,ou=org,dc=example,dc=net", CN: "member", Members: []string{"alice"}}
	f.ResetStats()
	out := p.Apply(context.Background(), &providers.Target{}, []*providers.Change{
		{Kind: providers.UpdateGroup, DN: admin.DN, Desired: admin, Add: []string{"bob"}, Remove: []string{"alice"}},
		{Kind: providers.UpdateGroup, DN: member.DN, Desired: member, Add: []string{"alice"}, Remove: []string{"bob"}},
	})
	for _, o := range out {
		if o.Status != providers.Failed || !errors.Is(o.Err, ErrUnsafeOrgChange) {
			t.Errorf("%s: %s %v", o.Change, o.Status, o.Err)
		}
	}
	if st := f.Stats(); st.Writes != 0 {
		t.Errorf("wrote %v", st.Requests)
	}
}

// Issue 20 item 8: an addr or base URL with credentials in it is shown without them, also
// where url.Parse quotes it whole.
func TestAPIRootMasksUserInfo(t *testing.T) {
	for _, addr := range []string{
		"https://x-access-token:ghs_secret0@ghe.example/api/%zz",
		"ftp://x-access-token:ghs_secret0@ghe.example/api/v3",
	} {
		_, err := apiRoot(addr)
		if err == nil || strings.Contains(err.Error(), "ghs_secret0") || !strings.Contains(err.Error(), "***@ghe.example") {
			t.Errorf("apiRoot(%q): %v", addr, err)
		}
	}
}
