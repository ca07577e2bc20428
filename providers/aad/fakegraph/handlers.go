package fakegraph

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reply is the outcome of one request, top level or inside a batch.
type reply struct {
	status  int
	headers map[string]string
	body    any // marshalled as JSON; nil for no body
}

func errReply(status int, code, msg string) reply {
	return reply{status: status, body: map[string]any{"error": map[string]any{"code": code, "message": msg,
		"innerError": map[string]any{"date": time.Now().UTC().Format(time.RFC3339), "request-id": "fake"}}}}
}

func faultReply(f *Fault) reply {
	code := map[int]string{429: "TooManyRequests", 503: "ServiceUnavailable", 504: "GatewayTimeout"}[f.Status]
	if code == "" {
		code = "FakeFault"
	}
	r := errReply(f.Status, code, fmt.Sprintf("injected fault %d", f.Status))
	if f.RetryAfter != "" {
		r.headers = map[string]string{"Retry-After": f.RetryAfter}
	}
	return r
}

func (s *Server) serveTop(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFly.Load()
		if n <= m || s.maxInFly.CompareAndSwap(m, n) {
			break
		}
	}
	if s.opt.Latency > 0 {
		t := time.NewTimer(s.opt.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rep, ok := s.authorized(r); !ok {
		s.unauthorized.Add(1)
		s.write(w, rep)
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	c := s.callerOf(tok)
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		// No Microsoft Graph documentation says that request bodies may be compressed (the
		// API reference documents compressed responses only). The SDK design spec that made
		// msgraph-sdk-go gzip request bodies (github.com/microsoftgraph/msgraph-sdk-design,
		// middleware/CompressionHandler.md, pull request 71) only says that the gateway was
		// "adding support" and that clients must fall back to an uncompressed body on 415.
		// So the fake refuses a compressed body the way HTTP says a server that does not
		// take that coding answers (RFC 9110, 8.4), and clients must not send one.
		s.gzipBodies.Add(1)
		s.write(w, errReply(http.StatusUnsupportedMediaType, "BadRequest",
			"Content-Encoding '"+ce+"' is not supported for request bodies."))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.write(w, errReply(http.StatusBadRequest, "BadRequest", "unreadable body: "+err.Error()))
		return
	}
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v1.0")
	if !ok {
		s.write(w, errReply(http.StatusNotFound, "BadRequest", "only /v1.0 is served"))
		return
	}
	s.logf("%s %s?%s", r.Method, path, r.URL.RawQuery)
	if f := s.takeFault(r.Method, unescapePath(path), false); f != nil {
		if f.Oversize > 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			chunk := []byte(`{"responses": "` + strings.Repeat("x", 32<<10-15))
			for left := f.Oversize; left > 0 && r.Context().Err() == nil; left -= int64(len(chunk)) {
				if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
					return
				}
				chunk = bytes.Repeat([]byte("x"), 32<<10)
			}
			return
		}
		if f.Garbage {
			rep := s.serve(c, r.Method, path, r.URL.RawQuery, body)
			b, _ := json.Marshal(rep.body)
			b = b[:len(b)/2]
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.WriteHeader(http.StatusOK)
			w.Write(b)
			return
		}
		if f.Drop && f.After {
			s.serve(c, r.Method, path, r.URL.RawQuery, body)
			s.drop(w)
			return
		}
		if f.Drop {
			s.drop(w)
			return
		}
		s.count(routeClass(r.Method, unescapePath(path)))
		if f.Status == http.StatusTooManyRequests {
			s.throttled.Add(1)
		}
		s.write(w, faultReply(f))
		return
	}
	s.write(w, s.serve(c, r.Method, path, r.URL.RawQuery, body))
}

// serve runs a top-level request of c: a $batch, or one request.
func (s *Server) serve(c caller, method, path, rawQuery string, body []byte) reply {
	if method == http.MethodPost && path == "/$batch" {
		return s.batch(c, body)
	}
	return s.dispatch(c, method, path, rawQuery, body)
}

// drop closes the connection without a reply.
func (s *Server) drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fakegraph: connection cannot be hijacked")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		c.Close()
	}
}

func (s *Server) write(w http.ResponseWriter, r reply) {
	for k, v := range r.headers {
		w.Header().Set(k, v)
	}
	if r.body == nil {
		w.WriteHeader(r.status)
		return
	}
	b, _ := json.Marshal(r.body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(r.status)
	w.Write(b)
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func unescapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, x := range parts {
		if u, err := url.PathUnescape(x); err == nil {
			parts[i] = u
		}
	}
	return strings.Join(parts, "/")
}

// routeClass names the route of a request for the counters.
func routeClass(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) == 1 && segs[0] == "$batch":
		return "batch"
	case segs[0] == "groups" && len(segs) == 1:
		if method == http.MethodPost {
			return "groups.create"
		}
		return "groups.list"
	case segs[0] == "groups" && len(segs) == 2:
		switch method {
		case http.MethodPatch:
			return "groups.patch"
		case http.MethodDelete:
			return "groups.delete"
		}
		return "groups.get"
	case segs[0] == "groups" && len(segs) == 3 && segs[2] == "members":
		return "members.list"
	case segs[0] == "groups" && len(segs) == 4 && segs[2] == "members" && segs[3] == "$ref":
		return "members.add"
	case segs[0] == "groups" && len(segs) == 5 && segs[2] == "members" && segs[4] == "$ref":
		return "members.remove"
	case segs[0] == "groups" && len(segs) == 4 && segs[2] == "members" && method == http.MethodDelete:
		return "members.delete-object"
	case segs[0] == "users" && len(segs) == 1:
		return "users.list"
	case segs[0] == "users" && len(segs) == 2:
		return "users.get"
	case segs[0] == "directoryObjects" && len(segs) == 2:
		return "objects.get"
	}
	return "unknown"
}

// dispatch runs one request of c (top level or a batch item) against the state, within the
// write quotas.
func (s *Server) dispatch(c caller, method, escapedPath, rawQuery string, body []byte) reply {
	path := unescapePath(escapedPath)
	route := routeClass(method, path)
	s.count(route)
	if !isWrite(method, route) {
		return s.route(route, method, path, rawQuery, body)
	}
	refused, pct := s.admitWrite(c)
	if refused != nil {
		return *refused
	}
	r := s.route(route, method, path, rawQuery, body)
	if pct != "" {
		if r.headers == nil {
			r.headers = map[string]string{}
		}
		r.headers["x-ms-throttle-limit-percentage"] = pct
	}
	return r
}

// route runs one request against the state.
func (s *Server) route(route, method, path, rawQuery string, body []byte) reply {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return errReply(http.StatusBadRequest, "BadRequest", "invalid query: "+err.Error())
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch route {
	case "groups.list":
		return s.listGroups(q)
	case "groups.create":
		return s.createGroup(body)
	case "groups.get":
		return s.getGroup(segs[1], q)
	case "groups.patch":
		return s.patchGroup(segs[1], body)
	case "groups.delete":
		return s.deleteGroup(segs[1])
	case "members.list":
		return s.listMembers(segs[1], q)
	case "members.add":
		return s.addMember(segs[1], body)
	case "members.remove":
		return s.removeMember(segs[1], segs[3])
	case "members.delete-object":
		s.objectDeletes.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.objects[segs[3]] == nil {
			return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+segs[3]+"' does not exist.")
		}
		s.deleteObjectLocked(segs[3])
		return reply{status: http.StatusNoContent}
	case "users.list":
		return s.listUsers(q)
	case "users.get":
		return s.getUser(segs[1], q)
	case "objects.get":
		return s.getObject(segs[1], q)
	}
	return errReply(http.StatusBadRequest, "BadRequest", fmt.Sprintf("unsupported request %s %s", method, path))
}

// --- reads ---------------------------------------------------------------------------------

func selectFields(q url.Values) map[string]bool {
	sel := q.Get("$select")
	if sel == "" {
		return nil
	}
	out := map[string]bool{"id": true}
	for _, f := range strings.Split(sel, ",") {
		out[strings.TrimSpace(f)] = true
	}
	return out
}

func project(m map[string]any, sel map[string]bool) map[string]any {
	if sel == nil {
		return m
	}
	for k := range m {
		if k != "@odata.type" && !sel[k] {
			delete(m, k)
		}
	}
	return m
}

func (g *group) json() map[string]any {
	types := g.GroupTypes
	if types == nil {
		types = []string{}
	}
	var desc any
	if g.Description != "" {
		desc = g.Description
	}
	return map[string]any{"@odata.type": "#microsoft.graph.group", "id": g.ID, "displayName": g.DisplayName,
		"mailNickname": g.MailNickname, "description": desc, "securityEnabled": g.SecurityEnabled,
		"mailEnabled": g.MailEnabled, "groupTypes": types, "createdDateTime": g.CreatedDateTime.UTC().Format(time.RFC3339)}
}

func (o *object) json() map[string]any {
	m := map[string]any{"@odata.type": "#microsoft.graph." + o.kind, "id": o.id, "displayName": o.displayName}
	if o.kind == KindUser {
		m["userPrincipalName"] = o.upn
	}
	return m
}

// pageSize reads $top: default DefaultPageSize, 1..999.
func (s *Server) pageSize(q url.Values) (int, *reply) {
	top := s.opt.DefaultPageSize
	if v := q.Get("$top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 999 {
			r := errReply(http.StatusBadRequest, "Request_BadRequest", "Invalid page size specified: '"+v+"'. Must be between 1 and 999 inclusive.")
			return 0, &r
		}
		top = n
	}
	return top, nil
}

type token struct {
	Kind    string `json:"k"`
	ID      string `json:"g,omitempty"`
	Offset  int    `json:"o"`
	Empties int    `json:"e,omitempty"`
}

func encodeToken(t token) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string) (token, bool) {
	var t token
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &t) != nil {
		return token{}, false
	}
	return t, true
}

// nextLink builds an absolute next link on the server's own base: the same path and query
// with a new $skiptoken.
func (s *Server) nextLink(path string, q url.Values, t token) string {
	nq := url.Values{}
	for k, v := range q {
		if k != "$skiptoken" {
			nq[k] = v
		}
	}
	nq.Set("$skiptoken", encodeToken(t))
	base := s.URL + "/v1.0"
	if s.nextBase != "" {
		base = s.nextBase
	}
	return base + path + "?" + nq.Encode()
}

func collection(context string, items []any, next string) reply {
	if items == nil {
		items = []any{}
	}
	body := map[string]any{"@odata.context": context, "value": items}
	if next != "" {
		body["@odata.nextLink"] = next
	}
	return reply{status: http.StatusOK, body: body}
}

func (s *Server) listMembers(gid string, q url.Values) reply {
	top, bad := s.pageSize(q)
	if bad != nil {
		return *bad
	}
	t := token{Kind: "members", ID: gid}
	if v := q.Get("$skiptoken"); v != "" {
		var ok bool
		if t, ok = decodeToken(v); !ok || t.Kind != "members" || t.ID != gid {
			return errReply(http.StatusBadRequest, "Directory_ExpiredPageToken", "The specified page token value has expired and can no longer be included in your request.")
		}
	}
	sel := selectFields(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[gid]
	if g == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+gid+"' does not exist or one of its queried reference-property objects are not present.")
	}
	s.memberPages.Add(1)
	ctx := s.URL + "/v1.0/$metadata#directoryObjects"
	path := "/groups/" + gid + "/members"
	if t.Empties < s.opt.EmptyPages {
		return collection(ctx, nil, s.nextLink(path, q, token{Kind: "members", ID: gid, Empties: t.Empties + 1}))
	}
	end := min(t.Offset+top, len(g.Members))
	var items []any
	for _, id := range g.Members[min(t.Offset, end):end] {
		var m map[string]any
		if o := s.objects[id]; o != nil {
			m = project(o.json(), sel)
		} else if ng := s.groups[id]; ng != nil {
			m = project(ng.json(), sel)
		} else {
			continue
		}
		if s.opt.LimitedMembers {
			// What Graph returns for members of a type the application may not read.
			m = map[string]any{"@odata.type": m["@odata.type"], "id": m["id"]}
		}
		items = append(items, m)
	}
	next := ""
	if end < len(g.Members) {
		next = s.nextLink(path, q, token{Kind: "members", ID: gid, Offset: end, Empties: t.Empties})
	}
	return collection(ctx, items, next)
}

func (s *Server) listGroups(q url.Values) reply {
	top, bad := s.pageSize(q)
	if bad != nil {
		return *bad
	}
	f, err := parseFilter(q.Get("$filter"))
	if err != nil {
		return errReply(http.StatusBadRequest, "Request_UnsupportedQuery", err.Error())
	}
	t := token{Kind: "groups"}
	if v := q.Get("$skiptoken"); v != "" {
		var ok bool
		if t, ok = decodeToken(v); !ok || t.Kind != "groups" {
			return errReply(http.StatusBadRequest, "Directory_ExpiredPageToken", "bad page token")
		}
	}
	sel := selectFields(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*group
	for _, id := range s.order {
		g := s.groups[id]
		if g == nil || g.hidden {
			continue
		}
		props := map[string]any{"id": g.ID, "mailNickname": g.MailNickname, "displayName": g.DisplayName,
			"securityEnabled": g.SecurityEnabled, "mailEnabled": g.MailEnabled}
		if f.match(props) {
			match = append(match, g)
		}
	}
	end := min(t.Offset+top, len(match))
	var items []any
	for _, g := range match[min(t.Offset, end):end] {
		items = append(items, project(g.json(), sel))
	}
	next := ""
	if end < len(match) {
		next = s.nextLink("/groups", q, token{Kind: "groups", Offset: end})
	}
	return collection(s.URL+"/v1.0/$metadata#groups", items, next)
}

func (s *Server) getGroup(id string, q url.Values) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil || g.hidden {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+id+"' does not exist or one of its queried reference-property objects are not present.")
	}
	return reply{status: http.StatusOK, body: project(g.json(), selectFields(q))}
}

func (s *Server) listUsers(q url.Values) reply {
	if s.opt.DenyUserReads {
		return errReply(http.StatusForbidden, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")
	}
	top, bad := s.pageSize(q)
	if bad != nil {
		return *bad
	}
	f, err := parseFilter(q.Get("$filter"))
	if err != nil {
		return errReply(http.StatusBadRequest, "Request_UnsupportedQuery", err.Error())
	}
	t := token{Kind: "users"}
	if v := q.Get("$skiptoken"); v != "" {
		var ok bool
		if t, ok = decodeToken(v); !ok || t.Kind != "users" {
			return errReply(http.StatusBadRequest, "Directory_ExpiredPageToken", "bad page token")
		}
	}
	sel := selectFields(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*object
	if ids, ok := f.lookup("userPrincipalName"); ok {
		// Index lookup for the common "userPrincipalName in (...)" query.
		for _, u := range ids {
			if id, ok := s.byUPN[strings.ToLower(u)]; ok {
				match = append(match, s.objects[id])
			}
		}
	} else {
		for _, o := range s.objects {
			if o.kind == KindUser && f.match(map[string]any{"id": o.id, "userPrincipalName": o.upn, "displayName": o.displayName}) {
				match = append(match, o)
			}
		}
		sortObjects(match)
	}
	end := min(t.Offset+top, len(match))
	var items []any
	for _, o := range match[min(t.Offset, end):end] {
		m := project(o.json(), sel)
		delete(m, "@odata.type") // typed collection: Graph omits the per-item type
		items = append(items, m)
	}
	next := ""
	if end < len(match) {
		next = s.nextLink("/users", q, token{Kind: "users", Offset: end})
	}
	return collection(s.URL+"/v1.0/$metadata#users", items, next)
}

func (s *Server) getUser(key string, q url.Values) reply {
	if s.opt.DenyUserReads {
		return errReply(http.StatusForbidden, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[key]
	if o == nil || o.kind != KindUser {
		if id, ok := s.byUPN[strings.ToLower(key)]; ok {
			o = s.objects[id]
		} else {
			o = nil
		}
	}
	if o == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+key+"' does not exist or one of its queried reference-property objects are not present.")
	}
	m := project(o.json(), selectFields(q))
	delete(m, "@odata.type")
	return reply{status: http.StatusOK, body: m}
}

func (s *Server) getObject(id string, q url.Values) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objects[id]; o != nil {
		return reply{status: http.StatusOK, body: project(o.json(), selectFields(q))}
	}
	if g := s.groups[id]; g != nil {
		return reply{status: http.StatusOK, body: project(g.json(), selectFields(q))}
	}
	return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+id+"' does not exist.")
}

// --- writes --------------------------------------------------------------------------------

// refID extracts the object ID from an @odata.id / bind URL (".../directoryObjects/{id}",
// ".../users/{id}").
func refID(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		u = u[i+1:]
	}
	// Graph also accepts directoryObjects('id').
	u = strings.TrimSuffix(strings.TrimPrefix(u, "directoryObjects('"), "')")
	return u
}

func (s *Server) existsLocked(id string) bool { return s.objects[id] != nil || s.groups[id] != nil }

var alreadyExists = errReply(http.StatusBadRequest, "Request_BadRequest",
	"One or more added object references already exist for the following modified properties: 'members'.")

func (s *Server) addMember(gid string, body []byte) reply {
	var ref struct {
		ID string `json:"@odata.id"`
	}
	if err := json.Unmarshal(body, &ref); err != nil || ref.ID == "" {
		return errReply(http.StatusBadRequest, "Request_BadRequest", "a body with @odata.id is required")
	}
	oid := refID(ref.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[gid]
	if g == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+gid+"' does not exist.")
	}
	if r, lagging := s.lagLocked(g); lagging {
		return r
	}
	if !s.existsLocked(oid) {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+oid+"' does not exist or one of its queried reference-property objects are not present.")
	}
	if g.dynamic() {
		return errReply(http.StatusBadRequest, "Request_BadRequest", "Insufficient privileges to complete the operation: the group has dynamic membership.")
	}
	if !g.add(oid) {
		return alreadyExists
	}
	return reply{status: http.StatusNoContent}
}

func (s *Server) removeMember(gid, oid string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[gid]
	if g == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+gid+"' does not exist.")
	}
	if g.dynamic() {
		return errReply(http.StatusBadRequest, "Request_BadRequest", "Insufficient privileges to complete the operation: the group has dynamic membership.")
	}
	if !g.remove(oid) {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+oid+"' does not exist or one of its queried reference-property objects are not present.")
	}
	return reply{status: http.StatusNoContent}
}

type groupBody struct {
	DisplayName     *string  `json:"displayName"`
	MailNickname    *string  `json:"mailNickname"`
	Description     *string  `json:"description"`
	SecurityEnabled *bool    `json:"securityEnabled"`
	MailEnabled     *bool    `json:"mailEnabled"`
	GroupTypes      []string `json:"groupTypes"`
	Bind            []string `json:"members@odata.bind"`
}

// bindLocked checks a members@odata.bind list (at most 20, every object present and not yet a
// member) and returns the IDs, or an error reply: nothing is added unless all are valid.
func (s *Server) bindLocked(g *group, urls []string) ([]string, *reply) {
	if len(urls) > 20 {
		r := errReply(http.StatusBadRequest, "Request_BadRequest", "The request contains more than 20 members@odata.bind references.")
		return nil, &r
	}
	ids := make([]string, 0, len(urls))
	for _, u := range urls {
		id := refID(u)
		if !s.existsLocked(id) {
			r := errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+id+"' does not exist or one of its queried reference-property objects are not present.")
			return nil, &r
		}
		if g != nil && g.set[id] {
			r := alreadyExists
			return nil, &r
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (s *Server) createGroup(body []byte) reply {
	var b groupBody
	if err := json.Unmarshal(body, &b); err != nil {
		return errReply(http.StatusBadRequest, "BadRequest", "invalid JSON: "+err.Error())
	}
	if b.DisplayName == nil || b.MailNickname == nil || b.MailEnabled == nil || b.SecurityEnabled == nil {
		return errReply(http.StatusBadRequest, "Request_BadRequest", "displayName, mailNickname, mailEnabled and securityEnabled are required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	unified := slices.ContainsFunc(b.GroupTypes, func(t string) bool { return strings.EqualFold(t, "Unified") })
	if r, bad := s.checkNickLocked(*b.MailNickname, unified, ""); bad {
		return r
	}
	ids, bad := s.bindLocked(nil, b.Bind)
	if bad != nil {
		return *bad
	}
	g := &group{Group: Group{ID: s.newIDLocked(), DisplayName: *b.DisplayName, MailNickname: *b.MailNickname,
		SecurityEnabled: *b.SecurityEnabled, MailEnabled: *b.MailEnabled, GroupTypes: b.GroupTypes,
		CreatedDateTime: time.Now().UTC().Truncate(time.Second)}, set: map[string]bool{}, hidden: s.opt.HideCreated,
		lag: s.opt.WriteLag}
	if b.Description != nil {
		g.Description = *b.Description
	}
	for _, id := range ids {
		g.add(id)
	}
	s.groups[g.ID] = g
	s.order = append(s.order, g.ID)
	return reply{status: http.StatusCreated, body: g.json()}
}

func (s *Server) patchGroup(id string, body []byte) reply {
	var b groupBody
	if err := json.Unmarshal(body, &b); err != nil {
		return errReply(http.StatusBadRequest, "BadRequest", "invalid JSON: "+err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+id+"' does not exist.")
	}
	if len(b.Bind) > 0 {
		if r, lagging := s.lagLocked(g); lagging {
			return r
		}
	}
	if b.MailNickname != nil {
		if r, bad := s.checkNickLocked(*b.MailNickname, g.Unified(), g.ID); bad {
			return r
		}
	}
	ids, bad := s.bindLocked(g, b.Bind)
	if bad != nil {
		return *bad
	}
	if len(ids) > 0 && g.dynamic() {
		return errReply(http.StatusBadRequest, "Request_BadRequest", "Insufficient privileges to complete the operation: the group has dynamic membership.")
	}
	for _, m := range ids {
		g.add(m)
	}
	if b.Description != nil {
		g.Description = *b.Description
	}
	if b.DisplayName != nil {
		g.DisplayName = *b.DisplayName
	}
	if b.MailNickname != nil {
		g.MailNickname = *b.MailNickname
	}
	return reply{status: http.StatusNoContent}
}

func (s *Server) deleteGroup(id string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[id] == nil {
		return errReply(http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+id+"' does not exist.")
	}
	delete(s.groups, id)
	for i, x := range s.order {
		if x == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	for _, g := range s.groups {
		g.remove(id)
	}
	return reply{status: http.StatusNoContent}
}

// --- $batch --------------------------------------------------------------------------------

type batchItem struct {
	ID        string          `json:"id"`
	Method    string          `json:"method"`
	URL       string          `json:"url"`
	Headers   json.RawMessage `json:"headers"`
	Body      json.RawMessage `json:"body"`
	DependsOn []string        `json:"dependsOn"`
}

type batchReply struct {
	ID      string            `json:"id"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`
}

func (s *Server) batch(c caller, body []byte) reply {
	s.batches.Add(1)
	s.count("batch")
	var req struct {
		Requests []batchItem `json:"requests"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errReply(http.StatusBadRequest, "BadRequest", "Invalid batch payload: "+err.Error())
	}
	if len(req.Requests) == 0 {
		return errReply(http.StatusBadRequest, "BadRequest", "Invalid batch payload format.")
	}
	if len(req.Requests) > 20 {
		return errReply(http.StatusBadRequest, "BadRequest", "The number of requests in a batch exceeds the limit of 20.")
	}
	seen := map[string]bool{}
	for _, it := range req.Requests {
		if it.ID == "" || it.Method == "" || it.URL == "" {
			return errReply(http.StatusBadRequest, "BadRequest", "Each batch request needs id, method and url.")
		}
		if seen[it.ID] {
			return errReply(http.StatusBadRequest, "BadRequest", "Batch request ids must be unique: "+it.ID)
		}
		seen[it.ID] = true
	}
	s.subRequests.Add(int64(len(req.Requests)))
	status := map[string]int{}
	out := make([]batchReply, 0, len(req.Requests))
	for _, it := range req.Requests {
		r := s.batchOne(c, it, status)
		status[it.ID] = r.status
		br := batchReply{ID: it.ID, Status: r.status, Headers: r.headers}
		if r.body != nil {
			if br.Headers == nil {
				br.Headers = map[string]string{}
			}
			br.Headers["Content-Type"] = "application/json"
			br.Body = r.body
		}
		out = append(out, br)
	}
	s.mu.Lock()
	s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	s.mu.Unlock()
	return reply{status: http.StatusOK, body: map[string]any{"responses": out}}
}

func (s *Server) batchOne(c caller, it batchItem, done map[string]int) reply {
	for _, d := range it.DependsOn {
		if st, ok := done[d]; !ok || st >= 400 {
			return errReply(http.StatusFailedDependency, "FailedDependency", "dependency "+d+" failed")
		}
	}
	raw := it.URL
	if !strings.HasPrefix(raw, "/") {
		raw = "/" + raw
	}
	path, query, _ := strings.Cut(raw, "?")
	body := []byte(it.Body)
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		body = nil
	}
	s.logf("batch: %s %s?%s", it.Method, path, query)
	if f := s.takeFault(it.Method, unescapePath(path), true); f != nil && f.Status != 0 {
		if f.After {
			s.dispatch(c, strings.ToUpper(it.Method), path, query, body) // counts the route
			return faultReply(f)
		}
		s.count(routeClass(it.Method, unescapePath(path)))
		if f.Status == http.StatusTooManyRequests {
			s.throttled.Add(1)
		}
		return faultReply(f)
	}
	return s.dispatch(c, strings.ToUpper(it.Method), path, query, body)
}

// lagLocked refuses a member add to a group that Graph's replicas may not know yet
// (Options.WriteLag), with the answer Graph documents for it ("Add members": "requests to add
// members to the group might return a 400 Bad Request error with the message: 'The source
// resource object or one of the objects being referenced do not exist.'").
func (s *Server) lagLocked(g *group) (reply, bool) {
	if g.lag <= 0 {
		return reply{}, false
	}
	g.lag--
	s.lagRefusals.Add(1)
	return errReply(http.StatusBadRequest, "Request_BadRequest",
		"The source resource object or one of the objects being referenced do not exist."), true
}

// Unified reports a Microsoft 365 group.
func (g *Group) Unified() bool {
	return slices.ContainsFunc(g.GroupTypes, func(t string) bool { return strings.EqualFold(t, "Unified") })
}

// checkNickLocked refuses a mailNickname that Graph refuses. The group resource documents it
// as "unique for Microsoft 365 groups in the organization. Maximum length is 64 characters.
// This property can contain only characters in the ASCII character set 0 - 127 except the
// following characters: @ () \ [] " ; : <> , SPACE". Earlier versions of that description
// (still in the SDKs' generated models) also list the period, and issue 9 does too, so the
// fake refuses it: a fake stricter than the service is safe, a laxer one is not. Uniqueness
// is documented for Microsoft 365 groups only (and directoryObject: validateProperties checks
// it for them), so security groups may share a mailNickname, as they do in real tenants.
// self is the group being updated ("" for a create).
func (s *Server) checkNickLocked(nick string, unified bool, self string) (reply, bool) {
	if nick == "" || len(nick) > 64 || strings.IndexFunc(nick, invalidNickRune) >= 0 {
		s.invalid.Add(1)
		return errReply(http.StatusBadRequest, "Request_BadRequest",
			"Invalid value specified for property 'mailNickname' of resource 'Group'."), true
	}
	if !unified {
		return reply{}, false
	}
	for _, g := range s.groups {
		if g.ID != self && g.Unified() && strings.EqualFold(g.MailNickname, nick) {
			s.invalid.Add(1)
			r := errReply(http.StatusBadRequest, "Request_BadRequest",
				"Another object with the same value for property mailNickname already exists.")
			r.body.(map[string]any)["error"].(map[string]any)["details"] = []any{
				map[string]any{"code": "ObjectConflict", "message": "Another object with the same value for property mailNickname already exists.", "target": "mailNickname"}}
			return r, true
		}
	}
	return reply{}, false
}

// invalidNickRune reports a character that a mailNickname cannot contain: anything outside
// printable ASCII, and @ ( ) \ [ ] " ; : . < > , and space.
func invalidNickRune(r rune) bool {
	return r <= ' ' || r >= 0x7f || strings.ContainsRune(`@()\[]";:.<>,`, r)
}
