package github_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// sentinelToken is the token of the secret tests: distinctive, so any leak is found.
const sentinelToken = "ghp_S3NT1NEL7a1c9e05b3"

// echoHandler answers every request with status and a body that echoes the request's
// headers (the token included), as a misconfigured proxy or a hostile server may.
func echoHandler(status int, graphqlOK bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		auth := r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		if graphqlOK && strings.HasSuffix(r.URL.Path, "/graphql") {
			w.Write([]byte(`{"data":null,"errors":[{"message":"Bad credentials: ` + auth + `","type":"UNAUTHORIZED"}]}`))
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(`{"message":"Bad credentials: ` + auth + `","documentation_url":"https://docs.github.com/rest","errors":[{"message":"` + auth + `"}]}`))
	}
}

// Issue 20 (also close): no error, outcome or log line of the GitHub provider holds its
// token, whatever the server answers: refused token, no server, TLS to a plain server, a
// server that echoes the request (token included) in its errors, write refusals that echo it.
func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	for _, tc := range []struct {
		name string
		// setup points the provider somewhere; apply: the plan is expected to succeed and
		// the failures come from writes.
		setup func(t *testing.T, e *env)
		apply bool
	}{
		{"refused token", func(t *testing.T, e *env) {}, false},
		{"no server", func(t *testing.T, e *env) { e.opt.BaseURL = "http://" + closed() + "/" }, false},
		{"TLS to a plain server", func(t *testing.T, e *env) {
			e.opt.BaseURL = strings.Replace(e.fake.URL(), "http://", "https://", 1) + "/"
		}, false},
		{"server echoing the request in REST and GraphQL errors", func(t *testing.T, e *env) {
			srv := httptest.NewServer(echoHandler(http.StatusUnauthorized, false))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, false},
		{"server echoing the request in a GraphQL error of a 200", func(t *testing.T, e *env) {
			srv := httptest.NewServer(echoHandler(http.StatusBadGateway, true))
			t.Cleanup(srv.Close)
			e.opt.BaseURL = srv.URL + "/"
		}, false},
		{"writes refused with the token echoed", func(t *testing.T, e *env) {
			e.fake.AddFault(fakegithub.Fault{Method: http.MethodPut, Kind: fakegithub.Status, Status: 422, Message: "echo: Bearer " + sentinelToken})
			e.fake.AddFault(fakegithub.Fault{Method: http.MethodPost, Path: "/orgs/*/teams", Kind: fakegithub.Status, Status: 500, Message: "echo: Bearer " + sentinelToken})
			e.fake.AddFault(fakegithub.Fault{Method: http.MethodDelete, Kind: fakegithub.Status, Status: 403, Message: "echo: Bearer " + sentinelToken})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fopt := fakegithub.Options{Token: "the-right-token-is-another-one"}
			if tc.apply {
				fopt.Token = sentinelToken
			}
			e := newEnv(t, fopt)
			e.token = sentinelToken
			seedOrg(e)
			e.write(orgFiles)
			e.write(map[string]string{
				"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n",
				"ldap-config/github/teams/ops.txt": "username = carol\n",
			})
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
			if strings.Contains(all, sentinelToken) {
				t.Errorf("the token leaked:\n%s", all)
			}
			t.Logf("messages:\n%s", all)
		})
	}
}
