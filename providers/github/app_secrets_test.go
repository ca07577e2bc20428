package github_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Issue 24: no GitHub App credential (the private key, a JWT, an installation token) shows in
// any error, outcome or log line, whatever answers: a server that echoes the Authorization
// header of the app's requests or of the installation's, reads and writes refused with the
// token quoted, a key that does not parse.
func TestAppCredentialsNeverInMessages(t *testing.T) {
	_, keyPEM, _, _ := appKeys(t)
	const instTok = "ghs_S3NT1NELinstallationTokenValue"
	jwtHead := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	echo := func(w http.ResponseWriter, r *http.Request, status int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"message":"Bad credentials: `+r.Header.Get("Authorization")+`","errors":[{"message":"`+r.Header.Get("Authorization")+`"}]}`)
	}
	// server answers the App's requests (or echoes them, refusing), then echoes everything.
	server := func(lookup, token int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			switch {
			case strings.HasSuffix(r.URL.Path, "/installation") && lookup == 200:
				io.WriteString(w, `{"id":5}`)
			case strings.HasSuffix(r.URL.Path, "/installation"):
				echo(w, r, lookup)
			case strings.HasSuffix(r.URL.Path, "/access_tokens") && token == 201:
				w.WriteHeader(201)
				io.WriteString(w, `{"token":"`+instTok+`","expires_at":"`+time.Unix(1_800_003_600, 0).UTC().Format(time.RFC3339)+`","permissions":{"members":"write"}}`)
			case strings.HasSuffix(r.URL.Path, "/access_tokens"):
				echo(w, r, token)
			default:
				echo(w, r, http.StatusUnauthorized)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env)
		apply bool
	}{
		{"installation lookup echoing the JWT", func(t *testing.T, e *env) {
			srv := httptest.NewServer(server(403, 201))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, false},
		{"token request echoing the JWT", func(t *testing.T, e *env) {
			srv := httptest.NewServer(server(200, 401))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, false},
		{"reads echoing the installation token, twice", func(t *testing.T, e *env) {
			srv := httptest.NewServer(server(200, 201))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, false},
		{"a key that does not parse", func(t *testing.T, e *env) {
			e.vars["APP_KEY"] = "-----BEGIN RSA PRIVATE KEY-----\nMIIS3NT1NELnotakeyatallMIIS3NT1NEL\n-----END RSA PRIVATE KEY-----\n"
		}, false},
		{"writes refused with the installation token echoed", func(t *testing.T, e *env) {
			target, _ := url.Parse(e.fake.URL())
			proxy := httputil.NewSingleHostReverseProxy(target)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodPatch {
					echo(w, r, http.StatusUnprocessableEntity)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := appEnv(t, fakegithub.Options{}, map[string]string{"members": "write"})
			seedOrg(e)
			e.write(orgFiles)
			e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
			e.fake.SetMember("acme", "erin", "member") // a removal to write
			tc.setup(t, e)
			reg := e.registry()
			plan := e.plan(reg)
			var texts []string
			for _, tp := range plan.Targets {
				if tp.Err != nil {
					texts = append(texts, tp.Err.Error())
				}
			}
			if tc.apply {
				if err := plan.Err(); err != nil {
					t.Fatalf("plan: %v", err)
				}
			} else if len(texts) == 0 {
				t.Fatal("the plan did not fail")
			}
			rep := e.apply(reg, plan)
			if err := rep.Err(); err != nil {
				texts = append(texts, err.Error())
			} else if tc.apply {
				t.Fatal("no write failed")
			}
			for _, tr := range rep.Targets {
				for _, o := range tr.Outcomes {
					if o.Err != nil {
						texts = append(texts, o.Err.Error())
					}
				}
			}
			texts = append(texts, e.log.String())
			all := strings.Join(texts, "\n")
			if !strings.Contains(all, "[REDACTED]") && tc.name != "a key that does not parse" {
				t.Errorf("nothing was masked: is the echo reaching the messages?\n%s", all)
			}
			leaks := []string{instTok, "ghs_", jwtHead, "S3NT1NEL"}
			for _, l := range strings.Split(keyPEM, "\n") {
				if l != "" && !strings.HasPrefix(l, "-----") {
					leaks = append(leaks, l)
				}
			}
			for _, l := range leaks {
				if strings.Contains(all, l) {
					t.Errorf("%q leaked:\n%s", l, all)
				}
			}
			t.Logf("messages:\n%s", all)
		})
	}
}
