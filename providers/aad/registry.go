package aad

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/providers/aadspec"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/providers"
)

// Registry owns what the AAD OUs of a run share: one keep-alive transport, the request slots
// (PoolSize), the counters, and one Graph client with its caches per base URL and identity.
// Build every AAD provider of a run from one Registry, and Close it at the end.
type Registry struct {
	opt       Options
	transport *http.Transport // nil when Options.HTTPClient supplies a transport
	parent    http.RoundTripper
	capped    http.RoundTripper // the base transport with answers capped (token requests use it)
	timeout   time.Duration
	sem       chan struct{}
	counters  counters
	// secrets are the client secrets and the access tokens of the run, masked in every
	// error and log line: Graph (or what answers in its place) may quote the request.
	secrets redact.Set

	mu       sync.Mutex
	services map[string]*service
}

// NewRegistry returns a Registry with no clients yet; they are built on first use.
func NewRegistry(opt Options) *Registry {
	opt = opt.withDefaults()
	r := &Registry{opt: opt, sem: make(chan struct{}, opt.PoolSize), services: map[string]*service{}, timeout: opt.Timeout}
	r.opt.Logger = slog.New(r.secrets.Handler(opt.Logger.Handler()))
	var base http.RoundTripper
	if opt.HTTPClient != nil {
		base = opt.HTTPClient.Transport
		if opt.HTTPClient.Timeout > 0 {
			r.timeout = opt.HTTPClient.Timeout
		}
	}
	if base == nil {
		// No transport supplied (no HTTPClient, or one whose Transport is nil): never
		// http.DefaultTransport, whose 2 idle connections per host would be reopened over and
		// over with PoolSize requests in flight.
		r.transport = pooledTransport(opt.PoolSize)
		base = r.transport
	}
	r.capped = cappingTransport{next: base, max: opt.MaxResponseSize}
	r.parent = &countingTransport{next: r.capped, c: &r.counters}
	return r
}

// pooledTransport is a keep-alive transport that keeps as many idle connections per host as
// requests may be in flight.
func pooledTransport(pool int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = pool
	t.MaxConnsPerHost = pool
	return t
}

// Close releases idle connections.
func (r *Registry) Close() {
	if r.transport != nil {
		r.transport.CloseIdleConnections()
	}
}

// Counters returns the Registry's counters: requests (HTTP requests sent, every attempt),
// batches ($batch POSTs), subrequests (items in them), pages (collection pages read),
// throttled (429 replies, whole-request or per item), retries (waits before a retry),
// connections_opened (new TCP connections), creates (group creations sent) and
// predictive_hits (groups trusted from the predictive state without a request).
func (r *Registry) Counters() map[string]int64 { return r.counters.snapshot() }

// service is one Graph client with its caches.
type service struct {
	g      *graph
	groups *cache.Batched[[]*groupInfo] // "nick:<lower name>" or "id:<object id>" -> groups
	member *cache.Batched[*memberList]  // group object ID -> direct members
	users  *cache.Batched[string]       // lower-case UPN -> user object ID
	log    func(msg string, args ...any)
}

func (r *Registry) service(base string, cred azcore.TokenCredential, identity string) (*service, error) {
	key := base + "|" + identity
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.services[key]; ok {
		return s, nil
	}
	g, err := newGraph(r, base, cred)
	if err != nil {
		return nil, err
	}
	o := r.opt
	s := &service{g: g,
		groups: &cache.Batched[[]*groupInfo]{TTL: o.CacheTTL, NegativeTTL: o.NegativeCacheTTL, Now: o.Now},
		member: &cache.Batched[*memberList]{TTL: o.CacheTTL, NegativeTTL: o.NegativeCacheTTL, Now: o.Now,
			StaleWhile: o.StaleWhileRevalidate,
			OnRefreshError: func(groupID string, err error) {
				o.Logger.Warn("refreshing a cached member list failed; the stale list is served until it is too old", "group_id", groupID, "err", err)
			}},
		users: &cache.Batched[string]{TTL: o.CacheTTL, NegativeTTL: o.NegativeCacheTTL, Now: o.Now},
		log:   o.Logger.Warn}
	r.services[key] = s
	return s, nil
}

// Provider builds the provider of an `aad` OU. Missing credentials, a bad
// user_principal_format or graph_url, and delete_groups without managed_prefix are errors
// here, when a run needs the provider, not when the config is loaded (an offline
// calculation needs no credentials).
func (r *Registry) Provider(ou *config.OU) (providers.Provider, error) {
	return r.provider(ou)
}

func (r *Registry) provider(ou *config.OU) (*Provider, error) {
	m := ou.Settings
	get := func(k string) string { return strings.TrimSpace(m.Get(k).Text()) }
	flag := func(k string) bool {
		b, _ := m.Get(k).AsBool()
		return b
	}
	if ou.Base == "" {
		return nil, fmt.Errorf("OU %s has no base", ou.Key)
	}
	base := get("graph_url")
	if base == "" {
		base = r.opt.GraphURL
	}
	format := get("user_principal_format")
	if format == "" {
		format = "%KEY%"
	}
	prefix, suffix, ok := strings.Cut(format, "%KEY%")
	if !ok || strings.Contains(suffix, "%KEY%") {
		return nil, fmt.Errorf("OU %s: user_principal_format %q must contain %%KEY%% exactly once", ou.Key, format)
	}
	p := &Provider{ou: ou.Key, base: ou.Base, upnPrefix: prefix, upnSuffix: suffix,
		createMissing: flag("create_if_missing"), ignoreNotFound: flag("ignore_not_found"),
		deleteGroups: flag("delete_groups"), managedPrefix: get("managed_prefix"),
		desired: map[string]*providers.Group{}, rejected: map[string]string{}}
	if p.deleteGroups && p.managedPrefix == "" {
		return nil, fmt.Errorf("OU %s: delete_groups needs managed_prefix (the mailNickname prefix of the groups this OU owns); "+
			"Entra ID has no container, so without it any group of the tenant could be deleted", ou.Key)
	}
	cred := r.opt.TokenCredential
	identity := "static"
	if cred == nil {
		var err error
		if cred, identity, err = r.credential(ou); err != nil {
			return nil, err
		}
	}
	svc, err := r.service(base, cred, identity)
	if err != nil {
		return nil, fmt.Errorf("OU %s: %w", ou.Key, err)
	}
	p.svc = svc
	p.reg = r
	p.identity = identity
	return p, nil
}

// Backends describes the aad type with providers from r.
func Backends(r *Registry) []backend.Backend {
	b := aadspec.Backend()
	b.New = func(ou *config.OU) (providers.Provider, error) {
		p, err := r.Provider(ou)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	return []backend.Backend{b}
}
