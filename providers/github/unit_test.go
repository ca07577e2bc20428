package github

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/entitlements-go/entitlements/providers"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{"-5", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
	} {
		h := http.Header{}
		if tc.v != "" {
			h.Set("Retry-After", tc.v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("Retry-After %q: %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestRateLimitedClassification(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := NewRegistry(Options{Now: func() time.Time { return now }})
	s := &session{h: &host{reg: r}}
	for _, tc := range []struct {
		name   string
		status int
		hdr    map[string]string
		body   string
		kind   string
		wait   time.Duration
	}{
		{"permission denied is not a limit", 403, nil, `{"message":"Must have admin rights"}`, "", 0},
		{"primary", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000100"}, `{}`, "primary", 101 * time.Second},
		{"secondary with Retry-After", 403, map[string]string{"Retry-After": "7"},
			`{"message":"You have exceeded a secondary rate limit"}`, "secondary", 7 * time.Second},
		{"secondary without Retry-After", 403, nil,
			`{"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, "secondary", time.Minute},
		{"429 with Retry-After", 429, map[string]string{"Retry-After": "3"}, ``, "429", 3 * time.Second},
		{"429 without headers", 429, nil, ``, "429", time.Second},
		{"500 is not a limit", 500, nil, ``, "", 0},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
		for k, v := range tc.hdr {
			resp.Header.Set(k, v)
		}
		kind, wait, _ := s.rateLimited(resp)
		if kind != tc.kind || wait != tc.wait {
			t.Errorf("%s: kind %q wait %s, want %q %s", tc.name, kind, wait, tc.kind, tc.wait)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != tc.body {
			t.Errorf("%s: body not restored: %q", tc.name, b)
		}
	}
}

func TestDeriveGraphQLURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/":              "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3/":      "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:8080/":               "http://127.0.0.1:8080/graphql",
		"https://proxy.example.com/github/v3/": "https://proxy.example.com/github/v3/graphql",
	} {
		u, _ := url.Parse(in)
		if got := deriveGraphQLURL(u); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	r := NewRegistry(Options{})
	h, err := r.hostFor("https://ghe.example.com", "")
	if err != nil || h.restBase.String() != "https://ghe.example.com/api/v3/" || h.graphqlURL != "https://ghe.example.com/api/graphql" || !h.checkMeta {
		t.Fatalf("GHES host %+v %v", h, err)
	}
	if h2, _ := r.hostFor("https://ghe.example.com/api/v3", ""); h2 != h {
		t.Fatal("the same host twice got two transports")
	}
	tr := r.pools["ghe.example.com:443"].t
	if tr.MaxConnsPerHost != 8 || tr.MaxIdleConnsPerHost != 8 {
		t.Fatalf("pool %d/%d", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost)
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"eng":            "eng",
		"Eng_Web":        "eng_web",
		"Core Eng":       "core-eng",
		"a  --  b":       "a----b",
		"  trailing!!  ": "trailing",
		"Ünïcode":        "n-code",
	} {
		if got := slugify(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestUnseen(t *testing.T) {
	mk := func(code int) error {
		return &gh.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "PUT", URL: &url.URL{}}}}
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("connection reset by peer"), true},
		{fmt.Errorf("wrapped: %w", mk(502)), true},
		{mk(500), true},
		{mk(404), false},
		{mk(422), false},
		{fmt.Errorf("x: %w", ErrBudget), false},
		{&RateLimitError{Status: 429}, false},
	} {
		if got := unseen(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	c := &providers.Change{}
	for _, tc := range []struct {
		rs   []userResult
		want providers.Status
		err  bool
	}{
		{nil, providers.AlreadyInState, false},
		{[]userResult{applied(), already()}, providers.Applied, false},
		{[]userResult{applied(), skipped("x")}, providers.Applied, true},
		{[]userResult{skipped("x"), skipped("y")}, providers.Skipped, true},
		{[]userResult{applied(), {status: providers.Unknown, err: errors.New("lost")}}, providers.Unknown, true},
		{[]userResult{{status: providers.Unknown, err: errors.New("lost")}, failed(errors.New("no"))}, providers.Failed, true},
	} {
		o := outcome(c, tc.rs)
		if o.Status != tc.want || (o.Err != nil) != tc.err {
			t.Errorf("%v: %s %v", tc.rs, o.Status, o.Err)
		}
	}
}
