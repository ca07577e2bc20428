package fakegithub

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

func lowerKey(orgLogin, slug string) string {
	return strings.ToLower(orgLogin) + "/" + strings.ToLower(slug)
}

// serveREST routes a REST request (path already stripped of /api/v3).
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, p string) {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(seg) == 1 && seg[0] == "user" && r.Method == http.MethodGet:
		s.authenticatedUser(w, r)
	case len(seg) == 5 && seg[0] == "orgs" && seg[2] == "teams" && seg[4] == "invitations" && r.Method == http.MethodGet:
		s.listTeamInvitations(w, r, seg[1], seg[3])
	case len(seg) == 1 && seg[0] == "meta" && r.Method == http.MethodGet:
		m := map[string]any{"verifiable_password_authentication": true}
		if s.opt.GHES {
			m["installed_version"] = "3.13.0"
		}
		writeJSON(w, http.StatusOK, m)
	case len(seg) == 3 && seg[0] == "orgs" && seg[2] == "members" && r.Method == http.MethodGet:
		s.listMembers(w, r, seg[1])
	case len(seg) == 3 && seg[0] == "orgs" && seg[2] == "invitations" && r.Method == http.MethodGet:
		s.listInvitations(w, r, seg[1])
	case len(seg) == 4 && seg[0] == "orgs" && seg[2] == "memberships":
		s.orgMembership(w, r, seg[1], seg[3])
	case len(seg) == 3 && seg[0] == "orgs" && seg[2] == "teams":
		switch r.Method {
		case http.MethodGet:
			s.listTeams(w, r, seg[1])
		case http.MethodPost:
			s.createTeam(w, r, seg[1])
		default:
			notFound(w)
		}
	case len(seg) == 4 && seg[0] == "orgs" && seg[2] == "teams":
		s.teamBySlug(w, r, seg[1], seg[3])
	case len(seg) == 5 && seg[0] == "orgs" && seg[2] == "teams" && seg[4] == "teams" && r.Method == http.MethodGet:
		s.listChildTeams(w, r, seg[1], seg[3])
	case len(seg) == 6 && seg[0] == "orgs" && seg[2] == "teams" && seg[4] == "team-sync" && seg[5] == "group-mappings" && r.Method == http.MethodGet:
		s.groupMappings(w, seg[1], seg[3])
	case len(seg) == 2 && seg[0] == "users" && r.Method == http.MethodGet:
		s.account(w, seg[1])
	case len(seg) == 6 && seg[0] == "orgs" && seg[2] == "teams" && seg[4] == "memberships":
		s.teamMembership(w, r, seg[1], seg[3], seg[5])
	default:
		notFound(w)
	}
}

// page applies per_page/page to n items and writes the Link header GitHub sends.
func page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, _ := strconv.Atoi(q.Get("page"))
	pg = max(pg, 1)
	last := max((n+per-1)/per, 1)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		if r.TLS != nil {
			u.Scheme = "https"
		}
		v := url.Values{}
		maps.Copy(v, q)
		v.Set("page", strconv.Itoa(p))
		v.Set("per_page", strconv.Itoa(per))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"), link(pg-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((pg-1)*per, n)
	return lo, min(lo+per, n)
}

func (s *Server) user(k string) map[string]any {
	return map[string]any{"login": s.users[k], "id": userID(k), "type": "User"}
}

// userID is a stable fake ID derived from the login.
func userID(k string) int64 {
	var h int64 = 7
	for i := 0; i < len(k); i++ {
		h = (h*31 + int64(k[i])) % 1_000_000_007
	}
	return h
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, orgLogin string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	role := r.URL.Query().Get("role")
	var keys []string
	for k, rl := range o.members {
		if role == "" || role == "all" || role == rl {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	lo, hi := page(w, r, len(keys))
	out := make([]map[string]any, 0, hi-lo)
	for _, k := range keys[lo:hi] {
		out = append(out, s.user(k))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request, orgLogin string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	keys := slices.Sorted(maps.Keys(o.pending))
	lo, hi := page(w, r, len(keys))
	out := make([]map[string]any, 0, hi-lo)
	for _, k := range keys[lo:hi] {
		out = append(out, s.invitationJSON(o, k))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) invitationJSON(o *org, k string) map[string]any {
	role := "direct_member"
	if o.pending[k].role == "admin" {
		role = "admin"
	}
	return map[string]any{"id": userID(k), "login": s.users[k], "role": role, "invitation_source": "member",
		"team_count": len(o.pending[k].teams)}
}

// listTeamInvitations lists the pending invitations that carry a team
// (GET /orgs/{org}/teams/{slug}/invitations).
func (s *Server) listTeamInvitations(w http.ResponseWriter, r *http.Request, orgLogin, slug string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	var keys []string
	for k, inv := range o.pending {
		if inv.teams[strings.ToLower(slug)] != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	lo, hi := page(w, r, len(keys))
	out := make([]map[string]any, 0, hi-lo)
	for _, k := range keys[lo:hi] {
		out = append(out, s.invitationJSON(o, k))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// authenticatedUser is GET /user: the token's user; an installation token has none.
func (s *Server) authenticatedUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opt.TokenUser == "" || callerOf(r).inst != nil {
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
			"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"})
		return
	}
	writeJSON(w, http.StatusOK, s.user(s.viewerKey(r)))
}

// inviteRefusal is GitHub's 422 to an invitation that cannot be sent: the 24-hour limit is
// used up, or the user blocked the org. Called with s.mu held; "" when it may be sent.
func (s *Server) inviteRefusal(o *org, k string) string {
	switch {
	case o.blocked[k]:
		return "blocked"
	case !s.invitationAllowed(false):
		return "limit"
	}
	return ""
}

// refuseInvite answers the 422 of inviteRefusal. GitHub documents the limit (50, or 500 per
// 24 h) but not its answer's wording; the fake words it as an unprocessable invitation "over
// invitation rate limit", and a blocked user as "User is blocked".
func refuseInvite(w http.ResponseWriter, why string) {
	e := map[string]any{"resource": "OrganizationInvitation", "code": "unprocessable", "field": "data"}
	switch why {
	case "limit":
		e["message"] = "Over invitation rate limit"
	case "blocked":
		// The wording GitHub support quotes (github/docs#1035).
		e["message"] = "User is blocked"
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
		"errors":            []map[string]any{e},
		"documentation_url": "https://docs.github.com/rest/orgs/members#set-organization-membership-for-a-user"})
}

func decodeBody(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if len(strings.TrimSpace(string(b))) == 0 {
		return m, nil
	}
	return m, json.Unmarshal(b, &m)
}

func rawString(m map[string]json.RawMessage, k string) (string, bool) {
	v, ok := m[k]
	if !ok || string(v) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func (s *Server) orgMembership(w http.ResponseWriter, r *http.Request, orgLogin, login string) {
	body, err := decodeBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mixedCase(w, r, login) {
		return
	}
	k := strings.ToLower(login)
	o := s.org(orgLogin, false)
	if o == nil || s.users[k] == "" {
		notFound(w)
		return
	}
	reply := func(state, role string) {
		writeJSON(w, http.StatusOK, map[string]any{"state": state, "role": role, "user": s.user(k),
			"organization": map[string]any{"login": o.login}})
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case o.members[k] != "":
			reply("active", o.members[k])
		case o.pending[k] != nil:
			reply("pending", o.pending[k].role)
		default:
			notFound(w)
		}
	case http.MethodPut:
		role, _ := rawString(body, "role")
		if role == "" {
			role = "member"
		}
		if role != "admin" && role != "member" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors":            []map[string]any{{"resource": "OrganizationInvitation", "code": "invalid", "field": "role"}},
				"documentation_url": "https://docs.github.com/rest/orgs/members#set-organization-membership-for-a-user"})
			return
		}
		switch {
		case o.members[k] != "":
			o.members[k] = role
			reply("active", role)
		case o.pending[k] != nil:
			o.pending[k].role = role
			reply("pending", role)
		default:
			if why := s.inviteRefusal(o, k); why != "" {
				refuseInvite(w, why)
				return
			}
			s.invitationAllowed(true)
			o.pending[k] = &invite{role: role, teams: map[string]string{}}
			if s.opt.AutoAccept {
				s.accept(o, k)
				reply("active", role)
				return
			}
			reply("pending", role)
		}
	case http.MethodDelete:
		switch {
		case o.members[k] != "":
			delete(o.members, k)
			for _, t := range o.teams {
				delete(t.members, k)
			}
		case o.pending[k] != nil:
			delete(o.pending, k)
		default:
			notFound(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		notFound(w)
	}
}

func (s *Server) teamJSON(t *team, o *org) map[string]any {
	m := map[string]any{"id": t.id, "node_id": fmt.Sprintf("T_%d", t.id), "name": t.name, "slug": t.slug,
		"privacy": t.privacy, "description": t.description, "members_count": len(t.members),
		"organization": map[string]any{"login": o.login}, "parent": nil}
	if t.parent != nil {
		m["parent"] = map[string]any{"id": t.parent.id, "slug": t.parent.slug, "name": t.parent.name}
	}
	return m
}

func (s *Server) listTeams(w http.ResponseWriter, r *http.Request, orgLogin string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	slugs := slices.Sorted(maps.Keys(o.teams))
	lo, hi := page(w, r, len(slugs))
	out := make([]map[string]any, 0, hi-lo)
	for _, sl := range slugs[lo:hi] {
		out = append(out, s.teamJSON(o.teams[sl], o))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// listChildTeams lists a team's immediate child teams (GET /orgs/{org}/teams/{slug}/teams).
func (s *Server) listChildTeams(w http.ResponseWriter, r *http.Request, orgLogin, slug string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	t := o.teams[strings.ToLower(slug)]
	var slugs []string
	for sl, c := range o.teams {
		if c.parent == t {
			slugs = append(slugs, sl)
		}
	}
	slices.Sort(slugs)
	lo, hi := page(w, r, len(slugs))
	out := make([]map[string]any, 0, hi-lo)
	for _, sl := range slugs[lo:hi] {
		out = append(out, s.teamJSON(o.teams[sl], o))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) teamByID(o *org, id int64) *team {
	for _, t := range o.teams {
		if t.id == id {
			return t
		}
	}
	return nil
}

// setParentAndPrivacy applies parent_team_id and privacy from a create/edit body, with
// GitHub's rule that a nested team cannot be secret.
func (s *Server) setParentAndPrivacy(o *org, t *team, body map[string]json.RawMessage, create bool) string {
	if v, ok := body["parent_team_id"]; ok {
		if string(v) == "null" {
			t.parent = nil
		} else {
			var id int64
			if json.Unmarshal(v, &id) != nil {
				return "parent_team_id is not a number"
			}
			p := s.teamByID(o, id)
			if p == nil {
				return "parent team does not exist"
			}
			for a := p; a != nil; a = a.parent {
				if a.id == t.id && t.id != 0 {
					return "a team cannot be its own ancestor"
				}
			}
			if p.privacy == "secret" {
				return "A parent team cannot be secret: nested teams and their parents must be closed (visible)"
			}
			t.parent = p
		}
	}
	if pv, ok := rawString(body, "privacy"); ok {
		if pv != "closed" && pv != "secret" {
			return "privacy is not valid"
		}
		t.privacy = pv
	} else if create {
		t.privacy = "secret"
		if t.parent != nil {
			t.privacy = "closed"
		}
	}
	if t.parent != nil && t.privacy == "secret" {
		return "a nested team cannot be secret"
	}
	if t.privacy == "secret" && t.id != 0 {
		for _, c := range o.teams {
			if c.parent != nil && c.parent.id == t.id {
				return "A parent team cannot be secret: nested teams and their parents must be closed (visible)"
			}
		}
	}
	return ""
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, orgLogin string) {
	body, err := decodeBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil {
		notFound(w)
		return
	}
	name, _ := rawString(body, "name")
	slug := Slugify(name)
	if slug == "" {
		unprocessable(w, "name is missing")
		return
	}
	if o.teams[slug] != nil {
		unprocessable(w, "Name must be unique for this org")
		return
	}
	t := &team{name: name, slug: slug, members: map[string]string{}}
	t.description, _ = rawString(body, "description")
	if msg := s.setParentAndPrivacy(o, t, body, true); msg != "" {
		unprocessable(w, msg)
		return
	}
	t.id = s.newID()
	o.teams[slug] = t
	if s.opt.TokenUser != "" && callerOf(r).inst == nil {
		// "When you create a new team, you automatically become a team maintainer."
		t.members[s.viewerKey(r)] = "maintainer"
	}
	writeJSON(w, http.StatusCreated, s.teamJSON(t, o))
}

func (s *Server) teamBySlug(w http.ResponseWriter, r *http.Request, orgLogin, slug string) {
	body, err := decodeBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		notFound(w)
		return
	}
	t := o.teams[strings.ToLower(slug)]
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.teamJSON(t, o))
	case http.MethodPatch:
		cp := *t
		if name, ok := rawString(body, "name"); ok && name != t.name {
			ns := Slugify(name)
			if ns == "" || (ns != t.slug && o.teams[ns] != nil) {
				unprocessable(w, "Name must be unique for this org")
				return
			}
			cp.name, cp.slug = name, ns
		}
		if d, ok := rawString(body, "description"); ok {
			cp.description = d
		}
		if msg := s.setParentAndPrivacy(o, &cp, body, false); msg != "" {
			unprocessable(w, msg)
			return
		}
		delete(o.teams, t.slug)
		*t = cp
		o.teams[t.slug] = t
		writeJSON(w, http.StatusOK, s.teamJSON(t, o))
	case http.MethodDelete:
		var del func(t *team)
		del = func(t *team) {
			delete(o.teams, t.slug)
			for _, c := range o.teams {
				if c.parent == t {
					del(c)
				}
			}
		}
		del(t)
		w.WriteHeader(http.StatusNoContent)
	default:
		notFound(w)
	}
}

// groupMappings lists the identity-provider groups a team is synced with
// (GET /orgs/{org}/teams/{slug}/team-sync/group-mappings); an empty list when it is not.
func (s *Server) groupMappings(w http.ResponseWriter, orgLogin, slug string) {
	s.mu.Lock()
	o := s.org(orgLogin, false)
	if o == nil || o.teams[strings.ToLower(slug)] == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	groups := []map[string]any{}
	for i, g := range o.teams[strings.ToLower(slug)].idpGroups {
		groups = append(groups, map[string]any{"group_id": strconv.Itoa(i + 1), "group_name": g, "group_description": ""})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"groups": groups})
}

// account is GET /users/{login}: a user, an organization (type Organization), or 404.
func (s *Server) account(w http.ResponseWriter, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.ToLower(login)
	if o := s.orgs[k]; o != nil {
		writeJSON(w, http.StatusOK, map[string]any{"login": o.login, "id": userID(k), "type": "Organization"})
		return
	}
	if s.users[k] == "" {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.user(k))
}

func (s *Server) teamMembership(w http.ResponseWriter, r *http.Request, orgLogin, slug, login string) {
	body, err := decodeBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mixedCase(w, r, login) {
		return
	}
	o := s.org(orgLogin, false)
	k := strings.ToLower(login)
	if o == nil || o.teams[strings.ToLower(slug)] == nil || s.users[k] == "" {
		notFound(w)
		return
	}
	t := o.teams[strings.ToLower(slug)]
	if r.Method != http.MethodGet && (len(t.idpGroups) > 0 || strings.HasPrefix(t.slug, "ent:")) {
		// GitHub: with team synchronization, "you will see an error if you attempt to use the
		// API for making changes to the team's membership".
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "This team's membership is managed by team synchronization with an identity provider (or by the enterprise) and cannot be changed through the API.",
			"documentation_url": "https://docs.github.com/rest/teams/members#add-or-update-team-membership-for-a-user"})
		return
	}
	reply := func(state, role string) {
		writeJSON(w, http.StatusOK, map[string]any{"state": state, "role": role,
			"url": fmt.Sprintf("/orgs/%s/teams/%s/memberships/%s", o.login, t.slug, s.users[k])})
	}
	inv := o.pending[k]
	switch r.Method {
	case http.MethodGet:
		switch {
		case t.members[k] != "":
			reply("active", t.members[k])
		case inv != nil && inv.teams[t.slug] != "":
			reply("pending", inv.teams[t.slug])
		default:
			notFound(w)
		}
	case http.MethodPut:
		role, _ := rawString(body, "role")
		if role == "" {
			role = "member"
		}
		if role != "member" && role != "maintainer" {
			unprocessable(w, "role is not valid")
			return
		}
		if o.members[k] == "" {
			// GitHub invites a user who is not an org member to the org, for this team: the
			// membership is pending until they accept.
			if inv == nil {
				if why := s.inviteRefusal(o, k); why != "" {
					refuseInvite(w, why)
					return
				}
				s.invitationAllowed(true)
				inv = &invite{role: "member", teams: map[string]string{}}
				o.pending[k] = inv
			}
			inv.teams[t.slug] = role
			reply("pending", role)
			return
		}
		t.members[k] = role
		reply("active", role)
	case http.MethodDelete:
		switch {
		case t.members[k] != "":
			delete(t.members, k)
		case inv != nil && inv.teams[t.slug] != "":
			delete(inv.teams, t.slug)
		default:
			notFound(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		notFound(w)
	}
}
