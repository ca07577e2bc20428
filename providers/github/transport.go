package github

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/entitlements-go/entitlements/internal/retry"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/entitlements-go/entitlements/internal/capped"
	"github.com/entitlements-go/entitlements/providers"
)

// counters are kept per host and per target.
type counters struct {
	rest, graphql, conns, retries, rateLimited atomic.Int64
	rateWait, backoffWait                      atomic.Int64 // nanoseconds
	writes, skippedUsers, warnings             atomic.Int64
	pendingUsers                               atomic.Int64
	// predictive: groups trusted from the predictive state; memberReads: member lists read
	// (one per team, one per org role list).
	predictive, memberReads atomic.Int64
	// appRequests: requests authenticated as a GitHub App (installation lookups, token
	// creations), not counted as REST requests or writes; appTokens: installation tokens
	// obtained; renewals: requests sent again with a new token after a 401.
	appRequests, appTokens, renewals atomic.Int64
	// paceWait: time writes waited for the write scheduler (nanoseconds); invitations: org
	// invitations sent (attempts included).
	paceWait, invitations atomic.Int64
	// managedTeams: teams left alone because their membership is managed elsewhere (an
	// identity provider's team synchronization, the enterprise).
	managedTeams atomic.Int64
}

func (c *counters) snapshot() map[string]int64 {
	return map[string]int64{
		"rest_requests":      c.rest.Load(),
		"graphql_requests":   c.graphql.Load(),
		"connections_opened": c.conns.Load(),
		"retries":            c.retries.Load(),
		"rate_limited":       c.rateLimited.Load(),
		"rate_limit_wait_ms": c.rateWait.Load() / int64(time.Millisecond),
		"backoff_wait_ms":    c.backoffWait.Load() / int64(time.Millisecond),
		"writes":             c.writes.Load(),
		"skipped_users":      c.skippedUsers.Load(),
		"pending_users":      c.pendingUsers.Load(),
		"warnings":           c.warnings.Load(),
		"predictive_hits":    c.predictive.Load(),
		"member_reads":       c.memberReads.Load(),
		"app_requests":       c.appRequests.Load(),
		"app_tokens":         c.appTokens.Load(),
		"token_renewals":     c.renewals.Load(),
		"pace_wait_ms":       c.paceWait.Load() / int64(time.Millisecond),
		"invitations":        c.invitations.Load(),
		"managed_teams":      c.managedTeams.Load(),
	}
}

type targetKey struct{}
type idempotentKey struct{}

// both applies fn to the host counters and, when the request belongs to a target, to the
// target's counters.
func (s *session) both(ctx context.Context, fn func(*counters)) {
	fn(&s.h.counters)
	if c, ok := ctx.Value(targetKey{}).(*counters); ok {
		fn(c)
	}
}

// markIdempotent says that a POST may be repeated after an unseen outcome (GraphQL queries).
func markIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	v, _ := req.Context().Value(idempotentKey{}).(bool)
	return v
}

// ErrBudget is returned (wrapped) once the run budget is used up: the run stops cleanly
// instead of hammering GitHub. Every later request of the registry fails with it at once. It
// matches providers.ErrStopped: a later run, with its own budget, can resume the apply.
var ErrBudget error = budgetError{}

type budgetError struct{}

func (budgetError) Error() string        { return "GitHub run budget exhausted" }
func (budgetError) Is(target error) bool { return target == providers.ErrStopped }

// budget is the run budget of a registry: requests sent and time spent waiting.
type budget struct {
	maxRequests int64
	maxWait     time.Duration
	requests    atomic.Int64

	mu     sync.Mutex
	waited time.Duration
	err    error // sticky once exhausted
}

func (b *budget) stopped() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *budget) request() error {
	if err := b.stopped(); err != nil {
		return err
	}
	n := b.requests.Add(1)
	if b.maxRequests > 0 && n > b.maxRequests {
		return b.stop(fmt.Errorf("%w: %d requests sent, the limit is %d (raise Options.MaxRequests to allow more)",
			ErrBudget, b.maxRequests, b.maxRequests))
	}
	return nil
}

// spend books a wait against the budget, or refuses it.
func (b *budget) spend(d time.Duration, why string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if b.maxWait >= 0 && b.waited+d > b.maxWait {
		b.err = fmt.Errorf("%w: %s asks to wait %s, but %s of the %s wait budget is used (raise Options.MaxWait, or run later)",
			ErrBudget, why, d.Round(time.Second), b.waited.Round(time.Second), b.maxWait)
		return b.err
	}
	b.waited += d
	return nil
}

func (b *budget) stop(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// rateState holds, per rate-limit resource ("core" for REST, "graphql"; "" for limits on every
// request of the token, such as secondary limits and 429), the time before which nothing is
// sent: GitHub counts REST and GraphQL separately, so an exhausted GraphQL budget must not
// stop REST writes.
type rateState struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func resourceOf(req *http.Request) string {
	if strings.HasSuffix(req.URL.Path, "/graphql") {
		return "graphql"
	}
	return "core"
}

// block delays later requests of the session for a resource until `until`, booking the
// extension of the blocked period against the run budget (concurrent requests hitting one
// limit book it once).
func (s *session) block(resource string, until time.Time, why string) error {
	opt := &s.h.reg.opt
	now := opt.Now()
	s.rate.mu.Lock()
	defer s.rate.mu.Unlock()
	from := s.rate.until[resource]
	if from.Before(now) {
		from = now
	}
	ext := until.Sub(from)
	if ext <= 0 {
		return nil
	}
	if err := s.h.reg.budget.spend(ext, why); err != nil {
		return err
	}
	if s.rate.until == nil {
		s.rate.until = map[string]time.Time{}
	}
	s.rate.until[resource] = until
	return nil
}

// ready waits until the session may send a request for a resource again.
func (s *session) ready(ctx context.Context, resource string) error {
	opt := &s.h.reg.opt
	for {
		s.rate.mu.Lock()
		until := s.rate.until[resource]
		if all := s.rate.until[""]; all.After(until) {
			until = all
		}
		s.rate.mu.Unlock()
		d := until.Sub(opt.Now())
		if d <= 0 {
			return nil
		}
		if err := s.h.reg.budget.stopped(); err != nil {
			return err
		}
		s.both(ctx, func(c *counters) { c.rateWait.Add(int64(d)) })
		if err := opt.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// backoff waits before retry number `attempt` (1-based) after a 5xx or transport error.
func (s *session) backoff(ctx context.Context, attempt int, hint time.Duration) error {
	opt := &s.h.reg.opt
	d := hint
	if d <= 0 {
		d = retry.Backoff(opt.BaseBackoff, opt.MaxBackoff, attempt, opt.Jitter())
	}
	if err := s.h.reg.budget.spend(d, "a retry backoff"); err != nil {
		return err
	}
	s.both(ctx, func(c *counters) { c.backoffWait.Add(int64(d)) })
	return opt.Sleep(ctx, d)
}

func randFloat() float64 { return rand.Float64() }

// RateLimitError is returned when GitHub still answered with a rate limit after the last
// attempt (the request was not performed).
type RateLimitError struct {
	Status int
	Wait   time.Duration
	Kind   string // primary, secondary, 429
	Msg    string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("GitHub %s rate limit (HTTP %d) after the last attempt; it asks to wait %s: %s",
		e.Kind, e.Status, e.Wait.Round(time.Second), e.Msg)
}

// roundTripper is the session's transport: it sends the credential, counts requests and new
// connections, honours rate limits and retries what may be retried; a request GitHub answers
// 401 is sent once more when the credential can be renewed (a GitHub App's installation
// token). go-github sees only the final answer, so its own rate-limit memory (which would
// refuse requests by the wall clock, outside the budget) never takes over.
type roundTripper struct{ s *session }

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s := rt.s
	opt := &s.h.reg.opt
	ctx := req.Context()
	idem := idempotent(req)
	resource := resourceOf(req)
	gql := resource == "graphql"
	auth := ctx.Value(authKey{}) != nil
	renewed := false
	// A RoundTripper must close the request body; the base transport does once it sends.
	unsent := func(attempt int, err error) (*http.Response, error) {
		if attempt == 1 && req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if err := s.ready(ctx, resource); err != nil {
			return unsent(attempt, err)
		}
		// Every write attempt GitHub receives counts against its content-creation limits.
		if req.Method != http.MethodGet && req.Method != http.MethodHead && !gql && !auth {
			if err := s.pace(ctx); err != nil {
				return unsent(attempt, err)
			}
		}
		if err := s.h.reg.budget.request(); err != nil {
			return unsent(attempt, err)
		}
		r2 := req.Clone(ctx)
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, errors.New("cannot retry a request whose body cannot be replayed")
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r2.Body = b
		}
		cred, err := s.cred.authorization(ctx)
		if err != nil {
			return unsent(attempt, err)
		}
		r2.Header.Set("Authorization", cred)
		if r2.Header.Get("User-Agent") == "" {
			r2.Header.Set("User-Agent", "entitlements-go")
		}
		actx, cancel := context.WithTimeout(ctx, opt.RequestTimeout)
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
			if ci.Reused {
				return
			}
			// Dials are counted exactly on the registry's own transports; a caller's
			// transport (Options.HTTPClient) is counted here. Targets are always counted here.
			if !s.h.own {
				s.h.counters.conns.Add(1)
			}
			if c, ok := ctx.Value(targetKey{}).(*counters); ok {
				c.conns.Add(1)
			}
		}})
		s.both(ctx, func(c *counters) {
			switch {
			case auth:
				c.appRequests.Add(1)
			case gql:
				c.graphql.Add(1)
			default:
				c.rest.Add(1)
				if req.Method != http.MethodGet {
					c.writes.Add(1)
				}
			}
			if attempt > 1 {
				c.retries.Add(1)
			}
		})
		resp, err := s.h.base.RoundTrip(r2.WithContext(actx))
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !idem || attempt >= opt.MaxAttempts {
				return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
			}
			if err := s.backoff(ctx, attempt, 0); err != nil {
				return nil, err
			}
			continue
		}
		// A 401 was not performed, so even a POST may be sent again; once only, so that a
		// credential GitHub keeps refusing ends the request.
		if resp.StatusCode == http.StatusUnauthorized && !renewed && s.cred.refused(cred) {
			drain(resp)
			cancel()
			renewed = true
			s.both(ctx, func(c *counters) { c.renewals.Add(1) })
			continue
		}
		if kind, wait, msg := s.rateLimited(resp); kind != "" {
			drain(resp)
			cancel()
			s.both(ctx, func(c *counters) { c.rateLimited.Add(1) })
			if attempt >= opt.MaxAttempts {
				return nil, &RateLimitError{Status: resp.StatusCode, Wait: wait, Kind: kind, Msg: msg}
			}
			// A rate-limited request was not performed, so even a POST may be sent again.
			blocked := ""
			if kind == "primary" {
				blocked = cmp.Or(resp.Header.Get("X-RateLimit-Resource"), resource)
			}
			if err := s.block(blocked, opt.Now().Add(wait), "GitHub's "+kind+" rate limit"); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 500 && idem && attempt < opt.MaxAttempts {
			hint := retryAfter(resp.Header, opt.Now())
			drain(resp)
			cancel()
			if err := s.backoff(ctx, attempt, hint); err != nil {
				return nil, err
			}
			continue
		}
		s.observe(resp, resource)
		body := capped.Body(resp.Body, opt.MaxResponseSize,
			&ResponseTooLargeError{Service: "GitHub", Method: req.Method, Path: req.URL.Path, Limit: opt.MaxResponseSize})
		resp.Body = &cancelBody{ReadCloser: body, cancel: cancel}
		return resp, nil
	}
}

// observe keeps the session from sending more requests while GitHub says the primary limit is
// used up, and hides that state from go-github, whose own check would fail requests by the
// wall clock (unbudgeted, and wrong under an injected clock).
func (s *session) observe(resp *http.Response, resource string) {
	if resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	if reset, ok := resetAt(resp.Header); ok {
		// An error here is the budget being exhausted; the next request reports it.
		_ = s.block(cmp.Or(resp.Header.Get("X-RateLimit-Resource"), resource), reset.Add(time.Second), "GitHub's primary rate limit")
	}
	resp.Header.Del("X-RateLimit-Reset")
}

// rateLimited classifies an answer: "" when it is not a rate limit; otherwise the kind and how
// long GitHub asks to wait. go-github v62 maps neither 429 nor every secondary-limit shape, so
// the body of a 403 is inspected here.
func (s *session) rateLimited(resp *http.Response) (kind string, wait time.Duration, msg string) {
	opt := &s.h.reg.opt
	now := opt.Now()
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		kind = "429"
	case http.StatusForbidden:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		msg = strings.TrimSpace(string(body))
		low := strings.ToLower(msg)
		switch {
		case resp.Header.Get("X-RateLimit-Remaining") == "0":
			kind = "primary"
		case strings.Contains(low, "secondary rate limit") || strings.Contains(low, "secondary-rate-limits") ||
			strings.Contains(low, "abuse"):
			kind = "secondary"
		default:
			return "", 0, ""
		}
	default:
		return "", 0, ""
	}
	if d := retryAfter(resp.Header, now); d > 0 {
		wait = d
	} else if reset, ok := resetAt(resp.Header); ok && resp.Header.Get("X-RateLimit-Remaining") == "0" {
		wait = reset.Sub(now) + time.Second
	} else if kind == "secondary" {
		wait = opt.SecondaryWait
	} else {
		wait = opt.BaseBackoff
	}
	return kind, max(wait, time.Millisecond), msg
}

// retryAfter is the wait Retry-After asks for; 0 when absent (or in the past).
func retryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := retry.After(h.Get("Retry-After"), now)
	return d
}

func resetAt(h http.Header) (time.Time, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// drain reads a body to EOF and closes it, so the connection goes back to the pool.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<20))
	resp.Body.Close()
}

// cancelBody ends the attempt's context when the body is closed (the per-attempt timeout must
// outlive RoundTrip, since the caller reads the body afterwards).
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// DefaultMaxResponseSize is the default of Options.MaxResponseSize.
const DefaultMaxResponseSize int64 = 32 << 20

// ErrResponseTooLarge is wrapped by the error of a request whose answer is larger than
// Options.MaxResponseSize: the providers' one sentinel (providers.ErrResponseTooLarge).
var ErrResponseTooLarge = providers.ErrResponseTooLarge

// ResponseTooLargeError is an answer refused for its size: the providers' one type
// (providers.ResponseTooLargeError), with Service "GitHub".
type ResponseTooLargeError = providers.ResponseTooLargeError
