package fakegraph

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// tokenRequest posts a client-credentials request and returns the status and reply.
func tokenRequest(t *testing.T, s *Server, tenant string, form url.Values) (int, map[string]any) {
	t.Helper()
	form.Set("grant_type", "client_credentials")
	if !form.Has("scope") {
		form.Set("scope", s.URL+"/.default")
	}
	resp, err := s.IdentityClient().PostForm(s.LoginURL()+"/"+tenant+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// graphStatus is the status of GET /groups with a bearer token.
func graphStatus(t *testing.T, s *Server, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.BaseURL()+"/groups", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct{ Message string }
	}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error.Message
}

// Issue 24 item 2: the token endpoint checks client secrets and federated assertions
// (issuer, subject, audience, expiry, signature) and issues tokens that Graph accepts until
// they expire.
func TestTokenEndpoint(t *testing.T) {
	s := New(Options{Identity: IdentityOptions{TokenLifetime: time.Second}})
	defer s.Close()
	const k8s = "https://oidc.example/cluster"
	s.RegisterApp(App{Tenant: "t1", ClientID: "app", Secret: "right-secret",
		Federations: []Federation{{Issuer: k8s, Subject: "system:serviceaccount:ns:sa"}}, Roles: []string{"Group.ReadWrite.All"}})
	other := New(Options{})
	defer other.Close()
	assertion := func(a string) url.Values {
		return url.Values{"client_id": {"app"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {a}}
	}
	for _, tc := range []struct {
		name   string
		tenant string
		form   url.Values
		status int
		desc   string
	}{
		{"secret", "t1", url.Values{"client_id": {"app"}, "client_secret": {"right-secret"}}, 200, ""},
		{"wrong secret", "t1", url.Values{"client_id": {"app"}, "client_secret": {"wrong"}}, 401, "AADSTS7000215"},
		{"unknown app", "t2", url.Values{"client_id": {"app"}, "client_secret": {"right-secret"}}, 400, "AADSTS700016"},
		{"no credential", "t1", url.Values{"client_id": {"app"}}, 401, "AADSTS7000216"},
		{"federated", "t1", assertion(s.FederatedToken(k8s, "system:serviceaccount:ns:sa", time.Minute)), 200, ""},
		{"federated, expired", "t1", assertion(s.FederatedToken(k8s, "system:serviceaccount:ns:sa", -time.Minute)), 401, "AADSTS700024"},
		{"federated, other subject", "t1", assertion(s.FederatedToken(k8s, "system:serviceaccount:ns:x", time.Minute)), 401, "AADSTS70021"},
		{"federated, other issuer", "t1", assertion(s.FederatedToken("https://evil", "system:serviceaccount:ns:sa", time.Minute)), 401, "AADSTS70021"},
		{"federated, signed by another key", "t1", assertion(other.FederatedToken(k8s, "system:serviceaccount:ns:sa", time.Minute)), 401, "AADSTS700211"},
		{"garbage assertion", "t1", assertion("a.b"), 401, "AADSTS50027"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := tokenRequest(t, s, tc.tenant, tc.form)
			desc, _ := out["error_description"].(string)
			if status != tc.status || !strings.Contains(desc, tc.desc) {
				t.Fatalf("status %d %q, want %d %q", status, desc, tc.status, tc.desc)
			}
			if status != 200 {
				return
			}
			tok, _ := out["access_token"].(string)
			c, err := Claims(tok)
			if err != nil || c["roles"].([]any)[0] != "Group.ReadWrite.All" || c["tid"] != "t1" {
				t.Fatalf("claims %v, %v", c, err)
			}
			if st, msg := graphStatus(t, s, tok); st != 200 {
				t.Fatalf("a fresh token: %d %s", st, msg)
			}
		})
	}
	if st := s.IdentityStats(); st.Tokens["client_secret"] != 1 || st.Tokens["federated"] != 1 || st.Refused != 8 {
		t.Errorf("stats %+v", st)
	}
	// Tokens expire: Graph then answers 401 and counts it.
	_, out := tokenRequest(t, s, "t1", url.Values{"client_id": {"app"}, "client_secret": {"right-secret"}})
	tok := out["access_token"].(string)
	time.Sleep(1100 * time.Millisecond)
	if st, msg := graphStatus(t, s, tok); st != 401 || !strings.Contains(msg, "expired") {
		t.Fatalf("an expired token: %d %s", st, msg)
	}
	if st, _ := graphStatus(t, s, "made-up"); st != 401 {
		t.Fatalf("a made-up token: %d", st)
	}
	if st := s.IdentityStats(); st.Expired != 1 {
		t.Errorf("Expired %d, want 1", st.Expired)
	}
}

// The Actions endpoint needs its request token, counts every ID token, and each is fresh.
func TestActionsAndManagedIdentityEndpoints(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	get := func(u string, hdr map[string]string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := s.IdentityClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	aud := "&audience=" + url.QueryEscape(FederationAudience)
	if st, _ := get(s.ActionsTokenURL()+aud, map[string]string{"Authorization": "Bearer wrong"}); st != 401 {
		t.Fatalf("wrong request token: %d", st)
	}
	seen := map[string]bool{}
	for range 3 {
		st, out := get(s.ActionsTokenURL()+aud, map[string]string{"Authorization": "Bearer " + DefaultActionsRequestToken})
		v, _ := out["value"].(string)
		c, _ := Claims(v)
		if st != 200 || c["aud"] != FederationAudience || c["iss"] != ActionsIssuer || seen[v] {
			t.Fatalf("%d %v (seen before: %v)", st, c, seen[v])
		}
		seen[v] = true
	}
	if n := s.IdentityStats().IDTokens; n != 3 {
		t.Errorf("IDTokens %d, want 3", n)
	}
	s.AddManagedIdentity("user-assigned", "GroupMember.ReadWrite.All")
	q := "?api-version=2019-08-01&resource=" + url.QueryEscape(s.URL)
	for _, tc := range []struct {
		name, query, header string
		status              int
	}{
		{"system assigned", q, DefaultIdentityHeader, 200},
		{"user assigned", q + "&client_id=user-assigned", DefaultIdentityHeader, 200},
		{"unknown identity", q + "&client_id=nobody", DefaultIdentityHeader, 400},
		{"wrong header", q, "wrong", 401},
	} {
		st, out := get(s.ManagedIdentityEndpoint()+tc.query, map[string]string{"X-IDENTITY-HEADER": tc.header})
		if st != tc.status {
			t.Errorf("%s: %d %v, want %d", tc.name, st, out, tc.status)
			continue
		}
		if st == 200 {
			if gs, msg := graphStatus(t, s, out["access_token"].(string)); gs != 200 {
				t.Errorf("%s: Graph refused the token: %d %s", tc.name, gs, msg)
			}
		}
	}
}
