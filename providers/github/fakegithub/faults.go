package fakegithub

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// FaultKind says how a matching request misbehaves.
type FaultKind uint8

// The fault kinds.
const (
	// Status answers Fault.Status (500, 502, 422, ...) with Fault.Message, and a Retry-After
	// header when Fault.RetryAfter is set.
	Status FaultKind = iota
	// TooManyRequests answers 429 with Retry-After (go-github v62 does not recognise it).
	TooManyRequests
	// PrimaryLimit answers 403 with X-RateLimit-Remaining: 0 and X-RateLimit-Reset at now +
	// RetryAfter (default 60 s): go-github's RateLimitError.
	PrimaryLimit
	// SecondaryLimit answers 403 whose documentation_url ends in the secondary-limit anchor,
	// with Retry-After when RetryAfter is set: go-github's AbuseRateLimitError.
	SecondaryLimit
	// GraphQLRateLimited answers 200 with a RATE_LIMITED GraphQL error and exhausted headers.
	GraphQLRateLimited
	// Reset drops the connection (TCP RST) without an answer.
	Reset
	// Hang sends no answer until the client gives up (or Options.MaxHang), then drops the
	// connection: a client timeout.
	Hang
	// Latency only adds Fault.Latency.
	Latency
	// BogusLastPage answers as usual, but the Link header of a REST list says that the last
	// page is Fault.LastPage (and the next one the page after the request's) whatever the
	// number of items: a server that lies about how many pages a list has. With LastPage 0
	// the header has a next link only, on every page: a list without end. The links point
	// at Fault.LinkHost when it is set.
	BogusLastPage
	// Oversize answers 200 with a JSON document of Fault.Size bytes that never closes (one
	// string value padded out), streamed: an answer larger than a client should read.
	Oversize
	// Raw answers Fault.Status (default 200) with Fault.Body as it is (application/json): a
	// canned answer, such as a GraphQL page that says there are more items but holds none.
	Raw
)

// Fault is an injected misbehaviour.
type Fault struct {
	// Method matches the HTTP method ("" any). Path matches the path without the /api/v3
	// prefix, exactly or as a path.Match glob ("/orgs/acme/teams", "/orgs/*/memberships/*",
	// "/graphql"); "" matches any path. Match, when set, must occur in the request body (a
	// part of a GraphQL document).
	Method, Path, Match string
	Kind                FaultKind
	Status              int
	Message             string
	RetryAfter          time.Duration
	// Latency is added to the request (with any kind).
	Latency time.Duration
	// After processes the request first and then misbehaves: the write happens, its answer
	// is lost (with Status, Reset and Hang).
	After bool
	// Skip lets the first Skip matching requests through; Times is how many requests then
	// fail (0: every one).
	Skip, Times int
	// LastPage is the last page BogusLastPage announces; LinkHost the host[:port] its links
	// name.
	LastPage int
	LinkHost string
	// Size is the body size of Oversize.
	Size int64
	// Body is the answer of Raw.
	Body string
}

type faultState struct {
	Fault
	seen, fired int
}

// AddFault installs a fault. Faults are checked in the order added; the first one that fires
// wins.
func (s *Server) AddFault(f Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, &faultState{Fault: f})
	s.mu.Unlock()
}

// ClearFaults removes every fault, including GraphQL alias failures.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	clear(s.aliasErr)
	s.mu.Unlock()
}

// FailTeamAlias makes the next `times` GraphQL team(slug:) fields for that team resolve to null
// with an error whose path names the alias (a partial failure inside an aliased batch).
func (s *Server) FailTeamAlias(orgLogin, slug string, times int) {
	s.mu.Lock()
	s.aliasErr[lowerKey(orgLogin, slug)] = times
	s.mu.Unlock()
}

// matchFault returns the fault that fires for a request, if any. Called with s.mu held.
func (s *Server) matchFault(method, p string, body []byte) *Fault {
	for _, f := range s.faults {
		if f.Method != "" && f.Method != method || !pathMatch(f.Path, p) || !bytes.Contains(body, []byte(f.Match)) {
			continue
		}
		f.seen++
		if f.seen <= f.Skip || (f.Times > 0 && f.fired >= f.Times) {
			continue
		}
		f.fired++
		s.stats.Faults++
		out := f.Fault
		return &out
	}
	return nil
}

func retryAfterHeader(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}

func (s *Server) inject(w http.ResponseWriter, r *http.Request, f *Fault, gql bool) {
	h := w.Header()
	switch f.Kind {
	case Status:
		if f.RetryAfter > 0 {
			h.Set("Retry-After", retryAfterHeader(f.RetryAfter))
		}
		msg := f.Message
		if msg == "" {
			msg = http.StatusText(f.Status)
		}
		writeJSON(w, f.Status, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"})
	case TooManyRequests:
		h.Set("Retry-After", retryAfterHeader(max(f.RetryAfter, time.Second)))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "Too Many Requests"})
	case PrimaryLimit, GraphQLRateLimited:
		wait := f.RetryAfter
		if wait <= 0 {
			wait = time.Minute
		}
		h.Set("X-RateLimit-Limit", strconv.Itoa(s.opt.RateLimit))
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(s.opt.Now().Add(wait).Unix(), 10))
		if f.Kind == GraphQLRateLimited || gql {
			writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"type": "RATE_LIMITED",
				"message": "API rate limit exceeded for user ID 1."}}})
			return
		}
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "API rate limit exceeded for user ID 1.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"})
	case SecondaryLimit:
		if f.RetryAfter > 0 {
			h.Set("Retry-After", retryAfterHeader(f.RetryAfter))
		}
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
	case Oversize:
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		chunk := []byte(`{"data": "` + strings.Repeat("x", 32<<10-10))
		for left := f.Size; left > 0 && r.Context().Err() == nil; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
				return
			}
			chunk = bytes.Repeat([]byte("x"), 32<<10)
		}
	case Raw:
		h.Set("Content-Type", "application/json")
		w.WriteHeader(cmp.Or(f.Status, http.StatusOK))
		io.WriteString(w, f.Body)
	case Reset:
		drop(w)
	case Hang:
		// The body must be consumed for the server to notice the client going away.
		io.Copy(io.Discard, r.Body)
		t := time.NewTimer(s.opt.MaxHang)
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		t.Stop()
		drop(w)
	}
}

// drop closes the connection without an answer, with a TCP RST where possible.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	c, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// bogusLastPage answers r as usual, with a Link header announcing f.LastPage pages.
func (s *Server) bogusLastPage(w http.ResponseWriter, r *http.Request, f *Fault, p string, gql bool) {
	rec := httptest.NewRecorder()
	s.handle(rec, r, p, gql)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	q := r.URL.Query()
	pg, _ := strconv.Atoi(q.Get("page"))
	pg = max(pg, 1)
	link := func(n int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", cmp.Or(f.LinkHost, r.Host)
		v := url.Values{}
		for k, x := range q {
			v[k] = x
		}
		v.Set("page", strconv.Itoa(n))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	switch {
	case f.LastPage <= 0:
		w.Header().Set("Link", link(pg+1, "next"))
	case pg < f.LastPage:
		w.Header().Set("Link", link(pg+1, "next")+", "+link(f.LastPage, "last"))
	default:
		w.Header().Del("Link")
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}
