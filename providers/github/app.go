package github

// Credentials: a token (`token`, or $GITHUB_TOKEN), or a GitHub App (`app_id` with
// `private_key` or `private_key_path`, optional `installation_id`; or $GITHUB_APP_ID,
// $GITHUB_APP_PRIVATE_KEY or $GITHUB_APP_PRIVATE_KEY_PATH, $GITHUB_APP_INSTALLATION_ID).
//
// An App signs a JWT with its key to find its installation on the org
// (GET /orgs/{org}/installation, unless installation_id is given) and to create installation
// tokens (POST /app/installations/{id}/access_tokens). An installation token lives an hour;
// it is replaced before it expires (Options.AppTokenRefresh) and once more when GitHub answers
// 401 to a request sent with it (the request is then sent again with the new token: a 401
// was not performed). Every OU of one installation on one API host shares the token, its
// session and its rate-limit state; concurrent requests that find the token due wait for one
// replacement.
//
// Why not github.com/bradleyfalzon/ghinstallation/v2 (v2.19, the version the module proxy
// serves): it reads time.Now for both the JWT and the refresh decision, so neither the
// Options.Now clock of this package nor the fake clock of its tests can drive it; it
// replaces a token a fixed minute before expiry, so a token living less than that is
// replaced before every request; it has no way to drop a token GitHub refused (401) short of
// building a new transport; its JWT is issued 30 s in the past where GitHub documents 60 s
// for clock drift; and it brings a second go-github major version (v88) for its types. What
// it does (a 30-line RS256 JWT and one POST) sits here on the package's own transport, so the
// token requests get the same rate-limit handling, retries, capped answers and masking as
// every other request.

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/safefile"
)

// The kinds of credential of a GitHub OU (its `credential` key).
const (
	credToken = "token"
	credApp   = "app"
)

// The environment variables a GitHub OU falls back on when its keys give no credential.
const (
	envToken             = "GITHUB_TOKEN"
	envAppID             = "GITHUB_APP_ID"
	envAppPrivateKey     = "GITHUB_APP_PRIVATE_KEY"
	envAppPrivateKeyPath = "GITHUB_APP_PRIVATE_KEY_PATH"
	envAppInstallationID = "GITHUB_APP_INSTALLATION_ID"
)

// appKeys are the OU keys of a GitHub App credential.
var appKeys = []string{"app_id", "private_key", "private_key_path", "installation_id"}

// DefaultAppTokenRefresh is the default of Options.AppTokenRefresh.
const DefaultAppTokenRefresh = 5 * time.Minute

// maxKeyFileSize caps private_key_path: a 4096-bit PEM key is about 3 KiB.
const maxKeyFileSize = 64 << 10

// ErrAppPermissions is wrapped by the error of a read or an apply refused, before anything is
// sent, because the GitHub App's installation lacks the permission it needs.
var ErrAppPermissions = errors.New("the GitHub App's installation lacks a permission")

// credSettings is the credential of an OU.
type credSettings struct {
	kind  string // credToken or credApp
	token string
	app   appSettings
}

type appSettings struct {
	id             string // the App ID (or its client ID): the JWT's issuer
	key            *rsa.PrivateKey
	keyText        string // as given, for masking
	installationID int64  // 0: found with GET /orgs/{org}/installation
}

// appIDRE: an App ID is a number; GitHub also takes the app's client ID (Iv1.…, Iv23…) as
// the JWT's issuer.
var appIDRE = regexp.MustCompile(`^[0-9]{1,19}$|^Iv[A-Za-z0-9.]{1,62}$`)

// credentials reads the credential of an OU: the keys it gives (both kinds only with
// `credential` saying which one; config refuses the others when it loads), else the
// environment's. Messages name keys and variables, never their values.
func (r *Registry) credentials(ou *config.OU) (credSettings, error) {
	m := ou.Settings
	env := func(k string) string {
		if v, ok := r.opt.Getenv(k); ok {
			return strings.TrimSpace(v)
		}
		return ""
	}
	tok := text(m, "token")
	appGiven := slices.ContainsFunc(appKeys, func(k string) bool { return text(m, k) != "" })
	kind := text(m, "credential")
	switch kind {
	case "":
		switch {
		case tok != "" && appGiven:
			return credSettings{}, fmt.Errorf("OU %s gives more than one credential (token, and a GitHub App's keys): keep one, or say which one to use with `credential: token` or `credential: app`", ou.Key)
		case tok != "":
			kind = credToken
		case appGiven:
			kind = credApp
		case env(envToken) != "" && env(envAppID) != "":
			return credSettings{}, fmt.Errorf("OU %s gives no credential, and the environment gives two ($%s and $%s): set `credential: token` or `credential: app` on the OU, or unset one of them", ou.Key, envToken, envAppID)
		case env(envAppID) != "":
			kind = credApp
		default:
			kind = credToken
		}
	case credToken, credApp:
	default:
		return credSettings{}, fmt.Errorf("OU %s: credential must be %s or %s", ou.Key, credToken, credApp)
	}
	if kind == credToken {
		if tok == "" {
			tok = env(envToken)
		}
		if tok == "" {
			return credSettings{}, fmt.Errorf("OU %s has no GitHub token or GitHub App: set `token` (usually <%%= ENV[\"GITHUB_TOKEN\"] %%>), or `app_id` with `private_key` or `private_key_path`, and make sure the variables are set (fallbacks: $%s; $%s with $%s or $%s)",
				ou.Key, envToken, envAppID, envAppPrivateKey, envAppPrivateKeyPath)
		}
		return credSettings{kind: credToken, token: tok}, nil
	}
	a, err := appCredentials(ou, env)
	return credSettings{kind: credApp, app: a}, err
}

func appCredentials(ou *config.OU, env func(string) string) (appSettings, error) {
	m := ou.Settings
	var a appSettings
	fail := func(format string, args ...any) (appSettings, error) {
		return appSettings{}, fmt.Errorf("OU %s: "+format, append([]any{ou.Key}, args...)...)
	}
	if a.id = text(m, "app_id"); a.id == "" {
		a.id = env(envAppID)
	}
	switch {
	case a.id == "":
		return fail("a GitHub App credential needs app_id (or $%s)", envAppID)
	case !appIDRE.MatchString(a.id):
		return fail("app_id must be the GitHub App's ID (a number, on the app's settings page) or its client ID")
	}
	keyText, path := text(m, "private_key"), text(m, "private_key_path")
	if keyText == "" && path == "" {
		keyText, path = env(envAppPrivateKey), env(envAppPrivateKeyPath)
	}
	switch {
	case keyText != "" && path != "":
		return fail("give the GitHub App's private_key or its private_key_path, not both (or $%s or $%s, not both)", envAppPrivateKey, envAppPrivateKeyPath)
	case keyText == "" && path == "":
		return fail("a GitHub App credential needs private_key or private_key_path (or $%s or $%s)", envAppPrivateKey, envAppPrivateKeyPath)
	case path != "":
		data, err := safefile.Read(path, safefile.Options{MaxSize: maxKeyFileSize})
		if err != nil {
			return fail("reading private_key_path: %w", err)
		}
		keyText = string(data)
	}
	key, err := parsePrivateKey(keyText)
	if err != nil {
		return fail("the GitHub App's private key: %w", err)
	}
	a.key, a.keyText = key, keyText
	inst := text(m, "installation_id")
	if inst == "" {
		inst = env(envAppInstallationID)
	}
	if inst != "" {
		n, err := strconv.ParseInt(inst, 10, 64)
		if err != nil || n <= 0 {
			return fail("installation_id must be the number of the app's installation on the org (or leave it out: it is looked up)")
		}
		a.installationID = n
	}
	return a, nil
}

// parsePrivateKey reads the PEM key GitHub lets an app's owner download (PKCS#1, "RSA PRIVATE
// KEY"), or the same key as PKCS#8. CI secret stores often hold it on one line with literal
// "\n" separators; those are turned back into line breaks. Errors never quote the key.
func parsePrivateKey(text string) (*rsa.PrivateKey, error) {
	text = strings.TrimSpace(text)
	if !strings.Contains(text, "\n") && strings.Contains(text, `\n`) {
		text = strings.ReplaceAll(text, `\n`, "\n")
	}
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("not a PEM-encoded key (the .pem file GitHub lets you download for the app, starting with -----BEGIN RSA PRIVATE KEY-----)")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("an RSA PRIVATE KEY block that does not parse: %w", err)
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a PRIVATE KEY block that does not parse: %w", err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T, not an RSA key (GitHub Apps sign with RS256)", k)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("a PEM block of type %q, not a private key", block.Type)
}

// keySecrets are the texts of a private key to mask: the whole text as given and each line
// of its base64 body (a message quoting part of the file).
func keySecrets(keyText string) []string {
	out := []string{keyText}
	for _, l := range strings.FieldsFunc(strings.ReplaceAll(keyText, `\n`, "\n"), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// signJWT returns the JWT of an app as GitHub documents it: RS256, issued 60 s in the past
// (GitHub's allowance for clock drift) and expiring 9 minutes from now (GitHub refuses more
// than 10, and this machine's clock may run ahead of GitHub's).
func signJWT(key *rsa.PrivateKey, iss string, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	claims, err := json.Marshal(struct {
		IAT int64  `json:"iat"`
		EXP int64  `json:"exp"`
		ISS string `json:"iss"`
	}{now.Add(-time.Minute).Unix(), now.Add(9 * time.Minute).Unix(), iss})
	if err != nil {
		return "", err
	}
	signing := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("signing the GitHub App's JWT: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// jwtLifetime is how long a JWT of signJWT is valid for (masking keeps it that long).
const jwtLifetime = 9 * time.Minute

// credential authorizes the requests of a session.
type credential interface {
	// authorization is the Authorization header of the next request.
	authorization(ctx context.Context) (string, error)
	// refused is told that GitHub answered 401 to a request sent with auth, and reports
	// whether sending it once more, with a new credential, may succeed.
	refused(auth string) bool
}

// staticToken is a token given by the OU (or $GITHUB_TOKEN): nothing renews it.
type staticToken string

func (t staticToken) authorization(context.Context) (string, error) {
	return "Bearer " + string(t), nil
}
func (staticToken) refused(string) bool { return false }

// app is a GitHub App on one API host. Requests authenticated as the app itself (finding an
// installation, creating installation tokens) go through its session, with a JWT signed
// per request.
type app struct {
	id  string
	key *rsa.PrivateKey
	reg *Registry
	s   *session
}

func (a *app) authorization(context.Context) (string, error) {
	now := a.reg.opt.Now()
	jwt, err := signJWT(a.key, a.id, now)
	if err != nil {
		return "", err
	}
	a.reg.remember(jwt, now.Add(jwtLifetime))
	return "Bearer " + jwt, nil
}

// refused: a new JWT would carry the same claims; a 401 means a wrong key, app ID or clock.
func (*app) refused(string) bool { return false }

// installation is the token of one installation of an app (one org), shared by every OU of
// that org on the host that uses the app.
type installation struct {
	app   *app
	org   string
	given int64 // installation_id given by an OU, 0 if none

	mu        sync.Mutex
	id        int64 // given, or found; 0 until then
	tok       string
	refreshAt time.Time
	perms     map[string]string
	flight    *flight // the token request in flight, if any
}

// flight is one token request that concurrent callers wait for.
type flight struct {
	done  chan struct{}
	tok   string
	perms map[string]string
	err   error
}

func (in *installation) authorization(ctx context.Context) (string, error) {
	tok, _, err := in.current(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

// refused drops the token GitHub refused (revoked, or expired early by GitHub's clock), so
// that the request is sent again with a new one. Concurrent refusals of one token cause one
// replacement: a later one finds the token already replaced.
func (in *installation) refused(auth string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.tok != "" && auth == "Bearer "+in.tok {
		in.tok, in.refreshAt = "", time.Time{}
	}
	return true
}

// current returns a live token and its permissions, getting a new one when there is none or
// it is due for replacement. Concurrent callers share one request, which is not tied to the
// context of the caller that started it (the others still wait for it).
func (in *installation) current(ctx context.Context) (string, map[string]string, error) {
	in.mu.Lock()
	if in.tok != "" && in.app.reg.opt.Now().Before(in.refreshAt) {
		tok, perms := in.tok, in.perms
		in.mu.Unlock()
		return tok, perms, nil
	}
	f := in.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		in.flight = f
		go in.refresh(context.WithoutCancel(ctx), f)
	}
	in.mu.Unlock()
	select {
	case <-f.done:
		// The flight's own token is used even if, by the clock, it is already due again
		// (a token living less than a request takes): one use, not a loop of replacements.
		return f.tok, f.perms, f.err
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

func (in *installation) refresh(ctx context.Context, f *flight) {
	tok, perms, refreshAt, err := in.fetch(ctx)
	in.mu.Lock()
	if err == nil {
		in.tok, in.perms, in.refreshAt = tok, perms, refreshAt
	}
	in.flight = nil
	in.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("getting a GitHub App installation token for org %s: %w", in.org, err)
	}
	f.tok, f.perms, f.err = tok, perms, err
	close(f.done)
}

// authKey marks the context of the app's own requests, which are counted apart from the
// reads and writes of the run.
type authKey struct{}

// fetch finds the installation (once) and creates a token.
func (in *installation) fetch(ctx context.Context) (string, map[string]string, time.Time, error) {
	opt := &in.app.reg.opt
	s := in.app.s
	ctx = context.WithValue(ctx, authKey{}, true)
	in.mu.Lock()
	id := in.id
	in.mu.Unlock()
	if id == 0 {
		inst, _, err := s.gh.Apps.FindOrganizationInstallation(ctx, in.org)
		if err != nil {
			if httpStatus(err) == http.StatusNotFound {
				return "", nil, time.Time{}, fmt.Errorf("GitHub App %s is not installed on org %s (GET /orgs/%s/installation: 404): install it on the org, or check app_id and addr", in.app.id, in.org, in.org)
			}
			return "", nil, time.Time{}, fmt.Errorf("finding the installation of GitHub App %s on org %s: %w", in.app.id, in.org, err)
		}
		if id = inst.GetID(); id <= 0 {
			return "", nil, time.Time{}, fmt.Errorf("GitHub gave no installation ID for GitHub App %s on org %s", in.app.id, in.org)
		}
		in.mu.Lock()
		in.id = id
		in.mu.Unlock()
	}
	req, err := s.gh.NewRequest(http.MethodPost, fmt.Sprintf("app/installations/%d/access_tokens", id), nil)
	if err != nil {
		return "", nil, time.Time{}, err
	}
	var out struct {
		Token       string            `json:"token"`
		ExpiresAt   time.Time         `json:"expires_at"`
		Permissions map[string]string `json:"permissions"`
	}
	// Creating a token twice is harmless, so a lost answer may be asked for again.
	resp, err := s.gh.Do(markIdempotent(ctx), req, &out)
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("creating a token for installation %d of GitHub App %s: %w", id, in.app.id, err)
	}
	now := opt.Now()
	if out.Token == "" || out.ExpiresAt.IsZero() {
		return "", nil, time.Time{}, fmt.Errorf("GitHub answered the token request for installation %d of GitHub App %s without a token or its expiry", id, in.app.id)
	}
	// The lifetime is measured on GitHub's clock (its Date header), so that a skewed local
	// clock neither keeps a token past its end nor replaces it at once.
	life := out.ExpiresAt.Sub(now)
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		life = out.ExpiresAt.Sub(d)
	}
	in.app.reg.remember(out.Token, now.Add(life+time.Minute))
	if life <= 0 {
		return "", nil, time.Time{}, fmt.Errorf("GitHub issued a token for installation %d of GitHub App %s that has already expired", id, in.app.id)
	}
	s.both(ctx, func(c *counters) { c.appTokens.Add(1) })
	return out.Token, out.Permissions, now.Add(life - min(opt.AppTokenRefresh, life/2)), nil
}

// checkAccess refuses, before anything is sent, a read or an apply that an App's installation
// has not the permission for (the token's answer lists them): members read for reads, write
// for writes. GitHub would answer each request 403 "Resource not accessible by integration".
// A token credential is not checked (GitHub does not say what a classic token may do).
func (s *session) checkAccess(ctx context.Context, write bool) error {
	in := s.inst
	if in == nil {
		return nil
	}
	_, perms, err := in.current(ctx)
	if err != nil {
		return err
	}
	level := perms["members"]
	if level == "write" || level == "read" && !write {
		return nil
	}
	has := "no \"Members\" organization permission"
	if level != "" {
		has = fmt.Sprintf("the \"Members\" organization permission at %q only", level)
	}
	need := "reading needs Read-only or Read and write"
	if write {
		need = "applying needs Read and write"
	}
	return fmt.Errorf("%w: GitHub App %s's installation on org %s has %s; %s: in the app's settings set Organization permissions > Members to Read and write, then have an owner of %s accept the new permissions",
		ErrAppPermissions, in.app.id, in.org, has, need, in.org)
}

// appSession returns the session of an App's installation on an org, creating the app and the
// installation on first use.
func (h *host) appSession(a appSettings, org string) (*session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ap := h.apps[a.id]
	if ap == nil {
		ap = &app{id: a.id, key: a.key, reg: h.reg}
		ap.s = h.newSession(ap, "app:"+a.id)
		h.apps[a.id] = ap
	} else if !ap.key.PublicKey.Equal(&a.key.PublicKey) {
		return nil, fmt.Errorf("two OUs give different private keys for GitHub App %s: give every OU of the app the same key", a.id)
	}
	key := "app\x00" + a.id + "\x00" + strings.ToLower(org)
	if s := h.sessions[key]; s != nil {
		in := s.inst
		if a.installationID != 0 {
			in.mu.Lock()
			defer in.mu.Unlock()
			switch in.given {
			case 0:
				in.given = a.installationID
				in.id = a.installationID
			case a.installationID:
			default:
				return nil, fmt.Errorf("two OUs of org %s give different installation_id for GitHub App %s (%d and %d): an app has one installation per org",
					org, a.id, in.given, a.installationID)
			}
		}
		return s, nil
	}
	in := &installation{app: ap, org: org, given: a.installationID, id: a.installationID}
	s := h.newSession(in, "app:"+a.id+":"+strings.ToLower(org))
	s.inst = in
	h.sessions[key] = s
	return s, nil
}

// shortLived is a credential masked until it has expired.
type shortLived struct {
	v     string
	until time.Time
}

// remember masks a short-lived credential (a JWT, an installation token) until it has expired,
// and stops masking those that have: a long-running registry would otherwise search every
// message for every token it ever held.
func (r *Registry) remember(v string, until time.Time) {
	r.secrets.Add(v)
	now := r.opt.Now()
	r.shortMu.Lock()
	defer r.shortMu.Unlock()
	keep := r.short[:0]
	for _, c := range r.short {
		if now.After(c.until) {
			r.secrets.Remove(c.v)
		} else {
			keep = append(keep, c)
		}
	}
	r.short = append(keep, shortLived{v, until})
}
