package github_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

var (
	keyOnce sync.Once
	keys    [2]*rsa.PrivateKey
	keysErr error
)

// appKeys are two RSA keys (made once per test binary) and their PEM texts, as GitHub lets
// an app's owner download them (PKCS#1).
func appKeys(t *testing.T) (key *rsa.PrivateKey, keyPEM string, other *rsa.PrivateKey, otherPEM string) {
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
	return keys[0], pemOf(keys[0]), keys[1], pemOf(keys[1])
}

func pemOf(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

const appID = 4242

// appEnv is an env whose OUs authenticate as GitHub App appID, installed on acme with
// perms, with the key in $APP_KEY; the clock starts on a whole second (GitHub's expires_at
// has whole seconds).
func appEnv(t *testing.T, fopt fakegithub.Options, perms map[string]string) (*env, int64) {
	t.Helper()
	key, keyPEM, _, _ := appKeys(t)
	e := newEnv(t, fopt)
	e.clk.now = time.Unix(1_800_000_000, 0)
	e.fake.AddApp(appID, "entitlements-sync", &key.PublicKey)
	id := e.fake.Install(appID, "acme", perms)
	e.credKeys = fmt.Sprintf("    app_id: %d\n    private_key: <%%= ENV[\"APP_KEY\"] %%>\n", appID)
	e.vars = map[string]string{"APP_KEY": keyPEM}
	e.opt.Getenv = func(string) (string, bool) { return "", false }
	return e, id
}

// bigOrg makes n users (u000...) to add to acme as members, alice its admin.
func bigOrg(e *env, n int) {
	var ppl, member strings.Builder
	for _, u := range everyone {
		fmt.Fprintf(&ppl, "%s: {cn: %s}\n", u, u)
	}
	for i := range n {
		u := fmt.Sprintf("u%03d", i)
		e.fake.AddUsers(u)
		fmt.Fprintf(&ppl, "%s: {cn: %s}\n", u, u)
		fmt.Fprintf(&member, "username = %s\n", u)
	}
	e.fake.SetMember("acme", "alice", "admin")
	e.write(map[string]string{"people.yaml": ppl.String(),
		"ldap-config/github/org/admin.txt":  "username = alice\n",
		"ldap-config/github/org/member.txt": member.String()})
}

func failures(rep interface{ Err() error }, outs []providers.Outcome) []string {
	var out []string
	for _, o := range outs {
		if o.Status != providers.Applied {
			out = append(out, fmt.Sprintf("%s: %v", o.Status, o.Err))
		}
	}
	if err := rep.Err(); err != nil {
		out = append(out, err.Error())
	}
	return out
}

// Issue 24: an apply of 300 changes with installation tokens living 2 seconds. Writes are
// spaced 100 ms apart on the injected clock, one at a time, so the run spans 29.9 s of it:
// a token is replaced halfway through its life, so the run uses one token per second
// (exactly 30), never sends an expired one (no 401) and no write fails.
func TestAppTokensRefreshedDuringALongApply(t *testing.T) {
	const n, lifetime, interval = 300, 2 * time.Second, 100 * time.Millisecond
	e, _ := appEnv(t, fakegithub.Options{InstallationTokenLifetime: lifetime, AutoAccept: true}, map[string]string{"members": "write"})
	e.opt.WriteConcurrency, e.opt.WriteInterval = 1, interval
	// Only the spacing paces this run: no invitation spacing, no minute or hour budget.
	e.opt.InviteInterval, e.opt.WritesPerMinute, e.opt.WritesPerHour = -1, -1, -1
	bigOrg(e, n)
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if got := len(target(plan, "github/org").Changes[0].Add); got != n {
		t.Fatalf("the plan adds %d members, want %d", got, n)
	}
	start := e.clk.Now()
	rep := e.apply(reg, plan)
	if f := failures(rep, outcomes(rep, "github/org")); len(f) > 0 {
		t.Fatalf("failed writes: %v", f)
	}
	span := e.clk.Now().Sub(start)
	if span != (n-1)*interval {
		t.Fatalf("the apply spanned %s of the clock, want %s", span, (n-1)*interval)
	}
	want := 1 + int(span/(lifetime/2))
	st := e.fake.Stats()
	if st.InstallationTokens != want || st.RejectedAuth != 0 || st.Requests["GET /orgs/{org}/installation"] != 1 {
		t.Errorf("tokens issued %d (want %d), requests refused %d (want 0), installation lookups %d (want 1)",
			st.InstallationTokens, want, st.RejectedAuth, st.Requests["GET /orgs/{org}/installation"])
	}
	if got := len(e.fake.Members("acme")); got != n+1 {
		t.Errorf("acme has %d members, want %d", got, n+1)
	}
	if c := reg.Counters(); c["app_tokens"] != int64(want) || c["token_renewals"] != 0 || c["app_requests"] != int64(want+1) || c["writes"] != n {
		t.Errorf("counters %v", c)
	}
}

// A token GitHub stops accepting before its time (revoked) is replaced once, and the refused
// request sent again with the new one: no write fails, one new token for all the requests
// in flight. A token refused again ends the request (no loop).
func TestAppTokenRenewedOnceAfter401(t *testing.T) {
	for _, tc := range []struct {
		name   string
		always bool // revoke before every write from the 50th on
	}{
		{"revoked once mid-apply", false},
		{"revoked before every write", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := appEnv(t, fakegithub.Options{AutoAccept: true}, map[string]string{"members": "write"})
			bigOrg(e, 100)
			var puts atomic.Int64
			e.fake.OnRequest(func(r *http.Request) {
				if r.Method == http.MethodPut {
					if n := puts.Add(1); n == 50 || tc.always && n > 50 {
						e.fake.RevokeTokens()
					}
				}
			})
			reg := e.registry()
			plan := e.plan(reg)
			if err := plan.Err(); err != nil {
				t.Fatalf("plan: %v", err)
			}
			rep := e.apply(reg, plan)
			st := e.fake.Stats()
			f := failures(rep, outcomes(rep, "github/org"))
			if !tc.always {
				if len(f) > 0 {
					t.Fatalf("failed writes: %v", f)
				}
				// Two writes are in flight at most: both may be refused, one token replaces it.
				if st.InstallationTokens != 2 || st.RejectedAuth < 1 || st.RejectedAuth > 2 {
					t.Errorf("tokens %d (want 2), refused %d (want 1 or 2)", st.InstallationTokens, st.RejectedAuth)
				}
				if c := reg.Counters(); c["token_renewals"] != int64(st.RejectedAuth) {
					t.Errorf("renewals %d, refused %d", c["token_renewals"], st.RejectedAuth)
				}
				return
			}
			if len(f) == 0 || !strings.Contains(strings.Join(f, "\n"), "401") {
				t.Fatalf("writes refused twice did not fail with the 401: %v", f)
			}
			// From the 50th PUT on every one is refused: each write refused was sent once
			// more, with a new token, and refused again; none a third time.
			if sent, retried := int(puts.Load()), int(puts.Load())-100; retried < 1 || st.RejectedAuth != 2*retried {
				t.Errorf("PUTs %d for 100 writes, refused %d: want twice as many refused as sent again", sent, st.RejectedAuth)
			}
		})
	}
}

// The OUs of one org share the installation and its token: one lookup, one token, one
// session. With installation_id given, nothing is looked up.
func TestAppInstallationSharedAndLookedUpOnce(t *testing.T) {
	for _, given := range []bool{false, true} {
		t.Run(fmt.Sprintf("installation_id given %v", given), func(t *testing.T) {
			e, id := appEnv(t, fakegithub.Options{}, map[string]string{"members": "write"})
			if given {
				e.credKeys += fmt.Sprintf("    installation_id: %d\n", id)
			}
			seedOrg(e)
			e.write(orgFiles)
			e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
			e.converge()
			e.noop()
			st := e.fake.Stats()
			lookups := 0
			if !given {
				lookups = 1
			}
			if st.Requests["GET /orgs/{org}/installation"] != lookups || st.InstallationTokens != 1 {
				t.Errorf("lookups %d (want %d), tokens %d (want 1)", st.Requests["GET /orgs/{org}/installation"], lookups, st.InstallationTokens)
			}
			if ti, _ := e.fake.Team("acme", "eng"); len(ti.Members) != 2 {
				t.Errorf("team eng %v", ti.Members)
			}
		})
	}
}

// An installation without the Members permission is refused before any read, one with it
// read-only plans but is refused before any write; the messages say what to grant.
func TestAppPermissionsCheckedEarly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perms     map[string]string
		planErr   string
		applyErr  string
		wantReads bool
	}{
		{"no members permission", map[string]string{"contents": "read"},
			`has no "Members" organization permission; reading needs Read-only or Read and write`, "", false},
		{"members read", map[string]string{"members": "read"},
			"", `has the "Members" organization permission at "read" only; applying needs Read and write`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := appEnv(t, fakegithub.Options{}, tc.perms)
			seedOrg(e)
			e.fake.SetMember("acme", "erin", "member")
			e.write(orgFiles)
			reg := e.registry()
			plan := e.plan(reg)
			st := e.fake.Stats()
			if reads := st.GraphQL + st.Requests["GET /orgs/{org}/members"]; (reads > 0) != tc.wantReads {
				t.Errorf("reads %d; want some: %v", reads, tc.wantReads)
			}
			if tc.planErr != "" {
				tp := target(plan, "github/org")
				if tp.Err == nil || !errors.Is(tp.Err, github.ErrAppPermissions) || !strings.Contains(tp.Err.Error(), tc.planErr) ||
					!strings.Contains(tp.Err.Error(), "Members to Read and write") {
					t.Fatalf("plan error %v; want %q", tp.Err, tc.planErr)
				}
				return
			}
			if err := plan.Err(); err != nil {
				t.Fatalf("plan: %v", err)
			}
			rep := e.apply(reg, plan)
			outs := outcomes(rep, "github/org")
			if len(outs) == 0 || !errors.Is(outs[0].Err, github.ErrAppPermissions) || !strings.Contains(outs[0].Err.Error(), tc.applyErr) {
				t.Fatalf("apply outcomes %v; want %q", outs, tc.applyErr)
			}
			if st := e.fake.Stats(); st.Writes != 0 {
				t.Errorf("writes were sent: %v", st.Requests)
			}
		})
	}
}

// An App has no user: the rule that never removes or demotes the token's own user is a user
// token's (alice's here), and a team an App creates needs no creator cleanup.
func TestAppHasNoOwnUser(t *testing.T) {
	for _, app := range []bool{false, true} {
		t.Run(fmt.Sprintf("app %v", app), func(t *testing.T) {
			e, _ := appEnv(t, fakegithub.Options{TokenUser: "alice"}, map[string]string{"members": "write"})
			if !app {
				e.credKeys = ""
			}
			e.fake.SetMember("acme", "alice", "admin")
			e.fake.SetMember("acme", "bob", "admin")
			e.fake.SetMember("acme", "carol", "member")
			e.write(map[string]string{
				"ldap-config/github/org/admin.txt":  "username = bob\n",
				"ldap-config/github/org/member.txt": "username = alice\nusername = carol\n", // demotes alice
				"ldap-config/github/teams/new.txt":  "username = carol\n",
			})
			reg := e.registry()
			plan := e.plan(reg)
			tp := target(plan, "github/org")
			if !app {
				if !errors.Is(tp.Err, github.ErrUnsafeOrgChange) || !strings.Contains(tp.Err.Error(), "alice, the token's own user") {
					t.Fatalf("a user token demoting its own user: %v", tp.Err)
				}
				return
			}
			if err := plan.Err(); err != nil {
				t.Fatalf("plan: %v", err)
			}
			rep := e.apply(reg, plan)
			if err := rep.Err(); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if r := e.fake.Members("acme")["alice"]; r != "member" {
				t.Errorf("alice is %q", r)
			}
			if ti, _ := e.fake.Team("acme", "new"); len(ti.Members) != 1 || ti.Members["carol"] != "member" {
				t.Errorf("team new %v", ti.Members)
			}
			if n := e.fake.Stats().Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 0 {
				t.Errorf("%d team membership removals after creating a team with an App", n)
			}
		})
	}
}

// The credential keys and their environment fallbacks, and what is refused before any
// request: two credentials, keys that do not go together, a key that does not parse.
func TestAppCredentialSettings(t *testing.T) {
	key, keyPEM, _, otherPEM := appKeys(t)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8PEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	oneLine := strings.ReplaceAll(strings.TrimSpace(keyPEM), "\n", `\n`)
	id := fmt.Sprint(appID)
	for _, tc := range []struct {
		name string
		keys string            // the OUs' credential keys (KEY is the PEM, OTHER the other key's)
		env  map[string]string // the provider's environment
		err  string            // "": the plan reads as the App
	}{
		{"key from the config", "    app_id: " + id + "\n    private_key: <%= ENV['KEY'] %>\n", nil, ""},
		{"key file", "    app_id: " + id + "\n    private_key_path: " + keyFile + "\n", nil, ""},
		{"PKCS#8 key", "    app_id: " + id + "\n    private_key: <%= ENV['PKCS8'] %>\n", nil, ""},
		{"key on one line with \\n", "    app_id: " + id + "\n    private_key: <%= ENV['ONELINE'] %>\n", nil, ""},
		{"everything from the environment", "", map[string]string{"GITHUB_APP_ID": id, "GITHUB_APP_PRIVATE_KEY": keyPEM}, ""},
		{"app_id in the config, key file from the environment", "    app_id: " + id + "\n", map[string]string{"GITHUB_APP_PRIVATE_KEY_PATH": keyFile}, ""},
		{"credential: app wins over a token", "    credential: app\n    token: tok\n    app_id: " + id + "\n    private_key_path: " + keyFile + "\n", nil, ""},
		{"credential: token wins over an app", "    credential: token\n    token: tok\n    app_id: " + id + "\n    private_key_path: " + keyFile + "\n", nil, "token"},
		{"a token in the config wins over the environment's app", "    token: tok\n", map[string]string{"GITHUB_APP_ID": id}, "token"},
		{"two credentials in the environment", "", map[string]string{"GITHUB_APP_ID": id, "GITHUB_TOKEN": "tok"},
			"gives no credential, and the environment gives two ($GITHUB_TOKEN and $GITHUB_APP_ID)"},
		{"no key", "    app_id: " + id + "\n", nil, "needs private_key or private_key_path"},
		{"key and key file", "    app_id: " + id + "\n    private_key: <%= ENV['KEY'] %>\n    private_key_path: " + keyFile + "\n", nil,
			"give the GitHub App's private_key or its private_key_path, not both"},
		{"no app_id", "    private_key_path: " + keyFile + "\n", nil, "a GitHub App credential needs app_id (or $GITHUB_APP_ID)"},
		{"bad app_id", "    app_id: 12/../x\n    private_key_path: " + keyFile + "\n", nil, "app_id must be the GitHub App's ID"},
		{"key file missing", "    app_id: " + id + "\n    private_key_path: " + keyFile + ".gone\n", nil, "reading private_key_path"},
		{"not a key", "    app_id: " + id + "\n    private_key: not-a-key-S3NT1NEL\n", nil, "not a PEM-encoded key"},
		{"bad installation_id", "    app_id: " + id + "\n    private_key_path: " + keyFile + "\n    installation_id: -3\n", nil, "installation_id must be"},
		{"wrong key", "    app_id: " + id + "\n    private_key: <%= ENV['OTHER'] %>\n", nil, "401 A JSON web token could not be decoded"},
		{"unknown app", "    app_id: 999\n    private_key: <%= ENV['KEY'] %>\n", nil, "401 Integration not found"},
		{"app not installed on the org", "    app_id: 4343\n    private_key: <%= ENV['KEY'] %>\n", nil,
			"GitHub App 4343 is not installed on org acme (GET /orgs/acme/installation: 404)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := appEnv(t, fakegithub.Options{}, map[string]string{"members": "write"})
			e.fake.AddApp(4343, "not-installed", &key.PublicKey)
			e.credKeys = tc.keys
			e.vars = map[string]string{"KEY": keyPEM, "OTHER": otherPEM, "PKCS8": pkcs8PEM, "ONELINE": oneLine}
			e.opt.Getenv = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			e.noToken = true
			seedOrg(e)
			e.write(orgFiles)
			plan := e.plan(e.registry())
			tp := target(plan, "github/org")
			st := e.fake.Stats()
			switch tc.err {
			case "":
				if tp.Err != nil || st.InstallationTokens != 1 {
					t.Fatalf("error %v, tokens %d", tp.Err, st.InstallationTokens)
				}
			case "token":
				if tp.Err != nil || st.InstallationTokens != 0 {
					t.Fatalf("error %v, tokens %d: want the token used", tp.Err, st.InstallationTokens)
				}
			default:
				if tp.Err == nil || !strings.Contains(tp.Err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", tp.Err, tc.err)
				}
				if strings.Contains(tp.Err.Error(), "S3NT1NEL") || strings.Contains(tp.Err.Error(), "MII") {
					t.Errorf("the key shows in %v", tp.Err)
				}
				if st.REST+st.GraphQL-st.Requests["GET /orgs/{org}/installation"] > 1 {
					t.Errorf("requests beyond the App's own: %v", st.Requests)
				}
			}
		})
	}
}

// Two OUs that give the same App different keys, or one org different installation IDs, are
// refused when the providers are built.
func TestAppConflictingOUs(t *testing.T) {
	_, _, _, otherPEM := appKeys(t)
	t.Run("different keys", func(t *testing.T) {
		e, _ := appEnv(t, fakegithub.Options{}, map[string]string{"members": "write"})
		e.vars["OTHER"] = otherPEM
		e.credKeys = fmt.Sprintf("    app_id: %d\n", appID)
		e.orgKeys = "    private_key: <%= ENV['APP_KEY'] %>\n"
		e.teamKeys = "    private_key: <%= ENV['OTHER'] %>\n"
		seedOrg(e)
		e.write(orgFiles)
		plan := e.plan(e.registry())
		if tp := target(plan, "github/teams"); tp.Err == nil || !strings.Contains(tp.Err.Error(), "two OUs give different private keys for GitHub App 4242") {
			t.Fatalf("error %v", tp.Err)
		}
	})
	t.Run("different installation ids", func(t *testing.T) {
		e, id := appEnv(t, fakegithub.Options{}, map[string]string{"members": "write"})
		e.orgKeys = fmt.Sprintf("    installation_id: %d\n", id)
		e.teamKeys = fmt.Sprintf("    installation_id: %d\n", id+1)
		seedOrg(e)
		e.write(orgFiles)
		plan := e.plan(e.registry())
		if tp := target(plan, "github/teams"); tp.Err == nil || !strings.Contains(tp.Err.Error(), "different installation_id") {
			t.Fatalf("error %v", tp.Err)
		}
	})
}
