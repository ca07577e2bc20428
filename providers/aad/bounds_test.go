package aad

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// Issue 20 item 12: what Graph answers never decides how many requests are sent, how much is
// read, or where a request goes.

// A nextLink chain without end (here: 3,000 empty pages, each with a nextLink) stops at
// Options.MaxPages; it used to be followed to its end, a request each.
func TestNextLinkChainBounded(t *testing.T) {
	e := newEnv(t, fakegraph.Options{EmptyPages: 3000}, "", 2)
	e.seedUsers(e.people...)
	e.seedGroup("g", "u000")
	e.group("g", []string{"u000", "u001"})
	reg := e.registry(Options{MaxPages: 20})
	_, tp, _ := e.plan(reg, false)
	if tp.Err == nil || !strings.Contains(tp.Err.Error(), "Graph still has a next page after 20 pages (Options.MaxPages)") {
		t.Fatalf("plan error %v, want the chain refused at 20 pages", tp.Err)
	}
	if p := reg.Counters()["pages"]; p > 21+1 {
		t.Errorf("%d pages read", p)
	}
	if DefaultMaxPages*pageSize < 1_000_000 || (Options{}).withDefaults().MaxPages != DefaultMaxPages {
		t.Errorf("default MaxPages %d", (Options{}).withDefaults().MaxPages)
	}
}

// A nextLink to another host (or outside the base path) is refused: the next page is never
// asked of a host a server answer named.
func TestNextLinkElsewhereRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		base func(own string) string
	}{
		{"another host", func(string) string { return "http://203.0.113.9:1/v1.0" }},
		{"another port", func(own string) string {
			i := strings.LastIndexByte(own, ':')
			return own[:i] + ":1/v1.0"
		}},
		{"another API version", func(own string) string { return own + "/v1.0/../beta" }},
		{"userinfo", func(own string) string { return strings.Replace(own, "http://", "http://user:pw@", 1) + "/v1.0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{EmptyPages: 1}, "", 2)
			e.fake.SetNextLinkBase(tc.base(e.fake.URL))
			e.seedUsers(e.people...)
			e.seedGroup("g", "u000")
			e.group("g", []string{"u000", "u001"})
			reg := e.registry(Options{})
			_, tp, _ := e.plan(reg, false)
			if tp.Err == nil || !strings.Contains(tp.Err.Error(), "is outside the Graph base") {
				t.Fatalf("plan error %v, want the nextLink refused", tp.Err)
			}
			if st := e.fake.Stats(); st.Unauthorized != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// An answer larger than Options.MaxResponseSize fails the read at once (no retry: the same
// answer would come again) with a clear error, and is not read past the cap.
func TestOversizeGraphAnswerRefused(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 2)
	e.seedUsers(e.people...)
	e.seedGroup("g", "u000")
	e.group("g", []string{"u000", "u001"})
	e.fake.Inject(fakegraph.Fault{Path: "/$batch", Scope: fakegraph.TopLevel, Oversize: 256 << 20, Times: -1})
	reg := e.registry(Options{MaxResponseSize: 1 << 20})
	_, tp, _ := e.plan(reg, false)
	if tp.Err == nil || !errors.Is(tp.Err, ErrResponseTooLarge) || !strings.Contains(tp.Err.Error(), "is larger than 1048576 bytes (Options.MaxResponseSize)") {
		t.Fatalf("plan error %v, want ErrResponseTooLarge", tp.Err)
	}
	var tl *providers.ResponseTooLargeError
	if !errors.As(tp.Err, &tl) || tl.Limit != 1<<20 || tl.Service != "Graph" || !errors.Is(tp.Err, providers.ErrResponseTooLarge) {
		t.Errorf("errors.As(%v) = %+v, want the providers.ResponseTooLargeError", tp.Err, tl)
	}
	if r := reg.Counters()["requests"]; r != 1 {
		t.Errorf("%d requests: an oversize answer is not asked for again", r)
	}
}

// The identity platform's answers are capped too: an endless token answer fails the plan.
func TestOversizeTokenAnswerRefused(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "tenant_id: contoso-tenant\nclient_id: 0f0e0d0c-aaaa-bbbb-cccc-000000000001\nclient_secret: a-client-secret", 2)
	e.group("g", []string{"u000"})
	reg := NewRegistry(Options{Sleep: e.sleep.Sleep, MaxAttempts: 1, MaxResponseSize: 1 << 20,
		HTTPClient: &http.Client{Transport: echoLogin{endless: true}}})
	defer reg.Close()
	_, tp, _ := e.plan(reg, false)
	if tp.Err == nil || !strings.Contains(tp.Err.Error(), "is larger than 1048576 bytes (Options.MaxResponseSize)") {
		t.Fatalf("plan error %v, want the token answer refused", tp.Err)
	}
}
