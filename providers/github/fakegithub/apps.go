package fakegithub

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GitHub Apps: AddApp registers an app with the public half of its key, Install installs it
// on an org with permissions. The app authenticates with an RS256 JWT (iss: its ID) that the
// server verifies against that key, refusing it (401) when it is not yet valid (iat in the
// future), expired, or valid for more than 10 minutes, as GitHub does. With it the app may
// GET /app, GET /orgs/{org}/installation and POST /app/installations/{id}/access_tokens;
// nothing else. The installation tokens issued ("ghs_...") live
// Options.InstallationTokenLifetime, are answered 401 once expired or revoked (RevokeTokens),
// list the installation's permissions, and act as the app's bot: GraphQL viewer and team
// creator, GET /user 403. They reach their own org only (REST; another org answers 404), and
// need the "members" permission: read for reads, write for writes (403 "Resource not
// accessible by integration" otherwise; a GraphQL document answers that as an error).

type fakeApp struct {
	id   int64
	slug string
	key  *rsa.PublicKey
}

type fakeInstallation struct {
	id    int64
	app   *fakeApp
	org   string // lower login
	perms map[string]string
}

type instToken struct {
	inst    *fakeInstallation
	expires time.Time
}

// caller is who sent a request: an app (JWT), an installation (its token), or neither (a
// user's token, whose user is Options.TokenUser).
type caller struct {
	app  *fakeApp
	inst *fakeInstallation
}

type callerKey struct{}

func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(callerKey{}).(caller)
	return c
}

// AddApp registers a GitHub App: its ID (the JWT's issuer), its slug (its bot is
// slug+"[bot]") and the public half of its key.
func (s *Server) AddApp(id int64, slug string, key *rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[id] = &fakeApp{id: id, slug: slug, key: key}
	s.addUser(slug + "[bot]")
}

// Install installs an app on an org (created if need be) with permissions such as
// {"members": "write"}, and returns the installation's ID.
func (s *Server) Install(appID int64, orgLogin string, perms map[string]string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.apps[appID]
	if a == nil {
		panic(fmt.Sprintf("fakegithub: Install of app %d, which AddApp did not register", appID))
	}
	s.org(orgLogin, true)
	in := &fakeInstallation{id: s.newID(), app: a, org: strings.ToLower(orgLogin), perms: map[string]string{}}
	for k, v := range perms {
		in.perms[k] = v
	}
	s.installs[in.id] = in
	return in.id
}

// RevokeTokens ends every installation token issued so far: requests sending one are
// answered 401, as after an owner revoked them.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

// appRoute reports whether p is one of the routes an app reaches with its JWT.
func appRoute(p string) bool {
	if p == "/app" || strings.HasPrefix(p, "/app/") {
		return true
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	return len(seg) == 3 && seg[0] == "orgs" && seg[2] == "installation"
}

// identify says who sent r (p is its path without the /api/v3 prefix), or why the request
// is refused (401).
func (s *Server) identify(r *http.Request, p string) (caller, string) {
	const needAuth = "Requires authentication"
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || tok == "" || !(strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) {
		return caller{}, needAuth
	}
	if strings.Count(tok, ".") == 2 {
		if !appRoute(p) {
			return caller{}, "A JSON web token authenticates the app itself: use an installation token"
		}
		a, msg := s.verifyJWT(tok)
		if a == nil {
			return caller{}, msg
		}
		return caller{app: a}, ""
	}
	if appRoute(p) {
		return caller{}, "A JSON web token could not be decoded"
	}
	s.mu.Lock()
	it := s.tokens[tok]
	now := s.opt.Now()
	s.mu.Unlock()
	switch {
	case it != nil && now.Before(it.expires):
		return caller{inst: it.inst}, ""
	case it != nil || strings.HasPrefix(tok, "ghs_"):
		return caller{}, "Bad credentials"
	case s.opt.Token == "" || tok == s.opt.Token:
		return caller{}, ""
	}
	return caller{}, needAuth
}

// verifyJWT checks an app's JWT: RS256, signed by the key of the app its iss names, iat not in
// the future, exp in the future and at most 10 minutes after now. The messages are GitHub's.
func (s *Server) verifyJWT(tok string) (*fakeApp, string) {
	const undecodable = "A JSON web token could not be decoded"
	parts := strings.Split(tok, ".")
	enc := base64.RawURLEncoding
	head, err1 := enc.DecodeString(parts[0])
	body, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, undecodable
	}
	var h struct {
		Alg string `json:"alg"`
	}
	var c struct {
		IAT json.Number `json:"iat"`
		EXP json.Number `json:"exp"`
		ISS json.Number `json:"iss"` // a number, or a string holding one
	}
	if json.Unmarshal(head, &h) != nil || json.Unmarshal(body, &c) != nil || h.Alg != "RS256" {
		return nil, undecodable
	}
	id, _ := strconv.ParseInt(string(c.ISS), 10, 64)
	s.mu.Lock()
	a := s.apps[id]
	now := s.opt.Now()
	s.mu.Unlock()
	if a == nil {
		return nil, "Integration not found"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(a.key, crypto.SHA256, sum[:], sig) != nil {
		return nil, undecodable
	}
	iat, err1 := c.IAT.Int64()
	exp, err2 := c.EXP.Int64()
	switch {
	case err1 != nil || iat > now.Unix():
		return nil, "'Issued at' claim ('iat') must be an Integer representing a time in the past"
	case err2 != nil || exp <= now.Unix():
		return nil, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	case exp > now.Add(10*time.Minute).Unix():
		return nil, "'Expiration time' claim ('exp') is too far in the future"
	}
	return a, ""
}

// serveApp answers the routes of an app authenticated with its JWT.
func (s *Server) serveApp(w http.ResponseWriter, r *http.Request, a *fakeApp, p string) {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(seg) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"id": a.id, "slug": a.slug, "name": a.slug})
	case len(seg) == 3 && seg[0] == "orgs" && r.Method == http.MethodGet:
		for _, in := range s.installs {
			if in.app == a && in.org == strings.ToLower(seg[1]) {
				writeJSON(w, http.StatusOK, s.installationJSON(in))
				return
			}
		}
		notFound(w)
	case len(seg) == 4 && seg[1] == "installations" && seg[3] == "access_tokens" && r.Method == http.MethodPost:
		id, _ := strconv.ParseInt(seg[2], 10, 64)
		in := s.installs[id]
		if in == nil || in.app != a {
			notFound(w)
			return
		}
		b := make([]byte, 18)
		rand.Read(b)
		tok := "ghs_" + hex.EncodeToString(b)
		exp := s.opt.Now().Add(s.opt.InstallationTokenLifetime)
		s.tokens[tok] = &instToken{inst: in, expires: exp}
		s.stats.InstallationTokens++
		// GitHub's expires_at has whole seconds; a token is valid until then.
		writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": exp.UTC().Format(time.RFC3339),
			"permissions": in.perms, "repository_selection": "all"})
	default:
		notFound(w)
	}
}

func (s *Server) installationJSON(in *fakeInstallation) map[string]any {
	o := s.org(in.org, false)
	login := in.org
	if o != nil {
		login = o.login
	}
	return map[string]any{"id": in.id, "app_id": in.app.id, "app_slug": in.app.slug, "target_type": "Organization",
		"account": map[string]any{"login": login, "type": "Organization"}, "permissions": in.perms}
}

// installationRefusal answers a request of an installation token that its installation may
// not make: another org (404, as GitHub hides what a token cannot see), or a missing
// permission (403). It reports whether it answered.
func (s *Server) installationRefusal(w http.ResponseWriter, r *http.Request, in *fakeInstallation, p string, gql bool) bool {
	level := in.perms["members"]
	if gql {
		if level == "" {
			writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": []map[string]any{{"type": "FORBIDDEN",
				"message": "Resource not accessible by integration"}}})
			return true
		}
		return false
	}
	seg := strings.Split(strings.Trim(p, "/"), "/")
	if len(seg) < 2 || seg[0] != "orgs" {
		return false
	}
	if strings.ToLower(seg[1]) != in.org {
		notFound(w)
		return true
	}
	if level == "write" || level == "read" && r.Method == http.MethodGet {
		return false
	}
	writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
		"documentation_url": "https://docs.github.com/rest", "status": "403"})
	return true
}

func withCaller(r *http.Request, c caller) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
}
