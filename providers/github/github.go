// Package github is the GitHub provider: `github_org` targets (the org's admin and member
// roles, with pending invitations) and `github_team` targets (one team per file: members,
// maintainers, parent team, privacy).
//
// The Ruby plugin it replaces spent most of its time opening connections and reading teams one
// GraphQL query at a time. This package is built around the network budget instead:
//
//   - one shared *http.Transport per API host:port (whatever the OUs' `addr` and
//     `graphql_url` that lead to it), with as many idle connections kept as may be in flight
//     (MaxIdleConnsPerHost = MaxConnsPerHost = PoolSize), so a run opens at most PoolSize
//     connections per host:port whatever the number of requests;
//   - teams are read in bulk, BatchSize teams per aliased GraphQL query (first member page
//     included), then only the teams with more members get continuation queries, also
//     aliased; slugs, logins and cursors are passed as variables, never pasted into the text;
//   - the org's members, admins and pending invitations are read once per plan per
//     (host, org) and shared by the org target and every team target of that org (coalesced,
//     so two targets that ask at once cause one read); the next plan reads them again;
//   - writes go through a write scheduler per token (schedule.go): one at a time, 1 s apart
//     (3 s between invitations), within 70 a minute and 450 an hour (GitHub's secondary
//     limits, 80 and 500, minus a margin) and 500 invitations per org a day, so a large
//     apply is slow but never refused; EstimateWrites and the providers' Estimate say how
//     long it takes;
//   - reads share per-host concurrency limits; rate limits (Retry-After,
//     X-RateLimit-Remaining/Reset, secondary limits, 429) are honoured by a retrying
//     transport with bounded attempts, backoff with jitter and a run budget that stops the
//     run with a clear error instead of hammering GitHub;
//   - a write whose answer was lost is never replayed blindly: idempotent writes (PUT/DELETE
//     memberships, PATCH a team) may be repeated, but a team-creating POST is only tried
//     again after reading back that the team does not exist.
//
// The provider never computes diffs (providers.Diff does). It derives desired attributes from
// metadata (Desire), reads current state (Read) and turns changes into API calls (Apply).
// Desire must be called for every desired group of a target before Read, as deploy.Build
// does: Read uses the desired groups to leave out users GitHub cannot take (team members who
// are not org members, invitations when `invite` is disabled, ...) so that they do not show
// up as a change on every run, as the Ruby plugin does. A provider serves one plan: build a
// new one per plan (Registry.Provider is cheap; the shared pieces live in the Registry). The
// org snapshot lives as long as one plan: the providers built together (one deploy.Build)
// share it, and the first provider built after it was read starts a new one, so a
// long-running embedder never plans or applies against an old read.
//
// Every login, org name and team slug is checked before it is put into a REST path (go-github
// pastes them unescaped): a login that is not a GitHub login is reported and skipped, never
// sent. Every write is logged at info level with the team, user and role it changes.
//
// What GitHub answers never decides how much is sent or read, nor where: every answer is
// read up to Options.MaxResponseSize; REST list pages are asked for by number on the
// configured host (a Link header is only a page count, and redirects are not followed), at
// most as many at once as the host's read slots and at most as many as the org's member
// count (read just before) fills; a GraphQL connection that says there are more items but
// does not advance stops the read.
//
// OU keys: org; the credential: token (usually <%= ENV["GITHUB_TOKEN"] %>), or a GitHub App
// (app_id, private_key or private_key_path, installation_id), with credential: token|app to
// choose when an OU gives both, and environment fallbacks for an OU that gives none
// (GITHUB_TOKEN; GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY, GITHUB_APP_PRIVATE_KEY_PATH,
// GITHUB_APP_INSTALLATION_ID; see app.go); base, addr (the API root as written, as in the Ruby plugin: REST at
// addr/..., GraphQL at addr/graphql; GitHub Enterprise Server users write
// https://HOST/api/v3, whose GraphQL is at https://HOST/api/graphql), graphql_url (override),
// ignore_not_found; github_org also features
// ([invite, remove], default both), ignore (usernames never touched) and min_admins (default
// 1: a plan that would leave fewer admins is refused, as is one that would remove or demote
// the token's own user, when the token is a user's); github_team also delete_teams.
//
// Wiring:
//
//	reg := github.NewRegistry(github.Options{Logger: logger})
//	defer reg.Close()
//	backs, err := backends.New(backends.Providers{GitHub: reg})
//	opt := deploy.Options{Backends: backs}
package github

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/providers"
)

// Options tune the provider. Zero fields take the documented defaults.
type Options struct {
	// PoolSize is the number of connections kept per API host:port (MaxConnsPerHost and
	// MaxIdleConnsPerHost of the transport shared by every OU whose REST or GraphQL URL is
	// on that host:port). Default 8. Keep it at or above
	// ReadConcurrency + WriteConcurrency, or requests queue for a connection.
	PoolSize int
	// ReadConcurrency bounds reads (GraphQL queries, REST GETs) in flight per host, shared by
	// every target on that host. Default 4: batching, not parallelism, is what makes reads
	// fast, and GitHub caps concurrent requests per token.
	ReadConcurrency int
	// WriteConcurrency bounds writes in flight per session (one token, or one GitHub App
	// installation). Default 1: GitHub asks for writes one after another ("Best practices
	// for using the REST API": make requests serially, not concurrently).
	WriteConcurrency int
	// WriteInterval is the minimum spacing between the starts of two writes of a session.
	// Default DefaultWriteInterval (1 s, GitHub's guidance for content-creating requests);
	// negative: no spacing.
	WriteInterval time.Duration
	// InviteInterval is the minimum spacing between two org invitations of a session.
	// Default DefaultInviteInterval (3 s, as octokit's throttling plugin); negative: none.
	InviteInterval time.Duration
	// WritesPerMinute and WritesPerHour are the write budgets of a session (content-creating
	// requests, over sliding windows). Defaults DefaultWritesPerMinute (70) and
	// DefaultWritesPerHour (450): GitHub's secondary limits (80 and 500) minus a margin.
	// Negative: no budget. At 450 an hour, 2,000 writes take just over 4 hours; see
	// EstimateWrites.
	WritesPerMinute, WritesPerHour int
	// InvitationsPerDay is the budget of org invitations per org and session over 24 hours.
	// Default DefaultInvitationsPerDay (500, GitHub's limit for orgs older than a month or on
	// a paid plan; set 50 for a new org). Invitations past it are not sent: the users are
	// skipped with a warning and invited by a later run. Negative: no budget.
	InvitationsPerDay int
	// NoWritePacing turns WriteInterval, InviteInterval and the write and invitation budgets
	// off (benchmarks and tests against a fake on the real clock). GitHub's answers (rate
	// limits, invitation refusals) are still honoured.
	NoWritePacing bool
	// StateDir, when set, is where the write windows (the last hour's writes, the last 24
	// hours' invitations) are kept across runs, in the file .entitlements-github-writes.json.
	// Use a directory only this tool's runs write (not the audit checkout, which others can
	// push to: a planted file would make every run wait out a budget it never spent). The
	// file is read size-capped and never through a link leading out of the directory.
	// Without it every run starts with empty windows.
	StateDir string
	// BatchSize is the number of teams per GraphQL query (1..100). Default 25: a query then
	// costs 25×101 nodes and one rate-limit point, and stays well inside GitHub's 10 s
	// processing limit.
	BatchSize int
	// MaxAttempts bounds the tries of one request (retries after 5xx, transport errors and
	// rate limits included). Default 4.
	MaxAttempts int
	// BaseBackoff and MaxBackoff shape the exponential backoff (with full jitter) after 5xx and
	// transport errors. Defaults 1 s and 30 s.
	BaseBackoff, MaxBackoff time.Duration
	// SecondaryWait is the wait after a secondary rate limit without Retry-After. Default 60 s
	// (GitHub's documented minimum).
	SecondaryWait time.Duration
	// RequestTimeout bounds one attempt of one request. Default 60 s.
	RequestTimeout time.Duration
	// MaxResponseSize caps the body of one answer (REST or GraphQL, after decompression) in
	// bytes. A larger answer fails its request with ErrResponseTooLarge instead of being
	// read into memory. Default DefaultMaxResponseSize (32 MiB: a full GraphQL batch of 100
	// teams of 100 members is under 2 MiB); negative: no cap.
	MaxResponseSize int64
	// MaxRequests is the run budget of requests sent (all hosts). Default 0: no limit.
	MaxRequests int64
	// MaxWait is the run budget of time spent waiting for rate limits and backoff (all
	// hosts). A wait that would exceed it stops the run with ErrBudget. Default 15 minutes;
	// negative means no limit.
	MaxWait time.Duration
	// BaseURL is the REST base used when an OU has no `addr`. Default https://api.github.com/.
	// Tests point it at a fake server.
	BaseURL string
	// GraphQLURL is the GraphQL endpoint used when an OU has no `addr` and no `graphql_url`.
	// Default: derived from BaseURL (<base>/graphql).
	GraphQLURL string
	// HTTPClient, when set, supplies the base transport for every host instead of the
	// package's own pooled transports (its Transport is wrapped; the caller owns it and
	// its pool settings).
	HTTPClient *http.Client
	// Getenv supplies the environment fallbacks of an OU that gives no credential
	// (GITHUB_TOKEN; GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY, GITHUB_APP_PRIVATE_KEY_PATH,
	// GITHUB_APP_INSTALLATION_ID). Default os.LookupEnv.
	Getenv func(string) (string, bool)
	// AppTokenRefresh is how long before its expiry a GitHub App installation token is
	// replaced (GitHub's live an hour). A token that lives less than twice as long is
	// replaced halfway through its life. Default DefaultAppTokenRefresh (5 minutes).
	AppTokenRefresh time.Duration
	// Now and Sleep are the clock (tests inject a fake one so rate-limit waits take no real
	// time). Defaults time.Now and a timer that honours the context.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) for backoff jitter. Default math/rand/v2.
	Jitter func() float64
	// Predictive is the predictive state of the run (cache.LoadPredictive), or nil. Org
	// roles (both role files present) and teams whose cached state equals the desired one
	// are trusted without reading them; the others (and every cached entry that differs) are
	// read in the target's one bulk read. Pending invitations are always read.
	Predictive *cache.Predictive
	// Logger receives one info line per write (what changed: org, team, user, role, and the
	// result) and per-user warnings (users skipped, invitations refused, ...). Default:
	// discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.PoolSize <= 0 {
		o.PoolSize = 8
	}
	if o.ReadConcurrency <= 0 {
		o.ReadConcurrency = 4
	}
	if o.WriteConcurrency <= 0 {
		o.WriteConcurrency = 1
	}
	if o.NoWritePacing {
		o.WriteInterval, o.InviteInterval, o.WritesPerMinute, o.WritesPerHour, o.InvitationsPerDay = -1, -1, -1, -1, -1
	}
	if o.WriteInterval == 0 {
		o.WriteInterval = DefaultWriteInterval
	}
	if o.InviteInterval == 0 {
		o.InviteInterval = DefaultInviteInterval
	}
	if o.WritesPerMinute == 0 {
		o.WritesPerMinute = DefaultWritesPerMinute
	}
	if o.WritesPerHour == 0 {
		o.WritesPerHour = DefaultWritesPerHour
	}
	if o.InvitationsPerDay == 0 {
		o.InvitationsPerDay = DefaultInvitationsPerDay
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 25
	}
	o.BatchSize = min(o.BatchSize, 100)
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.SecondaryWait <= 0 {
		o.SecondaryWait = time.Minute
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = time.Minute
	}
	if o.MaxWait == 0 {
		o.MaxWait = 15 * time.Minute
	}
	if o.MaxResponseSize == 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	if o.BaseURL == "" {
		o.BaseURL = "https://api.github.com/"
	}
	if !strings.HasSuffix(o.BaseURL, "/") {
		o.BaseURL += "/"
	}
	if o.Getenv == nil {
		o.Getenv = os.LookupEnv
	}
	if o.AppTokenRefresh <= 0 {
		o.AppTokenRefresh = DefaultAppTokenRefresh
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Jitter == nil {
		o.Jitter = randFloat
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Registry owns the shared pieces of a run: one transport per API host:port, concurrency
// limits, rate-limit state and the org snapshot (one per plan) per API host, and the run
// budget. Build every GitHub provider of a run from one Registry, and Close it at the end.
type Registry struct {
	opt    Options
	budget budget
	sched  scheduler
	sims   map[string]*planSim // session key → the plan's estimate so far (guarded by sched.mu)
	// secrets are the credentials of the registry's OUs (tokens, App keys, and the JWTs and
	// installation tokens obtained with them), masked in every error and log line.
	secrets redact.Set
	shortMu sync.Mutex
	short   []shortLived // credentials masked until they expire (remember)

	mu    sync.Mutex
	hosts map[string]*host
	pools map[string]*pool // host:port → the one transport to it

	// gen is the generation of org snapshots: providers built by one deploy.Build share one;
	// Provider starts a new one once the current one has been read (genRead).
	genMu   sync.Mutex
	gen     uint64
	genRead bool
}

// NewRegistry returns an empty registry.
func NewRegistry(opt Options) *Registry {
	opt = opt.withDefaults()
	r := &Registry{opt: opt, budget: budget{maxRequests: opt.MaxRequests, maxWait: opt.MaxWait},
		hosts: map[string]*host{}, pools: map[string]*pool{}}
	r.sched = scheduler{budget: budgetOf(opt), now: opt.Now}
	if opt.StateDir != "" {
		r.sched.path = filepath.Join(opt.StateDir, budgetFile)
	}
	r.opt.Logger = slog.New(r.secrets.Handler(opt.Logger.Handler()))
	return r
}

// Close closes the idle connections of the registry's transports.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pools {
		p.t.CloseIdleConnections()
	}
}

// generation returns the org-snapshot generation for a new provider: the current one while
// nobody has read it (every provider of one deploy.Build is built before any read), else a
// new one, so that the next plan reads the org again.
func (r *Registry) generation() uint64 {
	r.genMu.Lock()
	defer r.genMu.Unlock()
	if r.genRead {
		r.gen++
		r.genRead = false
	}
	return r.gen
}

// readGeneration records a read of generation g and reports whether g is still current (an
// older generation's snapshot is not cached).
func (r *Registry) readGeneration(g uint64) bool {
	r.genMu.Lock()
	defer r.genMu.Unlock()
	if g != r.gen {
		return false
	}
	r.genRead = true
	return true
}

// pool is one pooled transport per API host:port, shared by every host entry that leads to
// it (a REST base and the GraphQL URLs of several OUs), with the connections it opened.
type pool struct {
	t     *http.Transport
	dials atomic.Int64
}

// poolKey is the host:port of a URL (default port by scheme), lower case.
func poolKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if strings.EqualFold(u.Scheme, "http") {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// poolFor returns the transport of a URL's host:port, creating it on first use.
func (r *Registry) poolFor(u *url.URL) *pool {
	k := poolKey(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.poolLocked(k)
}

func (r *Registry) poolLocked(k string) *pool {
	if p, ok := r.pools[k]; ok {
		return p
	}
	p := &pool{}
	p.t = newTransport(r.opt.PoolSize, func() { p.dials.Add(1) })
	r.pools[k] = p
	return p
}

// poolRouter sends each request over the registry's transport for its host:port.
type poolRouter struct{ r *Registry }

func (pr poolRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	return pr.r.poolFor(req.URL).t.RoundTrip(req)
}

// Counters sums the counters of every host: rest_requests, graphql_requests,
// connections_opened, retries, rate_limited, rate_limit_wait_ms, backoff_wait_ms, writes,
// skipped_users, pending_users (team members whose org invitation is pending), warnings,
// pace_wait_ms (waits of the write scheduler) and invitations.
func (r *Registry) Counters() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int64{}
	for _, h := range r.hosts {
		for k, v := range h.counters.snapshot() {
			out[k] += v
		}
	}
	for _, p := range r.pools {
		out["connections_opened"] += p.dials.Load()
	}
	return out
}

// host is one API host: its transport, limits, caches and counters.
type host struct {
	reg        *Registry
	restBase   *url.URL
	graphqlURL string
	// checkMeta: the host was given by `addr`, so GET /meta decides whether it is GitHub
	// Enterprise Server (which has no pending-invitation read); dotcom never asks.
	checkMeta bool

	// own: requests go over the registry's pooled transports (dials are counted there);
	// false when Options.HTTPClient supplies the transport.
	own      bool
	base     http.RoundTripper
	counters counters
	reads    chan struct{}

	orgMu sync.Mutex
	orgs  map[string]*orgEntry // lower org → snapshot of the latest generation read
	meta  cache.TTL[bool]

	mu       sync.Mutex
	sessions map[string]*session // "token\x00TOKEN" or "app\x00APP\x00org" → session
	apps     map[string]*app     // App ID → the app on this host
}

// hostFor returns the host of an OU's `addr` (or the default base URL).
func (r *Registry) hostFor(addr, graphqlURL string) (*host, error) {
	var restBase *url.URL
	checkMeta := false
	switch {
	case addr != "":
		u, err := apiRoot(addr)
		if err != nil {
			return nil, err
		}
		restBase = u
		checkMeta = true
	default:
		u, err := url.Parse(r.opt.BaseURL)
		if err != nil {
			return nil, redact.ErrorURLs(fmt.Errorf("base URL %q: %w", r.opt.BaseURL, err))
		}
		restBase = u
		if graphqlURL == "" {
			graphqlURL = r.opt.GraphQLURL
		}
	}
	if graphqlURL == "" {
		graphqlURL = deriveGraphQLURL(restBase)
	}
	key := restBase.String() + " " + graphqlURL
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.hosts[key]; ok {
		return h, nil
	}
	gu, err := url.Parse(graphqlURL)
	if err != nil || gu.Host == "" {
		return nil, fmt.Errorf("graphql_url %q is not an absolute URL", redact.URLs(graphqlURL))
	}
	h := &host{reg: r, restBase: restBase, graphqlURL: graphqlURL, checkMeta: checkMeta,
		reads:    make(chan struct{}, r.opt.ReadConcurrency),
		sessions: map[string]*session{}, apps: map[string]*app{}, orgs: map[string]*orgEntry{}}
	if r.opt.HTTPClient != nil && r.opt.HTTPClient.Transport != nil {
		h.base = r.opt.HTTPClient.Transport
	} else {
		// One transport per host:port, whatever the OU keys that lead to it: a per-OU
		// graphql_url on the API host shares the REST pool instead of opening its own.
		r.poolLocked(poolKey(restBase))
		r.poolLocked(poolKey(gu))
		h.own, h.base = true, poolRouter{r}
	}
	r.hosts[key] = h
	return h, nil
}

// apiRoot parses an OU's `addr`: the API root as written, as the Ruby plugin uses it (Octokit's
// api_endpoint), so REST paths go right under it. GitHub Enterprise Server users write
// https://HOST/api/v3.
func apiRoot(addr string) (*url.URL, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, redact.ErrorURLs(fmt.Errorf("addr %q: %w", addr, err))
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("addr %q is not an http(s) URL of the GitHub API root (https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server)", redact.URLs(addr))
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	return u, nil
}

// deriveGraphQLURL: GraphQL is at <api root>/graphql (dotcom, and the Ruby plugin's URL for any
// addr), except on GitHub Enterprise Server, which serves it at /api/graphql next to /api/v3
// (the plugin posts to /api/v3/graphql, which GHES does not serve).
func deriveGraphQLURL(rest *url.URL) string {
	u := *rest
	if strings.HasSuffix(u.Path, "/api/v3/") {
		u.Path = strings.TrimSuffix(u.Path, "v3/") + "graphql"
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/graphql"
	}
	return u.String()
}

// newTransport clones the default transport and sizes its pool: Go keeps only 2 idle
// connections per host by default, so with more requests in flight the extras would be
// closed and reopened; MaxConnsPerHost caps the connections ever open at once. onDial counts
// connections opened (a dial whose connection ends up unused still counts, as it would on
// the server).
func newTransport(pool int, onDial func()) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = pool
	t.MaxConnsPerHost = pool
	t.MaxIdleConns = max(t.MaxIdleConns, pool)
	t.ForceAttemptHTTP2 = true
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			onDial()
		}
		return c, err
	}
	return t
}

// session is one credential on one host (a token, a GitHub App's installation, or the App
// itself): its go-github client and its rate-limit state (GitHub limits are per token, and
// per installation).
type session struct {
	h    *host
	cred credential
	// key names the session in the write budget state (never the credential itself).
	key string
	// writes bounds the session's writes in flight (Options.WriteConcurrency).
	writes chan struct{}
	// inst is the App installation whose token the session sends; nil for a token given by
	// the OU (and for the App's own session).
	inst *installation
	http *http.Client
	gh   *gh.Client
	rate rateState
	// invites: the org invitation limit is per token.
	invites inviteLimit
}

// newSession returns a session on h (not registered in h.sessions).
func (h *host) newSession(c credential, key string) *session {
	s := &session{h: h, cred: c, key: h.restBase.String() + " " + key, writes: make(chan struct{}, h.reg.opt.WriteConcurrency)}
	s.http = &http.Client{Transport: &roundTripper{s: s},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.gh = gh.NewClient(s.http)
	s.gh.BaseURL = h.restBase
	return s
}

// tokenSession returns the session of a token, shared by every OU on the host that gives it.
func (h *host) tokenSession(token string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := "token\x00" + token
	if s, ok := h.sessions[key]; ok {
		return s
	}
	s := h.newSession(staticToken(token), credKey("token", token))
	h.sessions[key] = s
	return s
}

// app reports whether the session sends a GitHub App's installation token: no user stands
// behind it (no org role, no team a creation would make it maintainer of).
func (s *session) app() bool { return s.inst != nil }

// settings are the OU keys the provider reads.
type settings struct {
	org, base, addr, graphqlURL string
	cred                        credSettings
	ignoreNotFound, deleteTeams bool
	invite, remove              bool
	ignore                      map[string]bool
	minAdmins                   int
}

func text(m config.Value, k string) string { return strings.TrimSpace(m.Get(k).Text()) }

func flag(m config.Value, k string) (bool, error) {
	v := m.Get(k)
	if v.IsNull() {
		return false, nil
	}
	b, ok := v.AsBool()
	if !ok {
		return false, fmt.Errorf("%s must be true or false, not %s", k, v.Text())
	}
	return b, nil
}

func (r *Registry) settings(ou *config.OU) (settings, error) {
	m := ou.Settings
	s := settings{org: text(m, "org"), base: ou.Base, addr: text(m, "addr"),
		graphqlURL: text(m, "graphql_url"), invite: true, remove: true, ignore: map[string]bool{}, minAdmins: DefaultMinAdmins}
	if s.base == "" {
		s.base = text(m, "base")
	}
	if s.org == "" {
		return s, fmt.Errorf("OU %s has no org", ou.Key)
	}
	if !validLogin(s.org) {
		return s, fmt.Errorf("OU %s: org %q is not a GitHub organization name (letters, digits and '-', at most 39)", ou.Key, s.org)
	}
	if s.base == "" {
		return s, fmt.Errorf("OU %s has no base", ou.Key)
	}
	var err error
	if s.cred, err = r.credentials(ou); err != nil {
		return s, err
	}
	if s.ignoreNotFound, err = flag(m, "ignore_not_found"); err != nil {
		return s, fmt.Errorf("OU %s: %w", ou.Key, err)
	}
	if s.deleteTeams, err = flag(m, "delete_teams"); err != nil {
		return s, fmt.Errorf("OU %s: %w", ou.Key, err)
	}
	if f := m.Get("features"); !f.IsNull() {
		if !f.IsList() {
			return s, fmt.Errorf("OU %s: features must be a list (of invite, remove)", ou.Key)
		}
		s.invite, s.remove = false, false
		for _, it := range f.Items() {
			switch it.Text() {
			case "invite":
				s.invite = true
			case "remove":
				s.remove = true
			default:
				return s, fmt.Errorf("OU %s: unknown feature %q (known: invite, remove)", ou.Key, it.Text())
			}
		}
	}
	if v := m.Get("min_admins"); !v.IsNull() {
		n, ok := v.AsInt()
		if !ok || n < 0 || n > 1000 {
			return s, fmt.Errorf("OU %s: min_admins must be a whole number from 0 to 1000, not %s", ou.Key, v.Text())
		}
		s.minAdmins = int(n)
	}
	if ig := m.Get("ignore"); !ig.IsNull() {
		if !ig.IsList() {
			return s, fmt.Errorf("OU %s: ignore must be a list of usernames", ou.Key)
		}
		for _, it := range ig.Items() {
			s.ignore[strings.ToLower(it.Text())] = true
		}
	}
	return s, nil
}

// Provider builds the provider of a `github_org` or `github_team` OU. A missing credential (or
// an App key that does not parse) is an error here, so that a plan fails before any request
// is sent.
func (r *Registry) Provider(ou *config.OU) (providers.Provider, error) {
	if ou.Type != "github_org" && ou.Type != "github_team" {
		return nil, fmt.Errorf("the GitHub provider does not handle type %q", ou.Type)
	}
	// Whatever the outcome, the credentials the OU gives are masked from here on.
	for _, k := range []string{"token", "private_key"} {
		if v := text(ou.Settings, k); v != "" {
			r.secrets.Add(keySecrets(v)...)
		}
	}
	s, err := r.settings(ou)
	if err != nil {
		return nil, r.secrets.Error(err)
	}
	r.secrets.Add(s.cred.token)
	if s.cred.kind == credApp {
		r.secrets.Add(keySecrets(s.cred.app.keyText)...)
	}
	h, err := r.hostFor(s.addr, s.graphqlURL)
	if err != nil {
		return nil, fmt.Errorf("OU %s: %w", ou.Key, err)
	}
	var sess *session
	if s.cred.kind == credApp {
		if sess, err = h.appSession(s.cred.app, s.org); err != nil {
			return nil, fmt.Errorf("OU %s: %w", ou.Key, err)
		}
	} else {
		sess = h.tokenSession(s.cred.token)
	}
	gen := r.generation()
	init := func(t *target) {
		t.s, t.cfg, t.ou, t.gen = sess, s, ou.Key, gen
		t.log = r.opt.Logger.With("ou", ou.Key)
		t.desired = map[string]*providers.Group{}
	}
	if ou.Type == "github_org" {
		p := &OrgProvider{}
		init(&p.target)
		return p, nil
	}
	p := &TeamProvider{snaps: map[string]*teamSnap{}, createErr: map[string]error{}}
	init(&p.target)
	return p, nil
}

// target is what both providers share: the session, the OU settings, per-target counters and
// the desired groups recorded by Desire.
type target struct {
	s        *session
	cfg      settings
	ou       string
	log      *slog.Logger
	counters counters
	gen      uint64 // org-snapshot generation (see Registry.generation)

	mu      sync.Mutex
	desired map[string]*providers.Group // providers.Key(DN) → desired group
	st      *orgState                   // the org snapshot this target's Read used
}

// Counters implements providers.Counter: the requests made for this target (the shared org
// read is counted for the target that triggered it).
func (t *target) Counters() map[string]int64 { return t.counters.snapshot() }

// withTarget attaches the target's counters to the context of its requests.
func (t *target) withTarget(ctx context.Context) context.Context {
	return context.WithValue(ctx, targetKey{}, &t.counters)
}

func (t *target) record(g *providers.Group) {
	t.mu.Lock()
	t.desired[providers.Key(g.DN)] = g
	t.mu.Unlock()
}

func (t *target) desiredGroups() map[string]*providers.Group {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]*providers.Group, len(t.desired))
	for k, g := range t.desired {
		out[k] = g
	}
	return out
}

// orgState returns the org snapshot of this target's plan: the one its Read used (kept up to
// date by this run's writes), else the snapshot of its generation.
func (t *target) orgState(ctx context.Context) (*orgState, error) {
	t.mu.Lock()
	st := t.st
	t.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := t.s.orgState(ctx, t.cfg.org, t.gen)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.st == nil {
		t.st = st
	}
	st = t.st
	t.mu.Unlock()
	return st, nil
}

// logWrite logs one write (sent, or answered as already done) at info level: what changed
// and how it ended.
func (t *target) logWrite(msg string, r userResult, args ...any) {
	args = append(args, "org", t.cfg.org, "status", r.status.String())
	if r.err != nil {
		args = append(args, "err", r.err.Error())
	}
	if r.warn != "" {
		args = append(args, "note", r.warn)
	}
	t.log.Info(msg, args...)
}

func (t *target) warn(msg string, args ...any) {
	t.counters.warnings.Add(1)
	t.s.h.counters.warnings.Add(1)
	t.log.Warn(msg, args...)
}
