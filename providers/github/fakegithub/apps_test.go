package fakegithub

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	keyOnce sync.Once
	keys    [2]*rsa.PrivateKey
	keysErr error
)

// testKeys are two RSA keys, made once per test binary.
func testKeys(t *testing.T) (app, other *rsa.PrivateKey) {
	t.Helper()
	keyOnce.Do(func() {
		for i := range keys {
			if keys[i], keysErr = rsa.GenerateKey(rand.Reader, 2048); keysErr != nil {
				return
			}
		}
	})
	if keysErr != nil {
		t.Fatal(keysErr)
	}
	return keys[0], keys[1]
}

// jwtFor signs claims (and a header) the way an app does.
func jwtFor(t *testing.T, key *rsa.PrivateKey, header string, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	c, _ := json.Marshal(claims)
	signing := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + enc.EncodeToString(sig)
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// call sends one request with an Authorization header and returns the status and body.
func call(t *testing.T, s *Server, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// Issue 24: the fake's GitHub Apps. JWTs are verified (signature, algorithm, issuer, iat, exp
// and its 10-minute cap), installation tokens expire and can be revoked, and act as the app's
// bot within their org and permissions.
func TestAppJWTs(t *testing.T) {
	key, other := testKeys(t)
	clk := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	s := newServer(t, Options{Now: clk.Now, Token: "user-token"})
	s.AddApp(77, "sync-app", &key.PublicKey)
	id := s.Install(77, "acme", map[string]string{"members": "write"})
	now := clk.Now().Unix()
	rs256 := `{"alg":"RS256","typ":"JWT"}`
	claims := func(iat, exp int64, iss any) map[string]any {
		return map[string]any{"iat": iat, "exp": exp, "iss": iss}
	}
	for _, tc := range []struct {
		name   string
		jwt    string
		status int
		msg    string
	}{
		{"valid, iss a string", jwtFor(t, key, rs256, claims(now-60, now+540, "77")), 200, ""},
		{"valid, iss a number", jwtFor(t, key, rs256, claims(now-60, now+600, 77)), 200, ""},
		{"another key", jwtFor(t, other, rs256, claims(now-60, now+540, "77")), 401, "could not be decoded"},
		{"unknown app", jwtFor(t, key, rs256, claims(now-60, now+540, "78")), 401, "Integration not found"},
		{"not RS256", jwtFor(t, key, `{"alg":"none"}`, claims(now-60, now+540, "77")), 401, "could not be decoded"},
		{"issued in the future", jwtFor(t, key, rs256, claims(now+5, now+540, "77")), 401, "'Issued at' claim"},
		{"expired", jwtFor(t, key, rs256, claims(now-600, now, "77")), 401, "'Expiration time' claim ('exp') must be"},
		{"more than 10 minutes", jwtFor(t, key, rs256, claims(now-60, now+601, "77")), 401, "too far in the future"},
		{"garbage", "a.b.c", 401, "could not be decoded"},
		{"a user's token", "user-token", 401, "could not be decoded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, s, http.MethodGet, "/orgs/ACME/installation", tc.jwt, "")
			if status != tc.status || tc.msg != "" && !strings.Contains(body["message"].(string), tc.msg) {
				t.Fatalf("%d %v, want %d %q", status, body, tc.status, tc.msg)
			}
			if status == 200 && int64(body["id"].(float64)) != id {
				t.Fatalf("installation %v, want %d", body["id"], id)
			}
		})
	}
	jwt := jwtFor(t, key, rs256, claims(now-60, now+540, "77"))
	if status, _ := call(t, s, http.MethodGet, "/orgs/other/installation", jwt, ""); status != 404 {
		t.Errorf("installation on an org without it: %d", status)
	}
	if status, _ := call(t, s, http.MethodGet, "/orgs/acme/members", jwt, ""); status != 401 {
		t.Errorf("a JWT outside the app routes: %d", status)
	}
	if status, body := call(t, s, http.MethodGet, "/app", jwt, ""); status != 200 || body["slug"] != "sync-app" {
		t.Errorf("GET /app: %d %v", status, body)
	}
}

func TestInstallationTokens(t *testing.T) {
	key, _ := testKeys(t)
	clk := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	s := newServer(t, Options{Now: clk.Now, TokenUser: "alice", InstallationTokenLifetime: 2 * time.Second})
	s.AddApp(77, "sync-app", &key.PublicKey)
	s.AddApp(78, "reader", &key.PublicKey)
	write := s.Install(77, "acme", map[string]string{"members": "write"})
	read := s.Install(78, "acme", map[string]string{"members": "read"})
	none := s.Install(78, "other", map[string]string{"contents": "read"})
	s.AddUsers("bob")
	rs256 := `{"alg":"RS256","typ":"JWT"}`
	token := func(app, inst int64) (string, map[string]any) {
		t.Helper()
		now := clk.Now().Unix()
		jwt := jwtFor(t, key, rs256, map[string]any{"iat": now - 60, "exp": now + 540, "iss": app})
		status, body := call(t, s, http.MethodPost, "/app/installations/"+itoaN(inst)+"/access_tokens", jwt, "")
		if status != 201 {
			t.Fatalf("token for installation %d of app %d: %d %v", inst, app, status, body)
		}
		return body["token"].(string), body
	}
	now := clk.Now().Unix()
	jwt77 := jwtFor(t, key, rs256, map[string]any{"iat": now - 60, "exp": now + 540, "iss": 77})
	if status, _ := call(t, s, http.MethodPost, "/app/installations/"+itoaN(read)+"/access_tokens", jwt77, ""); status != 404 {
		t.Errorf("a token for another app's installation: %d", status)
	}
	tok, body := token(77, write)
	if !strings.HasPrefix(tok, "ghs_") || body["expires_at"] != clk.Now().Add(2*time.Second).UTC().Format(time.RFC3339) ||
		body["permissions"].(map[string]any)["members"] != "write" {
		t.Fatalf("token answer %v", body)
	}
	if st := s.Stats(); st.InstallationTokens != 1 || st.Writes != 0 || st.Requests["POST /app/installations/{id}/access_tokens"] != 2 {
		t.Errorf("stats %+v", st)
	}
	// The token acts as the app's bot within its org.
	if status, _ := call(t, s, http.MethodPut, "/orgs/acme/memberships/bob", tok, `{"role":"member"}`); status != 200 {
		t.Errorf("membership write with members:write: %d", status)
	}
	if status, _ := call(t, s, http.MethodGet, "/user", tok, ""); status != 403 {
		t.Errorf("GET /user with an installation token: %d", status)
	}
	if status, _ := call(t, s, http.MethodPost, "/orgs/acme/teams", tok, `{"name":"t1"}`); status != 201 {
		t.Errorf("team creation: %d", status)
	}
	if ti, _ := s.Team("acme", "t1"); len(ti.Members) != 0 {
		t.Errorf("a team created by an app has members %v", ti.Members)
	}
	if status, _ := call(t, s, http.MethodPost, "/orgs/acme/teams", "ghp_user", `{"name":"t2"}`); status != 201 {
		t.Errorf("team creation with a user token: %d", status)
	}
	if ti, _ := s.Team("acme", "t2"); ti.Members["alice"] != "maintainer" {
		t.Errorf("a team created by alice has members %v", ti.Members)
	}
	if status, _ := call(t, s, http.MethodGet, "/orgs/other/members", tok, ""); status != 404 {
		t.Errorf("another org: %d", status)
	}
	if status, _ := call(t, s, http.MethodPost, "/app/installations/"+itoaN(write)+"/access_tokens", tok, ""); status != 401 {
		t.Errorf("an installation token on an app route: %d", status)
	}
	out := gqlAs(t, s, tok, `query { viewer { login } }`)
	if v := out["data"].(map[string]any)["viewer"].(map[string]any)["login"]; v != "sync-app[bot]" {
		t.Errorf("viewer %v", v)
	}
	// Permissions: read reads, write is refused; no members permission refuses GraphQL too.
	rtok, _ := token(78, read)
	if status, _ := call(t, s, http.MethodGet, "/orgs/acme/members", rtok, ""); status != 200 {
		t.Errorf("read with members:read: %d", status)
	}
	if status, body := call(t, s, http.MethodDelete, "/orgs/acme/memberships/bob", rtok, ""); status != 403 ||
		body["message"] != "Resource not accessible by integration" {
		t.Errorf("write with members:read: %d %v", status, body)
	}
	ntok, _ := token(78, none)
	if out := gqlAs(t, s, ntok, `query { viewer { login } }`); out["errors"] == nil {
		t.Errorf("GraphQL without members permission: %v", out)
	}
	// Expiry: valid until expires_at, 401 from then on; revoked tokens are 401 at once.
	clk.add(1999 * time.Millisecond)
	if status, _ := call(t, s, http.MethodGet, "/orgs/acme/members", tok, ""); status != 200 {
		t.Errorf("just before expiry: %d", status)
	}
	clk.add(time.Millisecond)
	if status, body := call(t, s, http.MethodGet, "/orgs/acme/members", tok, ""); status != 401 || body["message"] != "Bad credentials" {
		t.Errorf("expired: %d %v", status, body)
	}
	tok2, _ := token(77, write)
	s.RevokeTokens()
	if status, _ := call(t, s, http.MethodGet, "/orgs/acme/members", tok2, ""); status != 401 {
		t.Errorf("revoked: %d", status)
	}
	if status, _ := call(t, s, http.MethodGet, "/orgs/acme/members", "ghs_made-up", ""); status != 401 {
		t.Errorf("unknown installation token: %d", status)
	}
}

func itoaN(n int64) string { return strconv.FormatInt(n, 10) }

func gqlAs(t *testing.T, s *Server, tok, query string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/graphql", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return out
}
