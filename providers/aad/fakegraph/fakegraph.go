// Package fakegraph is an in-process fake of the small part of Microsoft Graph (v1.0) that the
// Azure AD provider uses: groups, users, direct group members with paging, JSON $batch, and
// $ref member writes. It is a plain net/http + encoding/json httptest server on purpose: it must
// compile in seconds, so it never imports msgraph-sdk-go, yet the real SDK client talks to it
// (point the SDK's request adapter at BaseURL and send the bearer token from Token).
//
// It emulates the Graph behaviours a client can get wrong, and counts what the client did:
//
//   - members paging with $top (default 100, at most 999) and an absolute, opaque
//     @odata.nextLink built on the server's own base; optional empty pages that still carry a
//     nextLink (Options.EmptyPages);
//   - $filter with eq, in (at most 15 values, as Graph limits it), or, and startswith;
//   - $batch: at most 20 sub-requests with unique ids, replies shuffled, per-item status,
//     headers and body, dependsOn failures answered 424;
//   - member writes: POST /groups/{id}/members/$ref answers 204, 400 when the object is already
//     a member, 404 for an unknown object; DELETE /groups/{id}/members/{oid}/$ref answers 204,
//     404 when it is not a member. DELETE without /$ref deletes the object itself, as Graph
//     does for an application with the permission, and is counted (ObjectDeletes), so tests
//     can prove a client never sends it; PATCH with members@odata.bind (at most 20,
//     all-or-nothing);
//   - request bodies sent uncompressed: a body with a Content-Encoding is refused (415, see
//     serveTop for why), and a bearer token (401 otherwise);
//   - mailNickname as Graph documents it: at most 64 characters of ASCII, none of
//     @ ( ) \ [ ] " ; : . < > , or space (400 otherwise); unique among Microsoft 365 (Unified)
//     groups only: security groups may share one (see checkNickLocked);
//   - replication lag on writes (Options.WriteLag): member adds to a group created through the
//     API answer 400 "The source resource object or one of the objects being referenced do
//     not exist." a few times, as Graph documents for recently created groups;
//   - members the application may not read (Options.LimitedMembers): member listings return
//     only @odata.type and id; Options.DenyUserReads refuses user reads (403);
//   - fault injection per route, at top level or inside a batch: a status (429 with
//     Retry-After, 503, 504) or a dropped connection, before or after the write was done, or
//     a reply whose body cannot be decoded, after the request was done, or one too large to
//     read (Fault.Oversize); nextLinks to another base (SetNextLinkBase);
//   - replication lag (Options.HideCreated): a group created through the API stays invisible
//     to group reads until Replicate, as Graph's replicas lag behind a create;
//   - write quotas (Options.WriteQuotas): every write (POST, PATCH, PUT, DELETE, top level
//     or inside a batch) is counted per application and per tenant (from the token) in
//     sliding windows on the server's clock (Options.Now); past Graph's documented quotas
//     (3,000 per 2.5 minutes per application and tenant, 18,000 per 5 minutes per tenant) a
//     write is answered 429 with Retry-After and not done, and above 80% of the
//     application's quota a reply carries x-ms-throttle-limit-percentage;
//   - counters: requests per route class, batches, sub-requests, member pages, throttled
//     replies, writes (per application and tenant), write-quota refusals, NEW connections
//     (via http.Server.ConnState), most requests in flight;
//   - latency added to every top-level request.
//
// The server is stateful: writes change what later reads return, so an apply followed by a
// plan against the same server is a no-op.
package fakegraph

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server. Zero fields take the documented defaults.
type Options struct {
	// Token is the bearer token every top-level request must carry. Default "fake-graph-token".
	Token string
	// Latency is added to every top-level request (not to each sub-request of a batch), to
	// make round trips cost what they cost against the real service.
	Latency time.Duration
	// DefaultPageSize is the page size without $top. Default 100, as Graph.
	DefaultPageSize int
	// EmptyPages is the number of empty pages (no items, but a nextLink) served before the
	// first real page of every member listing. Graph does send such pages; a client must
	// follow the link until it is absent.
	EmptyPages int
	// Seed seeds the shuffling of batch replies. Default 1.
	Seed uint64
	// HideCreated makes groups created through the API (POST /groups) invisible to group
	// reads (listings, $filter, GET /groups/{id}) until Replicate is called, as Graph's
	// directory replicas can lag seconds behind a create. Writes to the group work.
	HideCreated bool
	// WriteLag is how many member adds (POST .../members/$ref, PATCH members@odata.bind) to
	// each group created through the API are refused with Graph's replication-lag answer (400
	// "The source resource object or one of the objects being referenced do not exist.")
	// before they succeed. Graph documents this for groups created moments before. Refused
	// writes change nothing.
	WriteLag int
	// LimitedMembers makes member listings return only @odata.type and id for every member,
	// whatever $select asks, as Graph does for an application without permission to read
	// the members' object type (GroupMember.Read.All without User.Read.All).
	LimitedMembers bool
	// DenyUserReads refuses every user read (GET /users, /users/{id}) with 403
	// Authorization_RequestDenied, as Graph does for an application without User.Read.All.
	DenyUserReads bool
	// Identity configures the identity endpoints (LoginURL): token lifetimes, the Actions
	// request token, the managed-identity header.
	Identity IdentityOptions
	// WriteQuotas enforces Graph's write quotas (see quota.go): a write past AppWrites per
	// AppWriteWindow for its application and tenant, or past TenantWrites per
	// TenantWriteWindow for its tenant, is answered 429 with Retry-After (seconds until the
	// window has room) and not done; a write above 80% of AppWrites gets the reply header
	// x-ms-throttle-limit-percentage (the fraction used, "0.853"). Writes are counted either
	// way (Stats.Writes, WritesByApp, WritesByTenant). Off by default.
	WriteQuotas bool
	// AppWrites and TenantWrites are the quotas of WriteQuotas. Defaults DefaultAppWrites
	// (3,000) and DefaultTenantWrites (18,000), Graph's documented numbers.
	AppWrites, TenantWrites int
	// Now is the clock of the write quotas. Default time.Now; tests share a fake clock with
	// the client.
	Now func() time.Time
}

// Group is a group as the fake stores it.
type Group struct {
	ID, DisplayName, MailNickname, Description string
	SecurityEnabled, MailEnabled               bool
	// CreatedDateTime is set to the current time when zero.
	CreatedDateTime time.Time
	// GroupTypes holds "DynamicMembership" for a dynamic group, "Unified" for a Microsoft 365
	// group.
	GroupTypes []string
	// Members are the object IDs of the direct members, in insertion order.
	Members []string
}

// Object kinds.
const (
	KindUser             = "user"
	KindServicePrincipal = "servicePrincipal"
	KindDevice           = "device"
)

type object struct {
	id, kind, upn, displayName string
}

type group struct {
	Group
	set map[string]bool
	// hidden: created but not replicated yet (Options.HideCreated).
	hidden bool
	// lag is how many more member adds are refused as not replicated yet (Options.WriteLag).
	lag int
}

// Stats are the counters of a Server. Route classes are "batch", "groups.list",
// "groups.get", "groups.create", "groups.patch", "groups.delete", "members.list",
// "members.add", "members.remove", "members.delete-object", "users.list", "users.get",
// "objects.get" and "unknown".
type Stats struct {
	// Requests counts top-level HTTP requests (a $batch POST is one).
	Requests int64
	// Batches counts $batch POSTs; SubRequests the items inside them.
	Batches, SubRequests int64
	// Routes counts top-level requests and sub-requests by route class.
	Routes map[string]int64
	// MemberPages counts member pages served (empty ones included).
	MemberPages int64
	// Throttled counts 429 replies (top level and items); Faults every injected fault.
	Throttled, Faults int64
	// NewConnections counts TCP connections the server accepted.
	NewConnections int64
	// Unauthorized counts requests rejected for a missing or wrong token.
	Unauthorized int64
	// GzipBodies counts request bodies that arrived compressed (Content-Encoding set); each
	// was refused with 415.
	GzipBodies int64
	// LagRefusals counts member adds refused as not replicated yet (Options.WriteLag).
	LagRefusals int64
	// Invalid counts creates refused for an invalid or duplicate mailNickname.
	Invalid int64
	// ObjectDeletes counts DELETE /groups/{id}/members/{oid} WITHOUT /$ref (deletes the
	// member object itself). A correct client never sends it.
	ObjectDeletes int64
	// MaxInFlight is the most top-level requests served at once.
	MaxInFlight int64
	// Writes counts the writes done or refused by Graph's own checks (every POST, PATCH,
	// PUT and DELETE, top level or in a batch; not those refused by WriteQuotas), and
	// WritesByApp and WritesByTenant the same per "tenant/app" and per tenant.
	Writes         int64
	WritesByApp    map[string]int64
	WritesByTenant map[string]int64
	// WriteLimitHits counts writes refused with 429 by Options.WriteQuotas (also counted in
	// Throttled); ThrottleHeaders counts replies that carried x-ms-throttle-limit-percentage.
	WriteLimitHits, ThrottleHeaders int64
}

// Server is a running fake. All methods are safe for concurrent use.
type Server struct {
	// URL is the server root (http://127.0.0.1:port); Graph paths live under URL+"/v1.0".
	URL string

	opt Options
	srv *httptest.Server

	mu      sync.Mutex
	objects map[string]*object // users, service principals, devices by id
	byUPN   map[string]string  // lower-case UPN -> id
	groups  map[string]*group
	order   []string // group ids in creation order
	faults  []*Fault
	// nextBase replaces the base of nextLinks (SetNextLinkBase).
	nextBase string
	rng      *rand.Rand
	nextID   uint64
	log      []string

	requests, batches, subRequests, memberPages   atomic.Int64
	throttled, faultsHit, newConns, unauthorized  atomic.Int64
	gzipBodies, objectDeletes, inFlight, maxInFly atomic.Int64
	lagRefusals, invalid                          atomic.Int64
	writes, writeLimitHits, throttleHeaders       atomic.Int64
	routeMu                                       sync.Mutex
	routes                                        map[string]int64

	// quotaMu guards the write windows (Options.WriteQuotas) and the added tokens.
	quotaMu                     sync.Mutex
	appWrites, tenantWrites     map[string][]time.Time // "tenant/app" or tenant -> write times
	writesByApp, writesByTenant map[string]int64
	tokens                      map[string]caller // AddToken

	// id is the identity endpoints, started on first use (LoginURL, RegisterApp, ...).
	idOnce sync.Once
	id     atomic.Pointer[identity]
}

// New starts a fake Graph server. Close it when done.
func New(opt Options) *Server {
	if opt.Token == "" {
		opt.Token = "fake-graph-token"
	}
	if opt.DefaultPageSize <= 0 {
		opt.DefaultPageSize = 100
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.AppWrites <= 0 {
		opt.AppWrites = DefaultAppWrites
	}
	if opt.TenantWrites <= 0 {
		opt.TenantWrites = DefaultTenantWrites
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Server{opt: opt, objects: map[string]*object{}, byUPN: map[string]string{}, groups: map[string]*group{},
		rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)), routes: map[string]int64{},
		appWrites: map[string][]time.Time{}, tenantWrites: map[string][]time.Time{}, writesByApp: map[string]int64{},
		writesByTenant: map[string]int64{}, tokens: map[string]caller{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveTop))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.newConns.Add(1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() {
	s.srv.Close()
	if id := s.id.Load(); id != nil {
		id.srv.Close()
	}
}

// SetNextLinkBase makes every later @odata.nextLink start with base (".../v1.0") instead of
// the server's own: a server that sends its clients elsewhere. "" restores the default.
func (s *Server) SetNextLinkBase(base string) {
	s.mu.Lock()
	s.nextBase = base
	s.mu.Unlock()
}

// BaseURL is the Graph base URL to give a client: URL + "/v1.0".
func (s *Server) BaseURL() string { return s.URL + "/v1.0" }

// Token is the bearer token the server accepts.
func (s *Server) Token() string { return s.opt.Token }

// Client returns an HTTP client for the server (plain keep-alive transport).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// newIDLocked returns a deterministic GUID-shaped object ID.
func (s *Server) newIDLocked() string {
	s.nextID++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.nextID>>48, s.nextID&0xffffffffffff)
}

// AddUser adds a user and returns its object ID. An existing UPN returns the existing ID.
func (s *Server) AddUser(upn string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addUserLocked(upn)
}

func (s *Server) addUserLocked(upn string) string {
	if id, ok := s.byUPN[strings.ToLower(upn)]; ok {
		return id
	}
	id := s.newIDLocked()
	s.objects[id] = &object{id: id, kind: KindUser, upn: upn, displayName: upn}
	s.byUPN[strings.ToLower(upn)] = id
	return id
}

// AddUsers adds users and returns their IDs in order.
func (s *Server) AddUsers(upns ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(upns))
	for i, u := range upns {
		out[i] = s.addUserLocked(u)
	}
	return out
}

// AddObject adds a non-user directory object (KindServicePrincipal, KindDevice) and returns
// its ID.
func (s *Server) AddObject(kind, displayName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newIDLocked()
	s.objects[id] = &object{id: id, kind: kind, displayName: displayName}
	return id
}

// DeleteObject removes a user or other object (and its memberships).
func (s *Server) DeleteObject(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteObjectLocked(id)
}

func (s *Server) deleteObjectLocked(id string) {
	o, ok := s.objects[id]
	if !ok {
		return
	}
	delete(s.objects, id)
	if o.upn != "" {
		delete(s.byUPN, strings.ToLower(o.upn))
	}
	for _, g := range s.groups {
		g.remove(id)
	}
}

// UserID returns the object ID of a UPN.
func (s *Server) UserID(upn string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byUPN[strings.ToLower(upn)]
	return id, ok
}

// AddGroup adds a group (ID generated when empty; members must exist) and returns its ID.
func (s *Server) AddGroup(g Group) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.ID == "" {
		g.ID = s.newIDLocked()
	}
	if g.CreatedDateTime.IsZero() {
		g.CreatedDateTime = time.Now().UTC().Truncate(time.Second)
	}
	ng := &group{Group: g, set: map[string]bool{}}
	ng.Members = nil
	for _, m := range g.Members {
		ng.add(m)
	}
	ng.GroupTypes = slices.Clone(g.GroupTypes)
	s.groups[g.ID] = ng
	s.order = append(s.order, g.ID)
	return g.ID
}

func (g *group) add(id string) bool {
	if g.set[id] {
		return false
	}
	g.set[id] = true
	g.Members = append(g.Members, id)
	return true
}

func (g *group) remove(id string) bool {
	if !g.set[id] {
		return false
	}
	delete(g.set, id)
	g.Members = slices.DeleteFunc(g.Members, func(m string) bool { return m == id })
	return true
}

func (g *group) dynamic() bool {
	return slices.ContainsFunc(g.GroupTypes, func(t string) bool { return strings.EqualFold(t, "DynamicMembership") })
}

// Replicate makes every group created through the API visible to reads (Options.HideCreated).
func (s *Server) Replicate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		g.hidden = false
	}
}

// SetMembers replaces the members of a group.
func (s *Server) SetMembers(groupID string, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[groupID]
	if g == nil {
		return
	}
	g.Members, g.set = nil, map[string]bool{}
	for _, id := range ids {
		g.add(id)
	}
}

// Group returns a copy of a group.
func (s *Server) Group(id string) (Group, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[id]
	if !ok {
		return Group{}, false
	}
	return g.copy(), true
}

func (g *group) copy() Group {
	c := g.Group
	c.Members = slices.Clone(g.Members)
	c.GroupTypes = slices.Clone(g.GroupTypes)
	return c
}

// GroupsByNickname returns the groups with a mailNickname (case-insensitive), oldest first.
func (s *Server) GroupsByNickname(nick string) []Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Group
	for _, id := range s.order {
		if g := s.groups[id]; g != nil && strings.EqualFold(g.MailNickname, nick) {
			out = append(out, g.copy())
		}
	}
	return out
}

// Groups returns every group, oldest first.
func (s *Server) Groups() []Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Group, 0, len(s.groups))
	for _, id := range s.order {
		if g := s.groups[id]; g != nil {
			out = append(out, g.copy())
		}
	}
	return out
}

// MemberUPNs returns the sorted user principal names of a group's user members.
func (s *Server) MemberUPNs(groupID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[groupID]
	if g == nil {
		return nil
	}
	var out []string
	for _, m := range g.Members {
		if o := s.objects[m]; o != nil && o.kind == KindUser {
			out = append(out, o.upn)
		}
	}
	slices.Sort(out)
	return out
}

// Scope says where a fault applies.
type Scope uint8

// Fault scopes.
const (
	// Anywhere: top-level requests and batch sub-requests.
	Anywhere Scope = iota
	// TopLevel: only requests that are not inside a batch (including the $batch POST itself).
	TopLevel
	// InBatch: only sub-requests of a batch.
	InBatch
)

// Fault is an injected failure. It matches requests by method and path, and fires for the
// next Times matching requests.
type Fault struct {
	// Method to match ("" matches any).
	Method string
	// Path to match, relative to /v1.0, with "*" for one segment: "/$batch",
	// "/groups/*/members", "/groups/*/members/$ref", "/groups/*/members/*/$ref", "/users".
	// "" matches any path.
	Path  string
	Scope Scope
	// Status is the reply status (429, 503, 504, ...). A 429 or 503 carries RetryAfter when
	// it is set.
	Status     int
	RetryAfter string
	// Drop closes the connection without a reply (top-level requests only). With After, the
	// request is executed first, so the client cannot know that its write was done. After
	// with a Status inside a batch executes the sub-request, then answers the Status.
	Drop, After bool
	// Garbage executes the request (top level only), then answers 200 with its reply cut in
	// half: a body that cannot be decoded.
	Garbage bool
	// Oversize answers 200 (top level only) with a JSON document of this many bytes that
	// never closes, streamed: an answer larger than a client should read.
	Oversize int64
	// Times is how many matching requests fail: 0 means 1, a negative value forever.
	Times int

	hits int
}

// Inject adds a fault. Faults are tried in the order they were added.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times == 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// takeFault returns the first fault matching the request, consuming one of its times.
func (s *Server) takeFault(method, path string, inBatch bool) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.Times >= 0 && f.hits >= f.Times {
			continue
		}
		if (f.Scope == TopLevel && inBatch) || (f.Scope == InBatch && !inBatch) {
			continue
		}
		if f.Method != "" && !strings.EqualFold(f.Method, method) {
			continue
		}
		if f.Path != "" && !pathMatch(f.Path, path) {
			continue
		}
		f.hits++
		s.faultsHit.Add(1)
		c := *f
		return &c
	}
	return nil
}

func pathMatch(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && !strings.EqualFold(ps[i], xs[i]) {
			return false
		}
	}
	return true
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.routeMu.Lock()
	routes := make(map[string]int64, len(s.routes))
	for k, v := range s.routes {
		routes[k] = v
	}
	s.routeMu.Unlock()
	s.quotaMu.Lock()
	byApp, byTenant := maps.Clone(s.writesByApp), maps.Clone(s.writesByTenant)
	s.quotaMu.Unlock()
	return Stats{Requests: s.requests.Load(), Batches: s.batches.Load(), SubRequests: s.subRequests.Load(),
		Routes: routes, MemberPages: s.memberPages.Load(), Throttled: s.throttled.Load(), Faults: s.faultsHit.Load(),
		NewConnections: s.newConns.Load(), Unauthorized: s.unauthorized.Load(), GzipBodies: s.gzipBodies.Load(),
		ObjectDeletes: s.objectDeletes.Load(), MaxInFlight: s.maxInFly.Load(), LagRefusals: s.lagRefusals.Load(),
		Invalid: s.invalid.Load(), Writes: s.writes.Load(), WritesByApp: byApp, WritesByTenant: byTenant,
		WriteLimitHits: s.writeLimitHits.Load(), ThrottleHeaders: s.throttleHeaders.Load()}
}

// ResetStats zeroes the counters (not the state, the write windows, nor the request log).
func (s *Server) ResetStats() {
	for _, c := range []*atomic.Int64{&s.requests, &s.batches, &s.subRequests, &s.memberPages, &s.throttled,
		&s.faultsHit, &s.newConns, &s.unauthorized, &s.gzipBodies, &s.objectDeletes, &s.maxInFly, &s.lagRefusals, &s.invalid,
		&s.writes, &s.writeLimitHits, &s.throttleHeaders} {
		c.Store(0)
	}
	s.quotaMu.Lock()
	s.writesByApp, s.writesByTenant = map[string]int64{}, map[string]int64{}
	s.quotaMu.Unlock()
	s.routeMu.Lock()
	s.routes = map[string]int64{}
	s.routeMu.Unlock()
}

// Log returns "METHOD /path?query" of every request served so far (sub-requests prefixed
// with "batch: "), for debugging failed tests.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *Server) count(route string) {
	s.routeMu.Lock()
	s.routes[route]++
	s.routeMu.Unlock()
}
