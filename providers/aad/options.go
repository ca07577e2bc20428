package aad

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/entitlements-go/entitlements/cache"
)

// DefaultGraphURL is the Microsoft Graph base URL used when neither the OU (graph_url) nor
// Options.GraphURL names one.
const DefaultGraphURL = "https://graph.microsoft.com/v1.0"

// Defaults of Options.MaxResponseSize and Options.MaxPages.
const (
	DefaultMaxResponseSize int64 = 64 << 20
	DefaultMaxPages              = 2000
)

// Graph limits the provider is built around.
const (
	// maxBatch is Graph's limit of sub-requests per JSON $batch.
	maxBatch = 20
	// maxInValues is Graph's default limit of values in one `in` filter clause.
	maxInValues = 15
	// pageSize is the largest $top for directory objects.
	pageSize = 999
)

// Options tune a Registry. Zero fields take the documented defaults.
type Options struct {
	// GraphURL is the Graph base URL (".../v1.0") for OUs that do not set graph_url. Default
	// DefaultGraphURL. Tests point it at a fakegraph server.
	GraphURL string
	// HTTPClient, when set, supplies the parent transport under the SDK's middleware (and its
	// Timeout). Default: one keep-alive transport shared by every OU of the Registry, with
	// MaxIdleConnsPerHost and MaxConnsPerHost raised to PoolSize: Go's default of 2 idle
	// connections per host would throw connections away and reopen them whenever more than 2
	// requests are in flight. An HTTPClient without a Transport gets that pooled transport too
	// (never http.DefaultTransport), with the client's Timeout.
	HTTPClient *http.Client
	// TokenCredential authenticates every Graph request instead of the credential of the OU
	// (its `credential` kind and keys, or their AZURE_* environment variables: README
	// "Credentials"). Tests pass a static token.
	TokenCredential azcore.TokenCredential
	// AuthorityHost is the Microsoft identity platform's host ("https://login.example/")
	// for every credential, with instance discovery off (that authority must be trusted as
	// it is). Default: azidentity's, which honours $AZURE_AUTHORITY_HOST. Tests point it at
	// a fakegraph server's LoginURL.
	AuthorityHost string
	// PoolSize bounds Graph requests in flight (and so connections) for the whole Registry,
	// shared by every OU: Graph throttles per tenant and application, not per OU. Default 4.
	PoolSize int
	// BatchSize is the number of sub-requests per $batch, 1..20. Default 20 (Graph's limit).
	BatchSize int
	// MaxAttempts bounds the attempts of one request or batch item (throttling, 5xx,
	// transport errors on reads). Default 5.
	MaxAttempts int
	// BaseBackoff is the first wait after a failure without Retry-After; it doubles per
	// attempt, with jitter. Default 1s.
	BaseBackoff time.Duration
	// MaxWait is the longest single wait. A Retry-After above it fails the request instead of
	// being shortened (retrying early only earns another 429). Default 60s.
	MaxWait time.Duration
	// ReplicationLagWait bounds the total wait for member adds that Graph refused because its
	// replicas do not know the group yet (400 "The source resource object or one of the
	// objects being referenced do not exist.", documented for groups created moments
	// before). They are read back and sent again after waits of 500ms, 1s, 2s, ... until the
	// next wait would pass this total; then they fail, and the next run adds them. Default
	// 8s (four retries); negative: no retry.
	ReplicationLagWait time.Duration
	// WriteQuota is the write quota Graph enforces per application and tenant per
	// WriteWindow (2.5 minutes). Default DefaultWriteQuota (3,000, Graph's documented
	// number); the throttle header is read as a fraction of it. Tests against a fake with
	// another quota set it to the fake's.
	WriteQuota int
	// WritesPerWindow is the write budget of one Graph client (an application in a tenant)
	// per WriteWindow: write requests, a $batch counting one per sub-request, a
	// members@odata.bind PATCH one for up to 20 members. Default 90% of WriteQuota (2,700),
	// leaving a margin for other clients of the application; negative: no budget.
	WritesPerWindow int
	// WriteInterval is the spacing per write: a batch of n writes is followed by a pause of
	// n intervals before the next. Default WriteWindow / WritesPerWindow (about 56 ms), so
	// that writes flow evenly through the window; negative: no spacing.
	WriteInterval time.Duration
	// ThrottleThreshold is the x-ms-throttle-limit-percentage (the fraction of a limit used,
	// which Graph sends above 0.8) at or above which a write's reply makes the pacer book the
	// writes Graph counts beyond its own (another client of the application), slowing the
	// next writes down until the window has room. Default DefaultThrottleThreshold (0.9, the
	// default budget's share of the quota); negative: the header is ignored.
	ThrottleThreshold float64
	// WriteConcurrency bounds the write batches (and group creates) of one Graph client in
	// flight. Default 1: each is slotted once the previous reply, and its throttle header,
	// was read, so the pacer knows what Graph counted before it sends more. With
	// NoWritePacing the default is PoolSize.
	WriteConcurrency int
	// NoWritePacing turns WritesPerWindow, WriteInterval and ThrottleThreshold off (tests
	// and benchmarks against a fake on the real clock), and lets PoolSize write batches be
	// in flight unless WriteConcurrency says otherwise. Graph's answers (429 and
	// Retry-After) are still honoured.
	NoWritePacing bool
	// Timeout bounds one HTTP request. Default 100s (the SDK's default).
	Timeout time.Duration
	// MaxResponseSize caps the body of one Graph answer in bytes (after decompression). A
	// larger answer fails its request with ErrResponseTooLarge, not retried, instead of being
	// read into memory. Default DefaultMaxResponseSize (64 MiB: a $batch of 20 pages of 999
	// members is under 10 MiB); negative: no cap.
	MaxResponseSize int64
	// MaxPages bounds the pages of one listing (one group's members, one lookup). Graph
	// decides with @odata.nextLink how many pages follow; a chain longer than this fails the
	// read. Default DefaultMaxPages (2,000 pages: about two million members at 999 a page);
	// negative: no bound.
	MaxPages int
	// Sleep waits between attempts and for the write pacer's slots. Default: a timer that stops early when ctx is done. Tests
	// inject one that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// CacheTTL is how long group lookups, member lists and user lookups that found something
	// stay cached. Zero: for the life of the Registry, which is one run for the CLI. Writes
	// invalidate what they touch either way.
	CacheTTL time.Duration
	// NegativeCacheTTL is how long a "not found" answer (no group has this mailNickname, no
	// user has this UPN) stays cached: long enough for the plan and the apply of one run not to
	// ask twice, short enough that a long-running embedder sees new users and groups (and
	// never re-creates a group that exists). It is never longer than CacheTTL when that is set.
	// Default 1 minute; negative: "not found" is never cached.
	NegativeCacheTTL time.Duration
	// StaleWhileRevalidate serves an expired member list at once while one background request
	// refreshes it (for long-running embedders that prefer a slightly old answer to a wait;
	// plans built on it may be stale). Default false.
	StaleWhileRevalidate bool
	// Getenv reads the environment variables of the credentials (AZURE_TENANT_ID,
	// AZURE_CLIENT_ID, AZURE_CLIENT_SECRET when the OU does not set tenant_id, client_id or
	// client_secret; AZURE_CLIENT_CERTIFICATE_PASSWORD, AZURE_FEDERATED_TOKEN_FILE,
	// ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN). The managed-identity,
	// Azure CLI and default kinds read theirs through azidentity, from the process
	// environment. Default os.LookupEnv.
	Getenv func(string) (string, bool)
	// Logger receives every write at info level (what changed: the group, the member added
	// or removed, the description set, the group created or deleted, and the outcome; failed
	// and unknown outcomes at warn level), and warnings: users not found, members that are not
	// users, groups left alone (dynamic or mail-enabled), deletions not planned. Default:
	// discard.
	Logger *slog.Logger
	// Now is the clock of the caches and of the write pacer. Default time.Now.
	Now func() time.Time
	// Predictive is the predictive state of the run (spec 2.3), or nil. A group whose cached
	// members equal the desired ones is trusted as current without a request; a group whose
	// cached state differs is invalidated and read from Graph, in the same bulk read as the
	// others, so only diffs based on Graph data become changes.
	Predictive *cache.Predictive
}

func (o Options) withDefaults() Options {
	if o.GraphURL == "" {
		o.GraphURL = DefaultGraphURL
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 4
	}
	if o.BatchSize <= 0 || o.BatchSize > maxBatch {
		o.BatchSize = maxBatch
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 60 * time.Second
	}
	if o.ReplicationLagWait == 0 {
		o.ReplicationLagWait = 8 * time.Second
	}
	if o.NoWritePacing {
		o.WritesPerWindow, o.WriteInterval, o.ThrottleThreshold = -1, -1, -1
		if o.WriteConcurrency <= 0 {
			o.WriteConcurrency = o.PoolSize
		}
	}
	if o.WriteConcurrency <= 0 {
		o.WriteConcurrency = 1
	}
	if o.WriteQuota <= 0 {
		o.WriteQuota = DefaultWriteQuota
	}
	if o.WritesPerWindow == 0 {
		o.WritesPerWindow = o.WriteQuota * 9 / 10
	}
	if o.WriteInterval == 0 {
		o.WriteInterval = -1
		if o.WritesPerWindow > 0 {
			// Rounded up, so that the spacing alone never fills the window past the budget.
			n := time.Duration(o.WritesPerWindow)
			o.WriteInterval = (WriteWindow + n - 1) / n
		}
	}
	if o.ThrottleThreshold == 0 {
		o.ThrottleThreshold = DefaultThrottleThreshold
	}
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Second
	}
	if o.MaxResponseSize == 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	if o.MaxPages == 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Getenv == nil {
		o.Getenv = os.LookupEnv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NegativeCacheTTL == 0 {
		o.NegativeCacheTTL = time.Minute
	}
	if o.CacheTTL > 0 && o.NegativeCacheTTL > o.CacheTTL {
		o.NegativeCacheTTL = o.CacheTTL
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
