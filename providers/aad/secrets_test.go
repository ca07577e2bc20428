package aad

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// The sentinels of the secret tests: distinctive, so any leak is found.
const (
	sentinelSecret = "S3NT1NEL+client/secret=9d2a"
	sentinelToken  = "eyS3NT1NEL.access.token.77f0"
)

// echoLogin is a transport that plays the Microsoft identity platform (instance and tenant
// discovery succeed) and refuses the token request with an error that quotes the request
// body, the client secret included, as a misbehaving proxy may. Graph requests get the same
// echo. With endless, the token request's answer never ends instead.
type echoLogin struct{ endless bool }

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func (l echoLogin) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	answer := func(status int, s string) (*http.Response, error) {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(s)), Request: r}, nil
	}
	const login = "https://login.microsoftonline.com/contoso-tenant"
	switch {
	case strings.HasSuffix(r.URL.Path, "/discovery/instance"):
		return answer(200, `{"tenant_discovery_endpoint":"`+login+`/v2.0/.well-known/openid-configuration","api-version":"1.1",`+
			`"metadata":[{"preferred_network":"login.microsoftonline.com","preferred_cache":"login.windows.net","aliases":["login.microsoftonline.com","login.windows.net"]}]}`)
	case strings.HasSuffix(r.URL.Path, "/openid-configuration"):
		return answer(200, `{"token_endpoint":"`+login+`/oauth2/v2.0/token","authorization_endpoint":"`+login+
			`/oauth2/v2.0/authorize","issuer":"`+login+`/v2.0"}`)
	}
	if l.endless {
		resp, _ := answer(200, "")
		resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"access_token": "`), zeros{}))
		return resp, nil
	}
	return answer(401, fmt.Sprintf(`{"error":"invalid_client","error_description":"echo: %s %q %s"}`,
		r.Header.Get("Authorization"), body, r.URL))
}

// echoGraph answers every request 401 with an OData error quoting the Authorization header.
func echoGraph(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, `{"error":{"code":"InvalidAuthenticationToken","message":"token %s is not valid"}}`, r.Header.Get("Authorization"))
}

// Issue 20 (also close): no error, outcome or log line of the AAD provider holds the client
// secret or an access token: an identity platform that quotes the token request, a Graph that
// quotes the Authorization header, no server, TLS to a plain server.
func TestCredentialsNeverInErrorsOrLogs(t *testing.T) {
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String() + "/v1.0"
	}
	for _, tc := range []struct {
		name string
		// graph is the graph_url; secret: authenticate with the OU's client secret through
		// echoLogin instead of a static token.
		graph  func(t *testing.T, e *env) string
		secret bool
	}{
		{"token request quoted", func(t *testing.T, e *env) string { return e.fake.BaseURL() }, true},
		{"Authorization header quoted", func(t *testing.T, e *env) string {
			srv := httptest.NewServer(http.HandlerFunc(echoGraph))
			t.Cleanup(srv.Close)
			return srv.URL + "/v1.0"
		}, false},
		{"no server", func(t *testing.T, e *env) string { return closed() }, false},
		{"TLS to a plain server", func(t *testing.T, e *env) string {
			return strings.Replace(e.fake.BaseURL(), "http://", "https://", 1)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "", 2)
			e.write("config.yaml", fmt.Sprintf(`configuration_path: ./groups
groups:
  aad/groups:
    type: aad
    base: ou=aad,dc=example,dc=net
    user_principal_format: "%%KEY%%%s"
    graph_url: %s
    tenant_id: contoso-tenant
    client_id: 0f0e0d0c-aaaa-bbbb-cccc-000000000001
    client_secret: %s
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`, upnDomain, tc.graph(t, e), sentinelSecret))
			e.seedUsers(e.people...)
			e.group("g", []string{"u000"})
			var logs bytes.Buffer
			opt := Options{Sleep: e.sleep.Sleep, MaxAttempts: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tc.secret {
				opt.HTTPClient = &http.Client{Transport: echoLogin{}}
			} else {
				opt.TokenCredential = staticCred{sentinelToken}
			}
			reg := NewRegistry(opt)
			defer reg.Close()
			plan, tp, _ := e.plan(reg, false)
			if tp.Err == nil {
				t.Fatal("the plan did not fail")
			}
			texts := []string{tp.Err.Error()}
			rep, _ := deploy.Apply(context.Background(), plan, deploy.ApplyOptions{})
			if err := rep.Err(); err != nil {
				texts = append(texts, err.Error())
			}
			texts = append(texts, logs.String())
			all := strings.Join(texts, "\n")
			// The secret travels URL-encoded in the token request.
			for _, s := range []string{sentinelSecret, url.QueryEscape(sentinelSecret), sentinelToken} {
				if strings.Contains(all, s) {
					t.Errorf("%s leaked:\n%s", s, all)
				}
			}
			t.Logf("messages:\n%s", all)
		})
	}
}

// actionsThenEcho answers the GitHub Actions ID-token request with idToken (or, when
// idToken is "", refuses it quoting the Authorization header) and hands every other request
// to echoLogin, whose token endpoint quotes the request body: the assertion.
type actionsThenEcho struct{ idToken string }

func (a actionsThenEcho) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "actions.example" {
		return echoLogin{}.RoundTrip(r)
	}
	status, body := 200, `{"count":1,"value":"`+a.idToken+`"}`
	if a.idToken == "" {
		status, body = 401, `{"message":"bad token `+r.Header.Get("Authorization")+`"}`
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// Issue 24 item 2: github_oidc's request token and ID tokens never reach an error or a log
// line, even when the Actions endpoint quotes the request token or the identity platform
// quotes the assertion.
func TestOIDCCredentialsNeverInErrorsOrLogs(t *testing.T) {
	const requestToken = "S3NT1NEL-actions-request-token"
	const idToken = "eyS3NT1NEL.id-token.payload.sig"
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"Actions quotes the request token", actionsThenEcho{}},
		{"token endpoint quotes the assertion", actionsThenEcho{idToken: idToken}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "credential: github_oidc\ntenant_id: contoso-tenant\nclient_id: 0f0e0d0c-aaaa-bbbb-cccc-000000000001", 2)
			e.seedUsers(e.people...)
			e.group("g", []string{"u000"})
			var logs bytes.Buffer
			vars := map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": "https://actions.example/idtoken?api-version=2.0",
				"ACTIONS_ID_TOKEN_REQUEST_TOKEN": requestToken}
			reg := NewRegistry(Options{Sleep: e.sleep.Sleep, MaxAttempts: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				HTTPClient: &http.Client{Transport: tc.rt}, Getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
			defer reg.Close()
			_, tp, _ := e.plan(reg, false)
			if tp.Err == nil {
				t.Fatal("the plan did not fail")
			}
			all := tp.Err.Error() + "\n" + logs.String()
			for _, s := range []string{requestToken, idToken, url.QueryEscape(idToken)} {
				if strings.Contains(all, s) {
					t.Errorf("%s leaked:\n%s", s, all)
				}
			}
			if !strings.Contains(all, "[REDACTED]") {
				t.Errorf("nothing was masked, so nothing was quoted: the test proves nothing:\n%s", all)
			}
			t.Logf("messages:\n%s", all)
		})
	}
}
