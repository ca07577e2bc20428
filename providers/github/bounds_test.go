package github_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Issue 20 item 12: what a server answers never decides how many requests are sent, how
// much is read, or where a request goes.

// A Link header announcing 5,000 pages of members used to start one goroutine and one
// request per page (200,000 pages: 395k goroutines and the token's whole budget). The pages
// an org can fill are known from its member count, read just before.
func TestBogusLastPageIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages int
		// ok: the announced pages fit the org's member count and are read.
		ok bool
	}{
		{"thousands of pages for a small org", 5000, false},
		{"one page more than the members fill", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.write(orgFiles)
			e.fake.AddFault(fakegithub.Fault{Path: "/orgs/acme/members", Kind: fakegithub.BogusLastPage, LastPage: tc.pages})
			e.fake.ResetStats()
			plan := e.plan(e.registry())
			tp := target(plan, "github/org")
			rest := e.fake.Stats().Requests["GET /orgs/{org}/members"]
			if tc.ok {
				if tp.Err != nil {
					t.Fatalf("plan: %v", tp.Err)
				}
				if c := changes(plan); len(c) != 0 {
					t.Errorf("changes %v", c)
				}
				return
			}
			if tp.Err == nil || !strings.Contains(tp.Err.Error(), "GitHub announces 5000 pages for an org of 4 members") {
				t.Fatalf("plan error %v, want the bogus page count refused", tp.Err)
			}
			// The first page of each role list, nothing more.
			if rest > 2 {
				t.Errorf("%d member-list requests for a Link header announcing %d pages", rest, tc.pages)
			}
		})
	}
}

// Next links without end stop at the pages the member count allows. They are followed on the
// second attempt of a read, one by one, after the first found the lists inconsistent (erin
// joins while they are read).
func TestEndlessNextLinksStop(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	var joined atomic.Bool
	e.fake.OnRequest(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/members") && !joined.Swap(true) {
			e.fake.SetMember("acme", "erin", "member")
		}
	})
	// The first attempt's two lists pass; from then on every page links to another.
	e.fake.AddFault(fakegithub.Fault{Path: "/orgs/acme/members", Kind: fakegithub.BogusLastPage, Skip: 2})
	e.fake.ResetStats()
	plan := e.plan(e.registry())
	tp := target(plan, "github/org")
	if tp.Err == nil || !strings.Contains(tp.Err.Error(), "GitHub keeps announcing a next page after 2 pages for an org of 5 members") {
		t.Fatalf("plan error %v, want the endless list refused", tp.Err)
	}
	// 2 first-attempt pages, then at most 2 pages per role.
	if n := e.fake.Stats().Requests["GET /orgs/{org}/members"]; n > 6 {
		t.Errorf("%d member-list requests", n)
	}
}

// A Link header naming another host: the next page is still asked of the configured host
// (by page number), and the other host never sees a request, nor the token.
func TestLinkHeaderNeverChoosesTheHost(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte("[]"))
	}))
	defer other.Close()
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.fake.AddFault(fakegithub.Fault{Path: "/orgs/acme/members", Kind: fakegithub.BogusLastPage, LastPage: 2,
		LinkHost: strings.TrimPrefix(other.URL, "http://")})
	e.fake.ResetStats()
	plan := e.plan(e.registry())
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests went to the host a Link header named", n)
	}
	if n := e.fake.Stats().Requests["GET /orgs/{org}/members"]; n != 4 {
		t.Errorf("%d member-list requests, want 2 pages of each role from the configured host", n)
	}
}

// An answer larger than Options.MaxResponseSize fails its request with a clear error; the
// body is not read past the cap (GraphQL answers used to be read whole by io.ReadAll).
func TestOversizeAnswersRefused(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		ou         string
	}{
		{"GraphQL", "/graphql", "github/teams"},
		{"REST", "/orgs/acme/members", "github/org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.write(orgFiles)
			e.write(teamFiles())
			e.opt.MaxResponseSize = 1 << 20
			e.fake.AddFault(fakegithub.Fault{Path: tc.path, Kind: fakegithub.Oversize, Size: 64 << 20})
			plan := e.plan(e.registry())
			tp := target(plan, tc.ou)
			if tp.Err == nil || !errors.Is(tp.Err, github.ErrResponseTooLarge) ||
				!strings.Contains(tp.Err.Error(), fmt.Sprintf("is larger than %d bytes (Options.MaxResponseSize)", 1<<20)) {
				t.Fatalf("plan error %v, want ErrResponseTooLarge", tp.Err)
			}
			// The providers' one type: a caller handles every provider's refusal alike.
			var tl *providers.ResponseTooLargeError
			if !errors.As(tp.Err, &tl) || tl.Limit != 1<<20 || tl.Service != "GitHub" || tl.Path != tc.path {
				t.Errorf("errors.As(%v) = %+v, want the providers.ResponseTooLargeError of %s", tp.Err, tl, tc.path)
			}
		})
	}
}

// GraphQL connections that say there are more items but do not advance (no items, or a
// cursor given before) stop at once instead of being followed up to the page cap.
func TestGraphQLWalksThatDoNotAdvanceStop(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"empty page with a next page",
			`{"data":{"organization":{"teams":{"nodes":[],"pageInfo":{"hasNextPage":true,"endCursor":"Y3Vyc29y"}}}}}`,
			"more items after a page without any"},
		{"the same cursor again",
			`{"data":{"organization":{"teams":{"nodes":[{"slug":"eng"}],"pageInfo":{"hasNextPage":true,"endCursor":"Y3Vyc29y"}}}}}`,
			"the same page cursor twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.noOrg = true
			e.teamKeys = "    delete_teams: true\n"
			e.write(teamFiles())
			// Only the team listing (delete_teams) gets the canned answer.
			e.fake.AddFault(fakegithub.Fault{Path: "/graphql", Kind: fakegithub.Raw, Body: tc.body, Match: "teams(first: 100"})
			e.fake.ResetStats()
			plan := e.plan(e.registry())
			tp := target(plan, "github/teams")
			if tp.Err == nil || !strings.Contains(tp.Err.Error(), tc.want) {
				t.Fatalf("plan error %v, want %q", tp.Err, tc.want)
			}
			if n := e.fake.Stats().Faults; n > 2 {
				t.Errorf("%d canned pages followed", n)
			}
		})
	}
}
