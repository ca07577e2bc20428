package aad

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// selfSigned writes a PEM file of a new self-signed certificate and its PKCS#8 key.
func selfSigned(t *testing.T) (string, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "entitlements"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	path := filepath.Join(t.TempDir(), "app.pem")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, cert
}

const (
	testTenant = "contoso"
	testClient = "11111111-aaaa-bbbb-cccc-000000000001"
	k8sIssuer  = "https://oidc.cluster.example"
	k8sSubject = "system:serviceaccount:entitlements:sync"
)

// identityRegistry is a Registry that authenticates with the OU's credential against the
// fake's identity endpoints (azidentity pointed at LoginURL; the internet is never asked).
func (e *env) identityRegistry(opt Options, vars map[string]string) *Registry {
	opt.HTTPClient = e.fake.IdentityClient()
	opt.AuthorityHost = e.fake.LoginURL()
	opt.Sleep = e.sleep.Sleep
	opt.NoWritePacing = true // as env.registry
	opt.Getenv = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	r := NewRegistry(opt)
	e.t.Cleanup(r.Close)
	return r
}

// Issue 24 item 2: every credential kind that can be faked authenticates against the fake's
// token endpoint, and a run longer than the tokens' lifetime gets new tokens on the way and
// completes with no failed write (the fake answers 401 to an expired token). github_oidc
// asks the Actions endpoint for a fresh ID token for every exchange.
func TestCredentialKindsRefreshMidRun(t *testing.T) {
	const lifetime = time.Second
	certPath, cert := selfSigned(t)
	ids := map[string]string{"AZURE_TENANT_ID": testTenant, "AZURE_CLIENT_ID": testClient}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name, settings, grant string
		vars                  func(e *env) map[string]string
		// processEnv: the kind reads its environment through azidentity (managed identity).
		processEnv func(e *env) map[string]string
	}{
		{name: "client_secret", grant: "client_secret",
			settings: "tenant_id: " + testTenant + "\nclient_id: " + testClient + "\nclient_secret: right-secret-value",
			vars:     func(*env) map[string]string { return nil }},
		{name: "client_secret from the environment", grant: "client_secret",
			vars: func(*env) map[string]string { return with(ids, "AZURE_CLIENT_SECRET", "right-secret-value") }},
		{name: "certificate", grant: "certificate",
			settings: "credential: certificate\nclient_certificate_path: " + certPath,
			vars:     func(*env) map[string]string { return ids }},
		{name: "workload_identity", grant: "federated", settings: "credential: workload_identity",
			vars: func(e *env) map[string]string {
				file := filepath.Join(t.TempDir(), "token")
				if err := os.WriteFile(file, []byte(e.fake.FederatedToken(k8sIssuer, k8sSubject, time.Hour)), 0o600); err != nil {
					t.Fatal(err)
				}
				return with(ids, "AZURE_FEDERATED_TOKEN_FILE", file)
			}},
		{name: "github_oidc", grant: "federated", settings: "credential: github_oidc\ntenant_id: " + testTenant,
			vars: func(e *env) map[string]string {
				return map[string]string{"AZURE_CLIENT_ID": testClient, "ACTIONS_ID_TOKEN_REQUEST_URL": e.fake.ActionsTokenURL(),
					"ACTIONS_ID_TOKEN_REQUEST_TOKEN": fakegraph.DefaultActionsRequestToken}
			}},
		{name: "managed_identity", grant: "managed_identity", settings: "credential: managed_identity\nclient_id: mi-client",
			vars: func(*env) map[string]string { return nil },
			processEnv: func(e *env) map[string]string {
				return map[string]string{"IDENTITY_ENDPOINT": e.fake.ManagedIdentityEndpoint(), "IDENTITY_HEADER": fakegraph.DefaultIdentityHeader}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{Latency: 25 * time.Millisecond, Identity: fakegraph.IdentityOptions{TokenLifetime: lifetime}},
				"create_if_missing: true\n"+tc.settings, 120)
			e.fake.RegisterApp(fakegraph.App{Tenant: testTenant, ClientID: testClient, Secret: "right-secret-value", Cert: cert,
				Federations: []fakegraph.Federation{{Issuer: k8sIssuer, Subject: k8sSubject},
					{Issuer: fakegraph.ActionsIssuer, Subject: "repo:acme/entitlements:ref:refs/heads/main"}}})
			e.fake.AddManagedIdentity("mi-client", "GroupMember.ReadWrite.All")
			if tc.processEnv != nil {
				for k, v := range tc.processEnv(e) {
					t.Setenv(k, v)
				}
			}
			e.seedUsers(e.people...)
			const groups = 40
			for i := range groups {
				e.group(fmt.Sprintf("g%02d", i), e.people[i*3:i*3+3])
			}
			reg := e.identityRegistry(Options{PoolSize: 2, BatchSize: 2}, tc.vars(e))
			start := time.Now()
			plan, tp, _ := e.plan(reg, false)
			if tp.Err != nil {
				t.Fatalf("plan: %v", tp.Err)
			}
			rep := e.apply(plan)
			took := time.Since(start)
			if took <= lifetime {
				t.Fatalf("the run took %v, not longer than the tokens' lifetime %v: nothing to refresh", took, lifetime)
			}
			if n := len(rep.Targets[0].Outcomes); n < groups {
				t.Fatalf("%d outcomes, want at least %d", n, groups)
			}
			if got := e.members("g39"); strings.Join(got, ",") != "u117,u118,u119" {
				t.Errorf("g39 members %v", got)
			}
			st, gs := e.fake.IdentityStats(), e.fake.Stats()
			if st.Tokens[tc.grant] < 2 || st.Expired != 0 || gs.Unauthorized != 0 || st.Refused != 0 {
				t.Errorf("tokens %v, refused %d, expired tokens sent %d, Graph 401s %d: want >= 2 %s tokens and no refusal",
					st.Tokens, st.Refused, st.Expired, gs.Unauthorized, tc.grant)
			}
			if tc.name == "github_oidc" && st.IDTokens != st.Tokens["federated"] {
				t.Errorf("%d ID tokens for %d exchanges: want a fresh one per exchange", st.IDTokens, st.Tokens["federated"])
			}
			t.Logf("%v, %d Graph requests, tokens %v, ID tokens %d", took.Round(time.Millisecond), gs.Requests, st.Tokens, st.IDTokens)
		})
	}
}
