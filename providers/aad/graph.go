package aad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	abstractions "github.com/microsoft/kiota-abstractions-go"
	absauth "github.com/microsoft/kiota-abstractions-go/authentication"
	khttp "github.com/microsoft/kiota-http-go"
	msgraph "github.com/microsoftgraph/msgraph-sdk-go"
	msgraphcore "github.com/microsoftgraph/msgraph-sdk-go-core"
	"github.com/microsoftgraph/msgraph-sdk-go/models/odataerrors"

	"github.com/entitlements-go/entitlements/internal/capped"
	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/internal/retry"
	"github.com/entitlements-go/entitlements/providers"
)

// counters are the Registry's request counters (atomic: batches run concurrently).
type counters struct {
	requests, batches, subRequests, pages, throttled, retries, connections, creates, predictive atomic.Int64
	// writes: write requests sent (sub-requests and group creates, every attempt); paceWait:
	// time writes waited for the pacer (nanoseconds); slowdowns: throttle headers that made
	// the pacer book writes; splits: members@odata.bind chunks split after "already exist".
	writes, paceWait, slowdowns, splits atomic.Int64
}

func (c *counters) snapshot() map[string]int64 {
	return map[string]int64{
		"requests": c.requests.Load(), "batches": c.batches.Load(), "subrequests": c.subRequests.Load(),
		"pages": c.pages.Load(), "throttled": c.throttled.Load(), "retries": c.retries.Load(),
		"connections_opened": c.connections.Load(), "creates": c.creates.Load(), "predictive_hits": c.predictive.Load(),
		"writes": c.writes.Load(), "pace_wait_ms": c.paceWait.Load() / int64(time.Millisecond),
		"throttle_slowdowns": c.slowdowns.Load(), "bind_splits": c.splits.Load(),
	}
}

// countingTransport counts HTTP requests and NEW connections (httptrace: a connection that
// was not reused). It sits under the SDK middleware, so it sees every attempt, including the
// ones the middleware would hide. Its next transport caps the answers (cappingTransport).
type countingTransport struct {
	next http.RoundTripper
	c    *counters
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.requests.Add(1)
	if f, ok := req.Context().Value(sentKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			t.c.connections.Add(1)
		}
	}}
	resp, err := t.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err == nil {
		if f, ok := req.Context().Value(observeKey{}).(func(string)); ok {
			if v := resp.Header.Get(throttleHeader); v != "" {
				f(v)
			}
		}
	}
	return resp, err
}

// observeKey is the context key of a function that receives the throttle header of a write's
// reply (the SDK does not hand the headers of a successful reply back).
type observeKey struct{}

// cappingTransport caps every answer's body at max bytes (0: no cap), so that no answer,
// Graph's or the identity platform's, is read into memory whole whatever its size: the SDKs
// read bodies with io.ReadAll.
type cappingTransport struct {
	next http.RoundTripper
	max  int64
}

func (t cappingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = capped.Body(resp.Body, t.max, &ResponseTooLargeError{Service: "Graph", Method: req.Method, Path: req.URL.Path, Limit: t.max})
	}
	return resp, err
}

// ErrResponseTooLarge is wrapped by the error of a request whose answer is larger than
// Options.MaxResponseSize: the providers' one sentinel (providers.ErrResponseTooLarge).
var ErrResponseTooLarge = providers.ErrResponseTooLarge

// ResponseTooLargeError is an answer refused for its size: the providers' one type
// (providers.ResponseTooLargeError), with Service "Graph".
type ResponseTooLargeError = providers.ResponseTooLargeError

// sentKey is the context key of a flag that the transport sets when a request reaches it:
// from then on Graph may have received the request, whatever error follows.
type sentKey struct{}

// trackSent returns a context whose requests set the returned flag when they reach the
// transport (after authentication and request building, which fail without sending).
func trackSent(ctx context.Context) (context.Context, *atomic.Bool) {
	f := new(atomic.Bool)
	return context.WithValue(ctx, sentKey{}, f), f
}

// afterSendError is an error raised once the request may have reached Graph: a reply that
// could not be read or decoded, a broken connection. Graph may have executed the request, so
// a write's outcome is unknown and a read is worth retrying.
type afterSendError struct{ err error }

func (e *afterSendError) Error() string { return e.err.Error() }
func (e *afterSendError) Unwrap() error { return e.err }

// mayHaveBeenSent reports whether err was raised after the request may have reached Graph.
func mayHaveBeenSent(err error) bool {
	var ae *afterSendError
	return errors.As(err, &ae) || transportError(err)
}

// tokenProvider hands the SDK a bearer token from an azcore credential (client secret in
// production, a static token in tests). It refuses hosts other than the Graph host (the
// token must never leave it) and plain HTTP except on loopback. The SDK's own Azure
// identity provider is not used because it silently sends no token to a host outside its
// list and rejects http URLs, which makes a test server impossible.
type tokenProvider struct {
	cred  azcore.TokenCredential
	scope string
	host  string // host[:port] of the Graph base URL
	hosts *absauth.AllowedHostsValidator
	// secrets (the Registry's) learns every token handed out, to mask it in messages.
	secrets *redact.Set
}

func (p *tokenProvider) GetAuthorizationToken(ctx context.Context, u *url.URL, _ map[string]interface{}) (string, error) {
	if !p.hosts.IsUrlHostValid(u) || !strings.EqualFold(u.Host, p.host) {
		return "", fmt.Errorf("refusing to send the Graph token to %s", u.Host)
	}
	if u.Scheme != "https" && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("refusing to send the Graph token over %s to %s", u.Scheme, u.Host)
	}
	tok, err := p.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{p.scope}})
	if err != nil {
		return "", p.secrets.Error(fmt.Errorf("getting a Graph token: %w", err))
	}
	p.secrets.Add(tok.Token)
	return tok.Token, nil
}

func (p *tokenProvider) GetAllowedHostsValidator() *absauth.AllowedHostsValidator { return p.hosts }

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// graph is one Graph client (base URL and identity): the SDK adapter and service client over
// the Registry's shared transport.
type graph struct {
	reg     *Registry
	adapter *msgraph.GraphRequestAdapter
	client  *msgraph.GraphServiceClient
	base    string // the adapter base URL, no trailing slash
	// cred and scope give the Graph token (doctor reads its claims).
	cred  azcore.TokenCredential
	scope string
	// pacer schedules the client's writes (one application in one tenant: Graph's write
	// quota is per application and tenant).
	pacer *pacer
}

// newGraph builds the SDK client as spec 4.5 describes: a bearer-token provider, the Graph
// default middleware minus the retry and request-compression handlers over the shared
// transport, the adapter, then the
// base URL set BEFORE the service client is built (the client copies it into its path
// parameters, and the batch builder uses that copy to make URLs relative).
//
// The retry handler is removed for every request, not only for writes: it replays POST and
// PATCH on 429/503/504 by itself, it sleeps with time.Sleep (tests could not skip the wait),
// and it hides attempts from our counters. Retries are decided in runBatch and send instead,
// per the write-outcome table.
func newGraph(reg *Registry, base string, cred azcore.TokenCredential) (*graph, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("invalid graph_url %q", base)
	}
	hosts, err := absauth.NewAllowedHostsValidatorErrorCheck([]string{u.Hostname()})
	if err != nil {
		return nil, fmt.Errorf("graph_url %q: %w", base, err)
	}
	tp := &tokenProvider{cred: cred, scope: u.Scheme + "://" + u.Host + "/.default", host: u.Host,
		hosts: hosts, secrets: &reg.secrets}
	auth := absauth.NewBaseBearerTokenAuthenticationProvider(tp)
	opts := msgraph.GetDefaultClientOptions()
	var mw []khttp.Middleware
	for _, m := range msgraphcore.GetDefaultMiddlewaresWithOptions(&opts) {
		switch m.(type) {
		case *khttp.RetryHandler, khttp.RetryHandler:
			continue
		case *khttp.CompressionHandler:
			// It gzips every request body ($batch and group creates included). No Microsoft
			// Graph documentation says that Graph accepts compressed request bodies: the API
			// reference documents compressed responses only, and the SDK design spec behind
			// this handler (github.com/microsoftgraph/msgraph-sdk-design, pull request 71)
			// says the gateway was "adding support", relying on a 415 to resend uncompressed,
			// which a server that answers 400 instead never gets. Bodies go uncompressed;
			// responses stay compressed (net/http asks for gzip and decodes it).
			continue
		}
		mw = append(mw, m)
	}
	hc := &http.Client{
		Transport:     khttp.NewCustomTransportWithParentTransport(reg.parent, mw...),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       reg.timeout,
	}
	adapter, err := msgraph.NewGraphRequestAdapterWithParseNodeFactoryAndSerializationWriterFactoryAndHttpClient(auth, nil, nil, hc)
	if err != nil {
		return nil, fmt.Errorf("building the Graph request adapter: %w", err)
	}
	base = strings.TrimRight(base, "/")
	adapter.SetBaseUrl(base)
	return &graph{reg: reg, adapter: adapter, client: msgraph.NewGraphServiceClient(adapter), base: base, cred: cred, scope: tp.scope,
		pacer: newPacer(reg.opt, &reg.counters)}, nil
}

// errorMapping decodes every error reply as an OData error (it carries the status code and
// the headers, Retry-After included).
func errorMapping() abstractions.ErrorMappings {
	return abstractions.ErrorMappings{"XXX": odataerrors.CreateODataErrorFromDiscriminatorValue}
}

// apiStatus returns the HTTP status and Retry-After of an SDK error (0 when no reply was seen).
func apiStatus(err error) (int, string) {
	var ae abstractions.ApiErrorable
	if !errors.As(err, &ae) {
		return 0, ""
	}
	ra := ""
	if h := ae.GetResponseHeaders(); h != nil {
		if v := h.Get("Retry-After"); len(v) > 0 {
			ra = v[0]
		}
	}
	return ae.GetStatusCode(), ra
}

// errorCode returns the OData error code and message of an error, if it has them.
func errorCode(err error) (string, string) {
	var oe *odataerrors.ODataError
	if errors.As(err, &oe) && oe.GetErrorEscaped() != nil {
		e := oe.GetErrorEscaped()
		return deref(e.GetCode()), deref(e.GetMessage())
	}
	return "", ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// acquire takes one of the Registry's PoolSize request slots.
func (g *graph) acquire(ctx context.Context) error {
	select {
	case g.reg.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *graph) release() { <-g.reg.sem }

// backoff is the wait before attempt n+1 without Retry-After: BaseBackoff doubled per
// attempt, jittered to [50%, 100%] so that parallel batches do not retry in lockstep, capped
// at MaxWait.
func (g *graph) backoff(attempt int) time.Duration {
	return retry.Backoff(g.reg.opt.BaseBackoff, g.reg.opt.MaxWait, attempt, rand.Float64())
}

// wait sleeps before a retry; a Retry-After beyond MaxWait is an error (see Options.MaxWait).
func (g *graph) wait(ctx context.Context, d time.Duration) error {
	if d > g.reg.opt.MaxWait {
		return fmt.Errorf("Graph asked to wait %s, more than the %s allowed", d, g.reg.opt.MaxWait)
	}
	g.reg.counters.retries.Add(1)
	return g.reg.opt.Sleep(ctx, d)
}

// item is one sub-request of a $batch and, after runBatch, its reply.
type item struct {
	ri *abstractions.RequestInformation
	// write marks a non-read: an envelope whose outcome was not seen is not replayed; the item
	// is marked unknown for the caller to read back.
	write bool

	status  int
	headers map[string]string // lower-case names
	body    json.RawMessage
	err     error // no usable reply (after the allowed attempts)
	unknown bool  // a write whose outcome was not seen
}

// ok reports a 2xx reply.
func (it *item) ok() bool { return it.err == nil && it.status >= 200 && it.status < 300 }

// odataError decodes the error code and message of an item reply.
func (it *item) odataError() (code, msg string) {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(it.body, &e)
	return e.Error.Code, e.Error.Message
}

func (it *item) String() string {
	u, _ := it.ri.GetUri()
	s := it.ri.Method.String()
	if u != nil {
		s += " " + u.Path
	}
	return s
}

// failure describes an item that did not succeed.
func (it *item) failure() error {
	if it.err != nil {
		return it.err
	}
	code, msg := it.odataError()
	return fmt.Errorf("%s: %d %s: %s", it, it.status, code, msg)
}

// runBatch sends items in $batch requests of at most BatchSize, the batches concurrently
// within the Registry's PoolSize, and fills in every item's reply. Reads and writes must not
// be mixed in one call.
//
// Retries: a whole-request 429 waits for its Retry-After and resends (Graph did not run it); a
// 5xx, a transport error, or any failure after the request may have been sent (a reply that
// cannot be read or decoded) resends a read batch with backoff, but marks a write batch's
// items unknown (Graph may have executed them) and returns them to the caller, which reads
// back before deciding. Only a failure before anything was sent (no token, a request that
// cannot be built) fails the items outright. Inside a reply, a 429 item is resent after ITS
// Retry-After (the envelope is 200, so no middleware ever sees it); a 500/502/503/504 read
// item is resent with backoff, while such a write item is marked unknown (Graph may have
// done it) for the caller to read back. The items of one batch that need a retry travel
// together, after the longest of their waits.
func (g *graph) runBatch(ctx context.Context, items []*item) {
	size := g.reg.opt.BatchSize
	var wg sync.WaitGroup
	for start := 0; start < len(items); start += size {
		chunk := items[start:min(start+size, len(items))]
		wg.Go(func() { g.runChunk(ctx, chunk) })
	}
	wg.Wait()
}

func (g *graph) runChunk(ctx context.Context, pending []*item) {
	attempts := make(map[*item]int, len(pending))
	for len(pending) > 0 {
		for _, it := range pending {
			attempts[it]++
		}
		done := func() {}
		if pending[0].write {
			// Each write sub-request is a write of Graph's quota, every attempt.
			var err error
			if done, err = g.pacer.pace(ctx, len(pending)); err != nil {
				failAll(pending, fmt.Errorf("$batch: not sent: %w", err), false)
				return
			}
		}
		replies, err := g.sendBatch(ctx, pending)
		for it, r := range replies {
			if v := r.Headers[throttleHeader]; it.write && v != "" {
				g.pacer.observe(v)
			}
		}
		done()
		if err != nil {
			status, ra := apiStatus(err)
			var wait time.Duration
			switch {
			case ctx.Err() != nil:
				failAll(pending, ctx.Err(), true)
				return
			case status == http.StatusTooManyRequests:
				// Throttled before execution: safe to resend, writes included.
				g.reg.counters.throttled.Add(1)
				d, ok := retry.After(ra, g.reg.opt.Now())
				if !ok {
					d = g.backoff(attempts[pending[0]])
				}
				wait = d
			case errors.Is(err, ErrResponseTooLarge):
				// Asking again brings the same answer. A write was executed, its outcome
				// is in the part that was not read.
				failAll(pending, fmt.Errorf("$batch: %w", err), true)
				return
			case status == 0 && !mayHaveBeenSent(err):
				// Failed before anything was sent (no token, a request that cannot be
				// built): nothing to retry, nothing unseen.
				failAll(pending, fmt.Errorf("$batch: %w", err), false)
				return
			case status == 0 || status >= 500:
				if pending[0].write {
					failAll(pending, fmt.Errorf("$batch: outcome not seen: %w", err), true)
					return
				}
				wait = g.backoff(attempts[pending[0]])
				if d, ok := retry.After(ra, g.reg.opt.Now()); ok {
					wait = d
				}
			default:
				failAll(pending, fmt.Errorf("$batch: %w", err), false)
				return
			}
			if attempts[pending[0]] >= g.reg.opt.MaxAttempts {
				failAll(pending, fmt.Errorf("$batch: giving up after %d attempts: %w", attempts[pending[0]], err), status != http.StatusTooManyRequests)
				return
			}
			if werr := g.wait(ctx, wait); werr != nil {
				failAll(pending, fmt.Errorf("$batch: %w (after %w)", werr, err), status != http.StatusTooManyRequests)
				return
			}
			continue
		}
		var again []*item
		var wait time.Duration
		for _, it := range pending {
			r, ok := replies[it]
			if !ok {
				// Graph answered the envelope without this item: treat as not executed for a
				// read, unseen for a write.
				if it.write {
					it.err, it.unknown = fmt.Errorf("%s: no reply in the batch", it), true
					continue
				}
				r = batchReply{Status: http.StatusServiceUnavailable}
			}
			it.status, it.headers, it.body, it.err = r.Status, r.Headers, r.Body, nil
			var d time.Duration
			switch r.Status {
			case http.StatusTooManyRequests:
				g.reg.counters.throttled.Add(1)
				var ok bool
				if d, ok = retry.After(r.Headers["retry-after"], g.reg.opt.Now()); !ok {
					d = g.backoff(attempts[it])
				}
			case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
				if it.write {
					// Graph may have done it before failing: never resent blind.
					it.err, it.unknown = fmt.Errorf("%s: outcome not seen: %w", it, it.failure()), true
					continue
				}
				d = g.backoff(attempts[it])
				if ra, ok := retry.After(r.Headers["retry-after"], g.reg.opt.Now()); ok {
					d = ra
				}
			default:
				continue
			}
			if attempts[it] < g.reg.opt.MaxAttempts && d <= g.reg.opt.MaxWait {
				again = append(again, it)
				wait = max(wait, d)
			}
		}
		if len(again) > 0 {
			if err := g.wait(ctx, wait); err != nil {
				failAll(again, err, false)
				return
			}
		}
		pending = again
	}
}

// transportError reports an error of the HTTP round trip (the request may have reached
// Graph), as opposed to one raised before sending.
func transportError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

func failAll(items []*item, err error, unseen bool) {
	for _, it := range items {
		it.err = err
		it.unknown = it.write && unseen
	}
}

type batchReply struct {
	ID      string            `json:"id"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// sendBatch sends one $batch of items and returns the replies by item. The envelope is built
// by the SDK (msgraphcore.BatchRequest: relative URLs, random item IDs) and sent through the
// SDK adapter (auth, gzip, telemetry); the reply is decoded with encoding/json rather than the
// SDK's batch model, which parses every member object three times (JSON tree, map, JSON
// again) — too slow for 20 pages of 999 members.
func (g *graph) sendBatch(ctx context.Context, items []*item) (map[*item]batchReply, error) {
	b := msgraphcore.NewBatchRequest(g.adapter)
	byID := make(map[string]*item, len(items))
	for _, it := range items {
		step, err := b.AddBatchRequestStep(*it.ri)
		if err != nil {
			return nil, fmt.Errorf("building the batch: %w", err)
		}
		byID[deref(step.GetId())] = it
	}
	ri := abstractions.NewRequestInformation()
	ri.Method = abstractions.POST
	ri.UrlTemplate = "{+baseurl}/$batch"
	if err := ri.SetContentFromParsable(ctx, g.adapter, "application/json", b); err != nil {
		return nil, fmt.Errorf("serialising the batch: %w", err)
	}
	ri.Headers.TryAdd("Accept", "application/json")
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	g.reg.counters.batches.Add(1)
	g.reg.counters.subRequests.Add(int64(len(items)))
	sctx, sent := trackSent(ctx)
	if items[0].write {
		sctx = context.WithValue(sctx, observeKey{}, g.pacer.observe)
	}
	raw, err := g.adapter.SendPrimitive(sctx, ri, "[]byte", errorMapping())
	g.release()
	if err != nil {
		if sent.Load() {
			return nil, &afterSendError{err}
		}
		return nil, err
	}
	// From here on Graph has answered: whatever goes wrong, it may have run the items.
	data, ok := raw.([]byte)
	if !ok {
		return nil, &afterSendError{fmt.Errorf("the $batch reply has no body (%T)", raw)}
	}
	var env struct {
		Responses []batchReply `json:"responses"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, &afterSendError{fmt.Errorf("decoding the $batch reply: %w", err)}
	}
	out := make(map[*item]batchReply, len(env.Responses))
	for _, r := range env.Responses {
		it, ok := byID[r.ID]
		if !ok {
			continue
		}
		h := make(map[string]string, len(r.Headers))
		for k, v := range r.Headers {
			h[strings.ToLower(k)] = v
		}
		r.Headers = h
		out[it] = r
	}
	return out, nil
}

// nextPage returns the request for an @odata.nextLink, sent back exactly as given. A server
// answer never chooses where a request goes: a link to another scheme, host or port, or
// outside the base path (a ".." segment included), is refused. (The batch builder makes URLs
// relative by cutting the adapter's base URL off the front, and the token provider refuses
// other hosts too.) The link is quoted shortened: it is the server's text.
func (g *graph) nextPage(link string) (*abstractions.RequestInformation, error) {
	u, err := url.Parse(link)
	if err != nil {
		return nil, fmt.Errorf("invalid nextLink %s: %w", excerpt(link), err)
	}
	b, err := url.Parse(g.base)
	if err != nil {
		return nil, err
	}
	bad := !strings.HasPrefix(link, g.base+"/") || u.User != nil || !strings.EqualFold(u.Scheme, b.Scheme) ||
		!strings.EqualFold(u.Host, b.Host) || !strings.HasPrefix(u.Path, strings.TrimRight(b.Path, "/")+"/")
	for seg := range strings.SplitSeq(u.Path, "/") {
		bad = bad || seg == ".." || seg == "."
	}
	if bad {
		return nil, fmt.Errorf("nextLink %s is outside the Graph base %s: refused", excerpt(link), g.base)
	}
	ri := abstractions.NewRequestInformation()
	ri.Method = abstractions.GET
	ri.SetUri(*u)
	ri.Headers.TryAdd("Accept", "application/json")
	return ri, nil
}

// page is one page of a collection reply.
type page[T any] struct {
	Value []T    `json:"value"`
	Next  string `json:"@odata.nextLink"`
}

// readPaged runs the listings firsts (first-page requests) to the end: every page of every
// listing, in rounds of batches. A round holds the next page of every listing that still has
// one, so k listings of p pages cost about ceil(k/20) batches per round, in max(p) rounds. A
// page without items can still carry a nextLink; only its absence ends a listing. Any listing
// that fails fails the whole read: a partial state must never be taken for the current one.
func readPaged[T any](ctx context.Context, g *graph, firsts []*abstractions.RequestInformation) ([][]T, error) {
	out := make([][]T, len(firsts))
	type active struct {
		idx int
		it  *item
	}
	round := make([]active, len(firsts))
	for i, ri := range firsts {
		round[i] = active{idx: i, it: &item{ri: ri}}
	}
	// Per listing: the pages read and the links followed (Graph decides how many follow).
	pages := make([]int, len(firsts))
	links := make([]map[string]bool, len(firsts))
	for i := range links {
		links[i] = map[string]bool{}
	}
	for len(round) > 0 {
		items := make([]*item, len(round))
		for i, a := range round {
			items[i] = a.it
		}
		g.runBatch(ctx, items)
		var next []active
		for _, a := range round {
			if !a.it.ok() {
				return nil, fmt.Errorf("reading %s: %w", a.it, a.it.failure())
			}
			var p page[T]
			if err := json.Unmarshal(a.it.body, &p); err != nil {
				return nil, fmt.Errorf("decoding %s: %w", a.it, err)
			}
			g.reg.counters.pages.Add(1)
			out[a.idx] = append(out[a.idx], p.Value...)
			pages[a.idx]++
			if p.Next == "" {
				continue
			}
			switch {
			case g.reg.opt.MaxPages > 0 && pages[a.idx] >= g.reg.opt.MaxPages:
				return nil, fmt.Errorf("reading %s: Graph still has a next page after %d pages (Options.MaxPages): refused", a.it, pages[a.idx])
			case links[a.idx][p.Next]:
				return nil, fmt.Errorf("reading %s: Graph gave the same nextLink twice (a loop): refused", a.it)
			}
			links[a.idx][p.Next] = true
			ri, err := g.nextPage(p.Next)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", a.it, err)
			}
			next = append(next, active{idx: a.idx, it: &item{ri: ri}})
		}
		round = next
	}
	return out, nil
}

// excerpt quotes text from a server in a message, shortened.
func excerpt(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strconv.Quote(s)
}

// send runs one write outside a batch (group creation) in its pacer slot, with the
// Registry's slot held. No retry here: the caller applies the write-outcome table. sent
// reports whether the request reached the transport (so Graph may have received it, whatever
// the error).
func (g *graph) send(ctx context.Context, f func(ctx context.Context) error) (sent bool, err error) {
	done, err := g.pacer.pace(ctx, 1)
	if err != nil {
		return false, err
	}
	defer done()
	if err := g.acquire(ctx); err != nil {
		return false, err
	}
	defer g.release()
	sctx, flag := trackSent(ctx)
	err = f(context.WithValue(sctx, observeKey{}, g.pacer.observe))
	return flag.Load(), err
}

// quote makes an OData string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
