package fakegraph

// The identity half of the fake: a Microsoft identity platform token endpoint, a GitHub
// Actions ID-token endpoint and an App Service managed-identity endpoint, served over TLS on
// a second listener (MSAL refuses an authority that is not https). Tokens it issues are
// accepted by the Graph endpoints until they expire; an expired one is answered 401, as
// Graph does.

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Well-known values of the identity endpoints.
const (
	// FederationAudience is the audience Entra ID requires of a federated assertion.
	FederationAudience = "api://AzureADTokenExchange"
	// ActionsIssuer is the issuer of the GitHub Actions ID tokens the fake hands out.
	ActionsIssuer = "https://token.actions.githubusercontent.com"
	// DefaultActionsRequestToken is the ACTIONS_ID_TOKEN_REQUEST_TOKEN the fake accepts by
	// default.
	DefaultActionsRequestToken = "fake-actions-request-token"
	// DefaultIdentityHeader is the IDENTITY_HEADER the managed-identity endpoint accepts by
	// default.
	DefaultIdentityHeader = "fake-identity-header"
	// SystemAssigned is the client ID of the managed identity used when a request names none.
	SystemAssigned = "00000000-0000-4000-8000-5157e3a55190"
)

// IdentityOptions configure the identity endpoints. Zero fields take the documented defaults.
type IdentityOptions struct {
	// TokenLifetime is the lifetime of the access tokens issued (whole seconds: expires_in
	// is an integer). Default 1 hour.
	TokenLifetime time.Duration
	// IDTokenLifetime is the lifetime of the GitHub Actions ID tokens. Default 5 minutes, as
	// GitHub issues them.
	IDTokenLifetime time.Duration
	// ActionsRequestToken is the bearer token the Actions ID-token endpoint requires.
	// Default DefaultActionsRequestToken.
	ActionsRequestToken string
	// ActionsSubject is the `sub` of the ID tokens. Default
	// "repo:acme/entitlements:ref:refs/heads/main".
	ActionsSubject string
	// IdentityHeader is the X-IDENTITY-HEADER the managed-identity endpoint requires.
	// Default DefaultIdentityHeader.
	IdentityHeader string
	// ManagedIdentityRoles are the roles of the managed identities' tokens. Default
	// GroupMember.ReadWrite.All.
	ManagedIdentityRoles []string
}

// App is an application registration: how it may authenticate and the application
// permissions (roles) its tokens carry.
type App struct {
	Tenant, ClientID string
	// Secret is its client secret ("" : none).
	Secret string
	// Cert is its certificate: client assertions must be signed with the certificate's key.
	Cert *x509.Certificate
	// Federations are its federated identity credentials.
	Federations []Federation
	// Roles are the application permissions in its tokens. Default
	// GroupMember.ReadWrite.All.
	Roles []string
}

// Federation is a federated identity credential: assertions with this issuer and subject
// (and audience FederationAudience) are accepted in place of a secret. The fake only trusts
// assertions it signed itself (FederatedToken, the Actions endpoint).
type Federation struct{ Issuer, Subject string }

// IdentityStats are the counters of the identity endpoints.
type IdentityStats struct {
	// Tokens counts access tokens issued, by grant: "client_secret", "certificate",
	// "federated", "managed_identity".
	Tokens map[string]int64
	// Refused counts token requests refused (bad secret, bad or expired assertion, unknown
	// app).
	Refused int64
	// IDTokens counts ID tokens the Actions endpoint issued.
	IDTokens int64
	// Expired counts Graph requests refused because their token had expired.
	Expired int64
}

type identity struct {
	opt   IdentityOptions
	srv   *httptest.Server
	key   *rsa.PrivateKey
	mu    sync.Mutex
	apps  map[string]App       // tenant/client -> app
	mis   map[string][]string  // managed identity client ID -> roles
	valid map[string]time.Time // access token -> expiry
	n     uint64
	stats map[string]int64

	refused, idTokens, expired atomic.Int64
}

// identity starts the identity endpoints on first use.
func (s *Server) identity() *identity {
	s.idOnce.Do(func() {
		o := s.opt.Identity
		if o.TokenLifetime <= 0 {
			o.TokenLifetime = time.Hour
		}
		if o.IDTokenLifetime <= 0 {
			o.IDTokenLifetime = 5 * time.Minute
		}
		if o.ActionsRequestToken == "" {
			o.ActionsRequestToken = DefaultActionsRequestToken
		}
		if o.ActionsSubject == "" {
			o.ActionsSubject = "repo:acme/entitlements:ref:refs/heads/main"
		}
		if o.IdentityHeader == "" {
			o.IdentityHeader = DefaultIdentityHeader
		}
		if len(o.ManagedIdentityRoles) == 0 {
			o.ManagedIdentityRoles = []string{"GroupMember.ReadWrite.All"}
		}
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err) // a test fixture: the system has no randomness
		}
		id := &identity{opt: o, key: key, apps: map[string]App{}, valid: map[string]time.Time{},
			mis: map[string][]string{SystemAssigned: o.ManagedIdentityRoles}, stats: map[string]int64{}}
		id.srv = httptest.NewTLSServer(http.HandlerFunc(id.serve))
		s.id.Store(id)
	})
	return s.id.Load()
}

// LoginURL is the authority host of the identity endpoints (https://127.0.0.1:port), to give
// azidentity as its cloud's ActiveDirectoryAuthorityHost. It starts them.
func (s *Server) LoginURL() string { return s.identity().srv.URL }

// IdentityClient is an HTTP client that trusts the identity endpoints' certificate (and
// reaches the plain-HTTP Graph endpoints too).
func (s *Server) IdentityClient() *http.Client { return s.identity().srv.Client() }

// ActionsTokenURL is the ACTIONS_ID_TOKEN_REQUEST_URL of the fake Actions endpoint.
func (s *Server) ActionsTokenURL() string {
	return s.identity().srv.URL + "/_actions/idtoken?api-version=2.0"
}

// ManagedIdentityEndpoint is the IDENTITY_ENDPOINT of the fake App Service managed-identity
// endpoint (with IDENTITY_HEADER IdentityOptions.IdentityHeader).
func (s *Server) ManagedIdentityEndpoint() string { return s.identity().srv.URL + "/msi/token" }

// RegisterApp adds or replaces an application registration.
func (s *Server) RegisterApp(a App) {
	id := s.identity()
	if len(a.Roles) == 0 {
		a.Roles = []string{"GroupMember.ReadWrite.All"}
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	id.apps[strings.ToLower(a.Tenant+"/"+a.ClientID)] = a
}

// AddManagedIdentity adds a user-assigned managed identity with these roles.
func (s *Server) AddManagedIdentity(clientID string, roles ...string) {
	id := s.identity()
	id.mu.Lock()
	defer id.mu.Unlock()
	id.mis[clientID] = roles
}

// FederatedToken is an assertion signed by the fake, as a Kubernetes service account token
// file or an Actions ID token would be: it is accepted for an app with a Federation of this
// issuer and subject while it is valid. A negative lifetime gives an expired one.
func (s *Server) FederatedToken(issuer, subject string, lifetime time.Duration) string {
	id := s.identity()
	now := time.Now()
	return id.sign(map[string]any{"iss": issuer, "sub": subject, "aud": FederationAudience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(lifetime).Unix()})
}

// IdentityStats returns the counters of the identity endpoints.
func (s *Server) IdentityStats() IdentityStats {
	id := s.identity()
	id.mu.Lock()
	defer id.mu.Unlock()
	t := make(map[string]int64, len(id.stats))
	for k, v := range id.stats {
		t[k] = v
	}
	return IdentityStats{Tokens: t, Refused: id.refused.Load(), IDTokens: id.idTokens.Load(), Expired: id.expired.Load()}
}

// authorized checks a Graph request's bearer token: the static Options.Token, or a token the
// identity endpoints issued that has not expired. The reply is the 401 to send otherwise.
func (s *Server) authorized(r *http.Request) (reply, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok && tok == s.opt.Token {
		return reply{}, true
	}
	s.quotaMu.Lock()
	_, added := s.tokens[tok]
	s.quotaMu.Unlock()
	if ok && added {
		return reply{}, true
	}
	if id := s.id.Load(); ok && id != nil {
		id.mu.Lock()
		exp, issued := id.valid[tok]
		id.mu.Unlock()
		if issued && time.Now().Before(exp) {
			return reply{}, true
		}
		if issued {
			id.expired.Add(1)
			return errReply(http.StatusUnauthorized, "InvalidAuthenticationToken", "Lifetime validation failed, the token is expired."), false
		}
	}
	return errReply(http.StatusUnauthorized, "InvalidAuthenticationToken", "Access token is empty or invalid."), false
}

func (id *identity) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/_actions/idtoken":
		id.actions(w, r)
	case path == "/msi/token":
		id.managed(w, r)
	case strings.HasSuffix(path, "/v2.0/.well-known/openid-configuration"):
		tenant := strings.Split(strings.TrimPrefix(path, "/"), "/")[0]
		base := id.srv.URL + "/" + tenant
		writeJSON(w, http.StatusOK, map[string]any{"token_endpoint": base + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize", "issuer": base + "/v2.0",
			"device_authorization_endpoint": base + "/oauth2/v2.0/devicecode"})
	case strings.HasSuffix(path, "/oauth2/v2.0/token") && r.Method == http.MethodPost:
		id.token(w, r, strings.Split(strings.TrimPrefix(path, "/"), "/")[0])
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "error_description": "fake identity: no route " + path})
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// stsError answers a token request as Entra ID refuses one.
func (id *identity) stsError(w http.ResponseWriter, status int, code, desc string) {
	id.refused.Add(1)
	writeJSON(w, status, map[string]any{"error": code, "error_description": desc})
}

// token is the client-credentials grant: a client secret, or a client assertion (signed by
// the app's certificate, or a federated token).
func (id *identity) token(w http.ResponseWriter, r *http.Request, tenant string) {
	if err := r.ParseForm(); err != nil {
		id.stsError(w, http.StatusBadRequest, "invalid_request", "AADSTS900144: unreadable body")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "client_credentials" {
		id.stsError(w, http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: only client_credentials is served")
		return
	}
	// MSAL adds OpenID scopes (openid profile offline_access) to the resource's /.default.
	var scope string
	for _, sc := range strings.Fields(f.Get("scope")) {
		if strings.HasSuffix(sc, "/.default") {
			scope = sc
		}
	}
	if scope == "" {
		id.stsError(w, http.StatusBadRequest, "invalid_scope", "AADSTS1002012: the scope must end with /.default")
		return
	}
	client := f.Get("client_id")
	id.mu.Lock()
	app, ok := id.apps[strings.ToLower(tenant+"/"+client)]
	id.mu.Unlock()
	if !ok {
		id.stsError(w, http.StatusBadRequest, "unauthorized_client",
			fmt.Sprintf("AADSTS700016: Application with identifier '%s' was not found in the directory '%s'.", client, tenant))
		return
	}
	var grant string
	switch {
	case f.Has("client_secret"):
		if app.Secret == "" || f.Get("client_secret") != app.Secret {
			id.stsError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
			return
		}
		grant = "client_secret"
	case f.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
		g, err := id.assertion(app, f.Get("client_assertion"), id.srv.URL+r.URL.Path)
		if err != nil {
			id.stsError(w, http.StatusUnauthorized, "invalid_client", err.Error())
			return
		}
		grant = g
	default:
		id.stsError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000216: 'client_assertion', 'client_secret' or 'request' is required.")
		return
	}
	tok, exp := id.issue(grant, tenant, client, strings.TrimSuffix(scope, "/.default"), app.Roles)
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": tok,
		"expires_in": int64(time.Until(exp).Round(time.Second) / time.Second), "ext_expires_in": int64(time.Until(exp) / time.Second)})
}

// assertion validates a client assertion for app and names its grant.
func (id *identity) assertion(app App, jwt, endpoint string) (string, error) {
	claims, hdr, signed, sig, err := parseJWT(jwt)
	if err != nil {
		return "", fmt.Errorf("AADSTS50027: JWT token is invalid or malformed: %w", err)
	}
	iss, _ := claims["iss"].(string)
	sub, _ := claims["sub"].(string)
	aud, _ := claims["aud"].(string)
	exp, _ := claims["exp"].(float64)
	nbf, hasNbf := claims["nbf"].(float64)
	now := float64(time.Now().Unix())
	if exp == 0 || now >= exp || hasNbf && nbf > now+60 {
		return "", errors.New("AADSTS700024: Client assertion is not within its valid time range.")
	}
	if iss == app.ClientID {
		// A certificate assertion: the app signs it for the token endpoint.
		if app.Cert == nil {
			return "", errors.New("AADSTS700027: the application has no certificate")
		}
		if sub != app.ClientID || !strings.EqualFold(aud, endpoint) {
			return "", fmt.Errorf("AADSTS700021: client assertion audience %q or subject is not this application's", aud)
		}
		pub, ok := app.Cert.PublicKey.(*rsa.PublicKey)
		if !ok || verify(pub, hdr, signed, sig) != nil {
			return "", errors.New("AADSTS700027: Client assertion failed signature validation.")
		}
		return "certificate", nil
	}
	if aud != FederationAudience {
		return "", fmt.Errorf("AADSTS700212: No matching federated identity record found for presented assertion audience '%s'.", aud)
	}
	if verify(&id.key.PublicKey, hdr, signed, sig) != nil {
		return "", errors.New("AADSTS700211: No matching federated identity record found for presented assertion issuer (signature).")
	}
	for _, fed := range app.Federations {
		if fed.Issuer == iss && fed.Subject == sub {
			return "federated", nil
		}
	}
	return "", fmt.Errorf("AADSTS70021: No matching federated identity record found for presented assertion. Assertion Issuer: '%s'. Assertion Subject: '%s'.", iss, sub)
}

// issue makes an access token (a JWT with the roles, signed by the fake) and remembers its
// expiry.
func (id *identity) issue(grant, tenant, client, resource string, roles []string) (string, time.Time) {
	now := time.Now()
	exp := now.Add(id.opt.TokenLifetime)
	id.mu.Lock()
	id.n++
	n := id.n
	id.mu.Unlock()
	tok := id.sign(map[string]any{"aud": resource, "iss": "https://sts.windows.net/" + tenant + "/", "tid": tenant,
		"appid": client, "roles": roles, "iat": now.Unix(), "nbf": now.Unix(), "exp": exp.Unix(), "uti": strconv.FormatUint(n, 10)})
	id.mu.Lock()
	id.valid[tok] = exp
	id.stats[grant]++
	id.mu.Unlock()
	return tok, exp
}

// actions is GitHub's ID-token endpoint: GET with the request token as bearer, the audience
// in the query; answers {"value": jwt}.
func (id *identity) actions(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+id.opt.ActionsRequestToken {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "bad request token"})
		return
	}
	aud := r.URL.Query().Get("audience")
	if aud == "" {
		aud = "https://github.com/acme"
	}
	id.idTokens.Add(1)
	now := time.Now()
	jwt := id.sign(map[string]any{"iss": ActionsIssuer, "sub": id.opt.ActionsSubject, "aud": aud,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(id.opt.IDTokenLifetime).Unix(), "jti": strconv.FormatInt(id.idTokens.Load(), 10)})
	writeJSON(w, http.StatusOK, map[string]any{"count": 1, "value": jwt})
}

// managed is the App Service managed-identity endpoint (api-version 2019-08-01).
func (id *identity) managed(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Header.Get("X-IDENTITY-HEADER") != id.opt.IdentityHeader {
		id.refused.Add(1)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "bad X-IDENTITY-HEADER"})
		return
	}
	client := q.Get("client_id")
	if client == "" {
		client = SystemAssigned
	}
	id.mu.Lock()
	roles, ok := id.mis[client]
	id.mu.Unlock()
	if !ok || q.Get("resource") == "" {
		id.refused.Add(1)
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "no such identity or no resource"})
		return
	}
	tok, exp := id.issue("managed_identity", "managed", client, q.Get("resource"), roles)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_on": strconv.FormatInt(exp.Unix(), 10),
		"resource": q.Get("resource"), "token_type": "Bearer", "client_id": client})
}

// sign makes an RS256 JWT of claims with the fake's key.
func (id *identity) sign(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "fake"})
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, id.key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err) // a test fixture: a fresh 2048-bit key always signs
	}
	return signed + "." + enc.EncodeToString(sig)
}

// parseJWT splits a compact JWT into its claims, header, signed part and signature.
func parseJWT(s string) (claims map[string]any, hdr map[string]any, signed string, sig []byte, err error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil, nil, "", nil, errors.New("not three parts")
	}
	enc := base64.RawURLEncoding
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, "", nil, err
	}
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return nil, nil, "", nil, err
	}
	if err := json.Unmarshal(cb, &claims); err != nil {
		return nil, nil, "", nil, err
	}
	return claims, hdr, parts[0] + "." + parts[1], sig, nil
}

// verify checks an RS256 or PS256 signature (MSAL signs certificate assertions with PS256).
func verify(pub *rsa.PublicKey, hdr map[string]any, signed string, sig []byte) error {
	sum := sha256.Sum256([]byte(signed))
	switch hdr["alg"] {
	case "RS256":
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig)
	case "PS256":
		return rsa.VerifyPSS(pub, crypto.SHA256, sum[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto})
	}
	return fmt.Errorf("unsupported alg %v", hdr["alg"])
}

// Claims decodes the claims of a JWT without checking its signature (tests and the doctor
// read the roles of an access token).
func Claims(jwt string) (map[string]any, error) {
	c, _, _, _, err := parseJWT(jwt)
	return c, err
}
