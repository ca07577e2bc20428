// Package fakegithub is an in-process GitHub for tests: an httptest server that speaks the
// REST and GraphQL shapes the GitHub provider uses, keeps state (so apply-then-plan is a
// no-op), counts what it is sent (requests per route, GraphQL aliases, new connections) and
// can be told to misbehave (latency, 5xx, 429 with Retry-After, primary and secondary rate
// limits, connection resets, requests that never get an answer, Link headers announcing
// pages that do not exist or pointing at another host, answers too large to read, canned
// answers).
//
// The real go-github client talks to it. By default REST is served both at the root (for a
// client whose BaseURL is URL()+"/") and under /api/v3 (for GitHub Enterprise-style URLs,
// APIURL()), and GraphQL at /graphql, /api/graphql and /api/v3/graphql; Options.Layout
// restricts it to the paths one kind of GitHub host answers (RootLayout: api.github.com and
// the Ruby plugin's acceptance fake; EnterpriseLayout: GitHub Enterprise Server), so that a
// client building the wrong URLs gets 404s. GraphQL documents are parsed with
// gqlparser and, given GitHub's published schema (Options.Schema), validated against it with
// their variables before anything is executed, so a client bug such as an invented field or
// an undeclared variable fails here as it would against GitHub (HTTP 200 with `errors`).
//
// GitHub behaviours the fake has:
//   - the token is a user's (Options.TokenUser) or an app installation's: GraphQL `viewer` is
//     that user or the app's bot, GET /user answers 403 for an installation, and a team
//     created with a user token gets its creator as maintainer (GitHub: "When you create a
//     new team, you automatically become a team maintainer");
//   - GitHub Apps (AddApp, Install): JWTs verified against the app's key, installation
//     lookup, installation tokens that expire (Options.InstallationTokenLifetime) or are
//     revoked (RevokeTokens) and are then answered 401, and the installation's permissions
//     enforced (see apps.go);
//   - a nested team cannot be secret, neither the child nor its parent (422);
//   - adding a user who is not an org member to a team sends them an org invitation for that
//     team and answers state "pending"; they join the team when they accept;
//   - org invitations are limited per 24 h (Options.InvitationLimit; GitHub: 50, 500 for
//     older or paid orgs), and a user can block the org (Server.Block): both answer 422;
//   - org invitations stay pending unless Options.AutoAccept is set;
//   - with Options.SecondaryLimits, more than 80 content-creating requests a minute or 500 an
//     hour answer GitHub's secondary-limit 403 (counted in Stats.SecondaryLimitHits);
//   - with Options.RejectMixedCaseLogins, a membership write whose login is not lower case
//     answers 400, as the Ruby plugin's acceptance fake does (GitHub itself matches logins
//     case-insensitively): a client that does not normalise logins fails loudly.
package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is a dotcom-like server accepting any token.
type Options struct {
	// Token is the only token accepted. Empty: any non-empty token is accepted. Requests
	// without a token are answered 401 and counted in Stats.RejectedAuth.
	Token string
	// Latency is added before every request is handled (network plus server time).
	Latency time.Duration
	// GHES makes GET /meta report an installed_version, as GitHub Enterprise Server does.
	GHES bool
	// Now is the clock of rate-limit windows and reset times. Default time.Now. Tests that
	// inject a clock into the client should give the same clock to the server.
	Now func() time.Time
	// RateLimit is the number of requests per resource (core, graphql) per RateWindow before
	// the primary limit answers 403 with X-RateLimit-Remaining: 0. Default 5000.
	RateLimit int
	// RateWindow is the primary rate-limit window. Default 1 hour.
	RateWindow time.Duration
	// AutoAccept turns org invitations into active memberships at once.
	AutoAccept bool
	// MaxHang bounds how long a Hang fault holds a request whose client never gives up.
	// Default 30 s.
	MaxHang time.Duration
	// Schema is GitHub's published GraphQL schema (LoadSchema, TestSchema): every document
	// and its variables are validated against it before they are executed. Nil: documents
	// are parsed and executed without validation.
	Schema *Schema
	// TokenUser is the login of the user the token belongs to (a personal or OAuth token).
	// Empty: the token is a GitHub App installation token, whose viewer is AppSlug+"[bot]".
	TokenUser string
	// AppSlug names the app of an installation token. Default "entitlements".
	AppSlug string
	// InvitationLimit is the number of org invitations the token may send per 24 h (each
	// org membership PUT or team membership PUT that invites someone counts); once used up
	// they answer 422 "Over invitation rate limit". 0: no limit.
	InvitationLimit int
	// Layout is where the server answers (AnyLayout, RootLayout, EnterpriseLayout); other
	// paths answer 404. Default AnyLayout.
	Layout Layout
	// RejectMixedCaseLogins answers 400 to org and team membership writes (PUT, DELETE)
	// whose login has upper-case letters, and counts them in Stats.RejectedLogins.
	RejectMixedCaseLogins bool
	// TLS serves HTTPS (URL is https://...; Client trusts the server's certificate).
	TLS bool
	// InstallationTokenLifetime is how long a GitHub App installation token is valid after it
	// is issued. Default 1 hour, as on GitHub.
	InstallationTokenLifetime time.Duration
	// SecondaryLimits enforces GitHub's secondary limits on content-creating requests (every
	// REST write but a GitHub App's token creation): a write that would make more than
	// ContentPerMinute in the last 60 s, or more than ContentPerHour in the last hour, on the
	// server's clock (Now), is answered 403 with GitHub's secondary-limit message and no
	// retry-after, is not performed, and is counted in Stats.SecondaryLimitHits. Off by
	// default (fakes on the real clock serve benchmarks that write fast).
	SecondaryLimits bool
	// ContentPerMinute and ContentPerHour are the limits of SecondaryLimits. Defaults 80 and
	// 500, GitHub's documented numbers.
	ContentPerMinute, ContentPerHour int
}

// Layout says under which paths the server answers, as GitHub's hosts do.
type Layout uint8

const (
	// AnyLayout answers REST at the root and under /api/v3, and GraphQL at /graphql,
	// /api/graphql and /api/v3/graphql: every client URL style works.
	AnyLayout Layout = iota
	// RootLayout answers REST at the root and GraphQL at /graphql only, as api.github.com
	// and the Ruby plugin's acceptance fake do.
	RootLayout
	// EnterpriseLayout answers REST under /api/v3 and GraphQL at /api/graphql only, as
	// GitHub Enterprise Server does (it does not serve /api/v3/graphql).
	EnterpriseLayout
)

// Server is the fake. Create it with New and stop it with Close.
type Server struct {
	opt Options
	srv *httptest.Server

	mu       sync.Mutex
	users    map[string]string // lower login → login
	orgs     map[string]*org   // lower login → org
	nextID   int64
	faults   []*faultState
	aliasErr map[string]int // "org/slug" → GraphQL team aliases still to fail
	latency  time.Duration
	hook     func(*http.Request)
	stats    Stats
	windows  map[string]*rateWindow
	invites  []time.Time // org invitations sent, for InvitationLimit
	content  []time.Time // content-creating requests performed, for SecondaryLimits

	docMu sync.Mutex
	docs  map[string]parsedDoc // query text → parsed and validated document

	apps     map[int64]*fakeApp          // GitHub Apps by ID
	installs map[int64]*fakeInstallation // installations by ID
	tokens   map[string]*instToken       // installation tokens issued and not revoked
}

type org struct {
	login   string
	members map[string]string  // lower login → admin|member
	pending map[string]*invite // lower login → pending invitation
	blocked map[string]bool    // lower login → the user blocked the org
	teams   map[string]*team   // slug → team
}

// invite is a pending org invitation, with the teams the user joins on accepting.
type invite struct {
	role  string            // admin|member
	teams map[string]string // slug → member|maintainer
}

type team struct {
	id          int64
	name, slug  string
	privacy     string // closed|secret
	description string
	parent      *team
	members     map[string]string // lower login → member|maintainer
	// idpGroups are the identity-provider groups the team is synced with (team
	// synchronization): its membership cannot be changed through the API.
	idpGroups []string
}

type rateWindow struct {
	used  int
	reset time.Time
}

// Stats are the counters of a Server since New or the last ResetStats.
type Stats struct {
	// Requests counts requests per route class, e.g. "GET /orgs/{org}/members" or
	// "POST /graphql" (requests rejected for auth or by a fault are counted too).
	Requests map[string]int
	// REST and GraphQL count requests by kind; Writes counts REST requests other than GET,
	// except those of GitHub Apps authenticating (installation tokens created).
	REST, GraphQL, Writes int
	// InstallationTokens counts the GitHub App installation tokens issued.
	InstallationTokens int
	// Connections counts new TCP connections (http.StateNew).
	Connections int
	// RejectedAuth counts requests answered 401.
	RejectedAuth int
	// RejectedLogins counts membership writes answered 400 for a login that is not lower
	// case (Options.RejectMixedCaseLogins).
	RejectedLogins int
	// NotServed counts requests to paths the Layout does not serve (answered 404).
	NotServed int
	// GraphQLTeamDocs counts GraphQL documents reading at least one team; TeamAliases the
	// team(slug:) fields they held; MaxTeamAliases the most in one document.
	GraphQLTeamDocs, TeamAliases, MaxTeamAliases int
	// GraphQLOrgDocs counts documents reading org members or pending members.
	GraphQLOrgDocs int
	// Faults counts injected faults.
	Faults int
	// SecondaryLimitHits counts writes refused by Options.SecondaryLimits.
	SecondaryLimitHits int
}

func (s Stats) clone() Stats {
	s.Requests = maps.Clone(s.Requests)
	return s
}

// New starts a server.
func New(opt Options) *Server {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.RateLimit <= 0 {
		opt.RateLimit = 5000
	}
	if opt.RateWindow <= 0 {
		opt.RateWindow = time.Hour
	}
	if opt.MaxHang <= 0 {
		opt.MaxHang = 30 * time.Second
	}
	if opt.AppSlug == "" {
		opt.AppSlug = "entitlements"
	}
	if opt.InstallationTokenLifetime <= 0 {
		opt.InstallationTokenLifetime = time.Hour
	}
	if opt.ContentPerMinute <= 0 {
		opt.ContentPerMinute = 80
	}
	if opt.ContentPerHour <= 0 {
		opt.ContentPerHour = 500
	}
	s := &Server{opt: opt, users: map[string]string{}, orgs: map[string]*org{}, nextID: 1000,
		aliasErr: map[string]int{}, latency: opt.Latency, windows: map[string]*rateWindow{}, docs: map[string]parsedDoc{},
		stats: Stats{Requests: map[string]int{}}, apps: map[int64]*fakeApp{}, installs: map[int64]*fakeInstallation{},
		tokens: map[string]*instToken{}}
	s.srv = httptest.NewUnstartedServer(s)
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.stats.Connections++
			s.mu.Unlock()
		}
	}
	if opt.TLS {
		// A client closing its pool mid-handshake at the end of a test is not worth a log line.
		s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	if opt.TokenUser != "" {
		s.addUser(opt.TokenUser)
	}
	s.addUser(s.botLogin())
	return s
}

func (s *Server) botLogin() string { return s.opt.AppSlug + "[bot]" }

// viewerKey is the lower-case login of the user (or app bot) whose token sent r.
func (s *Server) viewerKey(r *http.Request) string {
	if in := callerOf(r).inst; in != nil {
		return strings.ToLower(in.app.slug + "[bot]")
	}
	if s.opt.TokenUser != "" {
		return strings.ToLower(s.opt.TokenUser)
	}
	return strings.ToLower(s.botLogin())
}

// login is a known user's login as spelled when first seen.
func (s *Server) login(k string) string {
	if l, ok := s.users[k]; ok {
		return l
	}
	return k
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the server root (REST at URL()+"/", GraphQL at URL()+"/graphql", unless the Layout
// is EnterpriseLayout).
func (s *Server) URL() string { return s.srv.URL }

// APIURL is the GitHub Enterprise-style API base (REST under it, GraphQL at /api/graphql),
// usable as a provider's `addr` unless the Layout is RootLayout.
func (s *Server) APIURL() string { return s.srv.URL + "/api/v3" }

// Client returns an HTTP client for the server (it trusts the server's certificate with
// Options.TLS).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetLatency changes the latency added to every request.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// SetSecondaryLimits turns Options.SecondaryLimits on or off, so that a benchmark can set
// its state up with fast writes and then measure a paced apply against the limits. Turning
// them on starts with empty windows: the writes made while they were off are not counted.
func (s *Server) SetSecondaryLimits(on bool) {
	s.mu.Lock()
	s.opt.SecondaryLimits = on
	s.content = nil
	s.mu.Unlock()
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.clone()
}

// ResetStats zeroes the counters (state and faults are kept).
func (s *Server) ResetStats() {
	s.mu.Lock()
	s.stats = Stats{Requests: map[string]int{}}
	s.mu.Unlock()
}

// ---- seeding and inspection ----

// AddUsers makes logins known users (a membership write for an unknown user answers 404).
func (s *Server) AddUsers(logins ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range logins {
		s.addUser(l)
	}
}

func (s *Server) addUser(login string) string {
	k := strings.ToLower(login)
	if _, ok := s.users[k]; !ok {
		s.users[k] = login
	}
	return k
}

func (s *Server) org(login string, create bool) *org {
	k := strings.ToLower(login)
	o := s.orgs[k]
	if o == nil && create {
		o = &org{login: login, members: map[string]string{}, pending: map[string]*invite{}, blocked: map[string]bool{},
			teams: map[string]*team{}}
		s.orgs[k] = o
	}
	return o
}

// AddOrg creates an empty organisation (membership writes create it too).
func (s *Server) AddOrg(login string) {
	s.mu.Lock()
	s.org(login, true)
	s.mu.Unlock()
}

// SetMember makes login an active member of orgLogin with role "admin" or "member".
func (s *Server) SetMember(orgLogin, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, true)
	k := s.addUser(login)
	delete(o.pending, k)
	o.members[k] = role
}

// RemoveMember removes login from orgLogin (and from its teams), as leaving the org does.
func (s *Server) RemoveMember(orgLogin, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil {
		return
	}
	k := strings.ToLower(login)
	delete(o.members, k)
	delete(o.pending, k)
	for _, t := range o.teams {
		delete(t.members, k)
	}
}

// OnRequest installs fn, called for every request (after its latency, before it is handled,
// without the server's lock: fn may change the server's state), or removes it (nil). Tests
// use it to change state between the requests of one read.
func (s *Server) OnRequest(fn func(r *http.Request)) {
	s.mu.Lock()
	s.hook = fn
	s.mu.Unlock()
}

// Invite gives login a pending invitation to orgLogin with role "admin" or "member".
func (s *Server) Invite(orgLogin, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, true)
	k := s.addUser(login)
	if inv := o.pending[k]; inv != nil {
		inv.role = role
		return
	}
	o.pending[k] = &invite{role: role, teams: map[string]string{}}
}

// Block makes login a user who blocked orgLogin: inviting them answers 422.
func (s *Server) Block(orgLogin, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.org(orgLogin, true).blocked[s.addUser(login)] = true
}

// Accept turns a pending invitation into an active membership, and into memberships of the
// teams the invitation carries.
func (s *Server) Accept(orgLogin, login string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	k := strings.ToLower(login)
	if o == nil || o.pending[k] == nil {
		return false
	}
	s.accept(o, k)
	return true
}

func (s *Server) accept(o *org, k string) {
	inv := o.pending[k]
	delete(o.pending, k)
	o.members[k] = inv.role
	for slug, role := range inv.teams {
		if t := o.teams[slug]; t != nil {
			t.members[k] = role
		}
	}
}

// TeamInvitations returns the pending invitations of a team: login → member|maintainer.
func (s *Server) TeamInvitations(orgLogin, slug string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if o := s.org(orgLogin, false); o != nil {
		for k, inv := range o.pending {
			if r := inv.teams[strings.ToLower(slug)]; r != "" {
				out[s.users[k]] = r
			}
		}
	}
	return out
}

// invitationAllowed counts the invitations sent in the last 24 h against InvitationLimit and
// reports whether one more may be sent (recording it when take is set). Called with s.mu held.
func (s *Server) invitationAllowed(take bool) bool {
	if s.opt.InvitationLimit <= 0 {
		return true
	}
	now := s.opt.Now()
	kept := s.invites[:0]
	for _, t := range s.invites {
		if now.Sub(t) < 24*time.Hour {
			kept = append(kept, t)
		}
	}
	s.invites = kept
	if len(s.invites) >= s.opt.InvitationLimit {
		return false
	}
	if take {
		s.invites = append(s.invites, now)
	}
	return true
}

// TeamSpec seeds a team.
type TeamSpec struct {
	Name    string // the slug is derived from it as GitHub does
	Privacy string // closed (default) or secret
	Parent  string // parent slug; the parent must exist
	// Members and Maintainers are logins (made known users; they need not be org members).
	Members, Maintainers []string
	// Enterprise makes it an enterprise team shown in the org: its slug is "ent:" followed by
	// the slug of its name, as GitHub makes them, and its membership cannot be changed through
	// the org's API.
	Enterprise bool
}

// AddTeam creates a team and returns its slug.
func (s *Server) AddTeam(orgLogin string, spec TeamSpec) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, true)
	slug := Slugify(spec.Name)
	if spec.Enterprise {
		slug = "ent:" + slug
	}
	if o.teams[slug] != nil {
		return "", fmt.Errorf("team %s already exists", slug)
	}
	t := &team{id: s.newID(), name: spec.Name, slug: slug, privacy: "closed", members: map[string]string{}}
	if spec.Privacy != "" {
		t.privacy = spec.Privacy
	}
	if spec.Parent != "" {
		if t.parent = o.teams[strings.ToLower(spec.Parent)]; t.parent == nil {
			return "", fmt.Errorf("parent team %s does not exist", spec.Parent)
		}
	}
	for _, m := range spec.Members {
		t.members[s.addUser(m)] = "member"
	}
	for _, m := range spec.Maintainers {
		t.members[s.addUser(m)] = "maintainer"
	}
	o.teams[slug] = t
	return slug, nil
}

// SyncTeam makes a team synced with identity-provider groups (GitHub's team
// synchronization): GET .../team-sync/group-mappings lists them, and membership writes to the
// team are refused (403).
func (s *Server) SyncTeam(orgLogin, slug string, groups ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		return fmt.Errorf("team %s/%s does not exist", orgLogin, slug)
	}
	o.teams[strings.ToLower(slug)].idpGroups = groups
	return nil
}

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// Members returns the active members of an org: login → admin|member.
func (s *Server) Members(orgLogin string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if o := s.org(orgLogin, false); o != nil {
		for k, r := range o.members {
			out[s.users[k]] = r
		}
	}
	return out
}

// Pending returns the pending invitations of an org: login → admin|member.
func (s *Server) Pending(orgLogin string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if o := s.org(orgLogin, false); o != nil {
		for k, inv := range o.pending {
			out[s.users[k]] = inv.role
		}
	}
	return out
}

// TeamInfo is a snapshot of a team.
type TeamInfo struct {
	ID                  int64
	Name, Slug, Privacy string
	Parent              string            // parent slug, "" for none
	Members             map[string]string // login → member|maintainer
}

func (s *Server) info(t *team) TeamInfo {
	ti := TeamInfo{ID: t.id, Name: t.name, Slug: t.slug, Privacy: t.privacy, Members: map[string]string{}}
	if t.parent != nil {
		ti.Parent = t.parent.slug
	}
	for k, r := range t.members {
		ti.Members[s.users[k]] = r
	}
	return ti
}

// Team returns a team by slug.
func (s *Server) Team(orgLogin, slug string) (TeamInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		return TeamInfo{}, false
	}
	return s.info(o.teams[strings.ToLower(slug)]), true
}

// Teams returns every team of an org, sorted by slug.
func (s *Server) Teams(orgLogin string) []TeamInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil {
		return nil
	}
	var out []TeamInfo
	for _, slug := range slices.Sorted(maps.Keys(o.teams)) {
		out = append(out, s.info(o.teams[slug]))
	}
	return out
}

// Slugify derives a team slug from its name the way GitHub does: lower case, every run of
// characters other than letters, digits, '_' and '-' replaced by one '-', no leading or
// trailing '-'.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// ---- HTTP ----

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, served := s.opt.Layout.normalizePath(r.URL.Path)
	if !served {
		s.mu.Lock()
		s.stats.Requests[r.Method+" (not served) "+r.URL.Path]++
		s.stats.NotServed++
		s.mu.Unlock()
		notFound(w)
		return
	}
	class, gql := routeClass(r.Method, p)
	var body []byte
	if r.Body != nil && r.Method != http.MethodGet {
		// Kept for Fault.Match, and put back for the handler.
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	s.mu.Lock()
	s.stats.Requests[class]++
	if gql {
		s.stats.GraphQL++
	} else {
		s.stats.REST++
		if r.Method != http.MethodGet && !appRoute(p) {
			s.stats.Writes++
		}
	}
	lat := s.latency
	hook := s.hook
	f := s.matchFault(r.Method, p, body)
	s.mu.Unlock()
	if f != nil && f.Latency > 0 {
		lat += f.Latency
	}
	if lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if hook != nil {
		hook(r)
	}
	// Dates on the server's clock, which tests share with the client.
	w.Header().Set("Date", s.opt.Now().UTC().Format(http.TimeFormat))
	who, refusal := s.identify(r, p)
	if refusal != "" {
		s.mu.Lock()
		s.stats.RejectedAuth++
		s.mu.Unlock()
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": refusal,
			"documentation_url": "https://docs.github.com/rest"})
		return
	}
	r = withCaller(r, who)
	if who.inst != nil && s.installationRefusal(w, r, who.inst, p, gql) {
		return
	}
	if f != nil && f.Kind == BogusLastPage {
		s.bogusLastPage(w, r, f, p, gql)
		return
	}
	if f != nil && f.Kind != Latency {
		if f.After {
			rec := httptest.NewRecorder()
			s.handle(rec, r, p, gql)
		}
		s.inject(w, r, f, gql)
		return
	}
	s.handle(w, r, p, gql)
}

// normalizePath strips the GitHub Enterprise prefix so both URL styles share the routes, and
// reports whether the layout serves the path at all.
func (l Layout) normalizePath(p string) (string, bool) {
	ghes := p == "/api/graphql" || strings.HasPrefix(p, "/api/v3/")
	switch l {
	case RootLayout:
		if ghes {
			return p, false
		}
	case EnterpriseLayout:
		if !ghes || p == "/api/v3/graphql" {
			return p, false
		}
	}
	switch {
	case p == "/api/graphql" || p == "/api/v3/graphql":
		return "/graphql", true
	case strings.HasPrefix(p, "/api/v3/"):
		return p[len("/api/v3"):], true
	}
	return p, true
}

// mixedCase answers 400 to a membership write for a login that is not lower case, when the
// server is told to (Options.RejectMixedCaseLogins). Called with s.mu held.
func (s *Server) mixedCase(w http.ResponseWriter, r *http.Request, login string) bool {
	if !s.opt.RejectMixedCaseLogins || r.Method == http.MethodGet || login == strings.ToLower(login) {
		return false
	}
	s.stats.RejectedLogins++
	writeJSON(w, http.StatusBadRequest, map[string]any{"message": fmt.Sprintf("login %q is not lower case (this fake refuses mixed-case logins)", login)})
	return true
}

// routeClass names the route of a request for the counters.
func routeClass(method, p string) (string, bool) {
	if p == "/graphql" {
		return method + " /graphql", true
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	if len(seg) == 2 && seg[0] == "users" {
		seg[1] = "{user}"
	}
	if len(seg) > 2 && seg[0] == "app" && seg[1] == "installations" {
		seg[2] = "{id}"
	}
	if len(seg) > 1 && seg[0] == "orgs" {
		seg[1] = "{org}"
		switch {
		case len(seg) > 3 && seg[2] == "memberships":
			seg[3] = "{user}"
		case len(seg) > 3 && seg[2] == "teams":
			seg[3] = "{slug}"
			if len(seg) > 5 && seg[4] == "memberships" {
				seg[5] = "{user}"
			}
		}
	}
	return method + " /" + strings.Join(seg, "/"), false
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, p string, gql bool) {
	if a := callerOf(r).app; a != nil {
		s.serveApp(w, r, a, p)
		return
	}
	if gql {
		if r.Method != http.MethodPost {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"message": "GraphQL needs POST"})
			return
		}
		s.serveGraphQL(w, r)
		return
	}
	if s.primaryExhausted(w, "core") {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && s.secondaryExceeded(w) {
		return
	}
	s.serveREST(w, r, p)
}

// secondaryExceeded enforces Options.SecondaryLimits on one content-creating request: it is
// counted when performed, and refused (not performed) when the last minute or hour already
// holds the limit. GitHub's documented answer: 403, a message naming the secondary rate
// limit, and no retry-after when the client should wait at least a minute.
func (s *Server) secondaryExceeded(w http.ResponseWriter) bool {
	s.mu.Lock()
	if !s.opt.SecondaryLimits {
		s.mu.Unlock()
		return false
	}
	now := s.opt.Now()
	kept := s.content[:0]
	for _, t := range s.content {
		if now.Sub(t) < time.Hour {
			kept = append(kept, t)
		}
	}
	s.content = kept
	minute := 0
	for _, t := range s.content {
		if now.Sub(t) < time.Minute {
			minute++
		}
	}
	over := minute >= s.opt.ContentPerMinute || len(s.content) >= s.opt.ContentPerHour
	if over {
		s.stats.SecondaryLimitHits++
	} else {
		s.content = append(s.content, now)
	}
	s.mu.Unlock()
	if !over {
		return false
	}
	writeJSON(w, http.StatusForbidden, map[string]any{
		"message":           "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.",
		"documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
	return true
}

// primaryExhausted counts a request against its resource window, sets the X-RateLimit
// headers, and answers the primary-limit 403 when the window is used up.
func (s *Server) primaryExhausted(w http.ResponseWriter, resource string) bool {
	s.mu.Lock()
	now := s.opt.Now()
	win := s.windows[resource]
	if win == nil || !now.Before(win.reset) {
		win = &rateWindow{reset: now.Add(s.opt.RateWindow)}
		s.windows[resource] = win
	}
	over := win.used >= s.opt.RateLimit
	if !over {
		win.used++
	}
	used, reset := win.used, win.reset
	remaining := s.opt.RateLimit - used
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.opt.RateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", resource)
	if !over {
		return false
	}
	if resource == "graphql" {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"type": "RATE_LIMITED",
			"message": "API rate limit exceeded for user ID 1."}}})
		return true
	}
	writeJSON(w, http.StatusForbidden, map[string]any{"message": "API rate limit exceeded for user ID 1.",
		"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"})
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found",
		"documentation_url": "https://docs.github.com/rest"})
}

func unprocessable(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
		"errors":            []map[string]any{{"resource": "Team", "code": "custom", "message": msg}},
		"documentation_url": "https://docs.github.com/rest"})
}

// pathMatch reports whether p matches a fault pattern: an exact path or a path.Match glob.
func pathMatch(pattern, p string) bool {
	if pattern == "" || pattern == p {
		return true
	}
	ok, err := path.Match(pattern, p)
	return err == nil && ok
}
