package fakegraph

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Graph's write quotas for the identity and access service ("Microsoft Graph service-specific
// throttling limits", learn.microsoft.com/graph/throttling-limits, "Identity and access
// service limits"): 3,000 write requests per 2 minutes and 30 seconds per application+tenant
// pair and 18,000 per 5 minutes per tenant for all applications, where every POST, PATCH, PUT
// and DELETE costs one write. Requests in a $batch are evaluated one by one
// (learn.microsoft.com/graph/throttling, "Throttling and batching"). A reply near a limit
// carries x-ms-throttle-limit-percentage, "returned only when the application consumed more
// than 0.8 of its limit", the fraction of the limit used.
const (
	DefaultAppWrites    = 3000
	AppWriteWindow      = 150 * time.Second
	DefaultTenantWrites = 18000
	TenantWriteWindow   = 5 * time.Minute
)

// Identity of the static bearer token (Options.Token).
const (
	DefaultTenant = "00000000-0000-4000-8000-7e4a47000001"
	DefaultApp    = "00000000-0000-4000-8000-a9900000001a"
)

// caller is the application and tenant of a request's token.
type caller struct{ tenant, app string }

func (c caller) key() string { return c.tenant + "/" + c.app }

// AddToken makes the server accept another static bearer token, as an application of a
// tenant (tests of several applications sharing a tenant's quota).
func (s *Server) AddToken(token, tenant, app string) {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	s.tokens[token] = caller{tenant: tenant, app: app}
}

// isWrite reports a request that costs a write: any method but GET (and HEAD) on a route the
// fake serves.
func isWrite(method, route string) bool {
	return method != http.MethodGet && method != http.MethodHead && route != "unknown" && route != "batch"
}

// admitWrite counts one write of c at the server's clock. With Options.WriteQuotas, a write
// beyond the application's or the tenant's quota is refused (429 with Retry-After and
// Graph's throttle headers, counted in WriteLimitHits, not counted as a write); an admitted
// write above 80% of the application's quota gets the throttle header (returned).
func (s *Server) admitWrite(c caller) (*reply, string) {
	now := s.opt.Now()
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	app := pruned(s.appWrites[c.key()], now.Add(-AppWriteWindow))
	ten := pruned(s.tenantWrites[c.tenant], now.Add(-TenantWriteWindow))
	if s.opt.WriteQuotas {
		refuse := func(ts []time.Time, limit int, w time.Duration, scope string) *reply {
			wait := ts[len(ts)-limit].Add(w).Sub(now)
			r := errReply(http.StatusTooManyRequests, "TooManyRequests", "Too many requests: the write limit of "+scope+" is exceeded.")
			r.headers = map[string]string{"Retry-After": strconv.Itoa(int(math.Ceil(wait.Seconds()))),
				"x-ms-throttle-scope":       scope + "/Write/" + c.app + "/" + c.tenant,
				"x-ms-throttle-information": "WriteLimitExceeded"}
			s.writeLimitHits.Add(1)
			s.throttled.Add(1)
			s.appWrites[c.key()], s.tenantWrites[c.tenant] = app, ten
			return &r
		}
		if len(app) >= s.opt.AppWrites {
			return refuse(app, s.opt.AppWrites, AppWriteWindow, "Tenant_Application"), ""
		}
		if len(ten) >= s.opt.TenantWrites {
			return refuse(ten, s.opt.TenantWrites, TenantWriteWindow, "Tenant"), ""
		}
	}
	s.appWrites[c.key()] = append(app, now)
	s.tenantWrites[c.tenant] = append(ten, now)
	s.writesByApp[c.key()]++
	s.writesByTenant[c.tenant]++
	s.writes.Add(1)
	if !s.opt.WriteQuotas {
		return nil, ""
	}
	p := float64(len(app)+1) / float64(s.opt.AppWrites)
	if p <= 0.8 {
		return nil, ""
	}
	s.throttleHeaders.Add(1)
	return nil, strconv.FormatFloat(p, 'f', 3, 64)
}

// pruned returns the times of ts after cutoff (ts is sorted: the server's clock never goes
// back while a test runs).
func pruned(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}

// callerOf returns the application and tenant of a token the server accepted: the static
// token's, one added by AddToken, or the appid and tid claims of a token it issued.
func (s *Server) callerOf(tok string) caller {
	if tok == s.opt.Token {
		return caller{tenant: DefaultTenant, app: DefaultApp}
	}
	s.quotaMu.Lock()
	c, ok := s.tokens[tok]
	s.quotaMu.Unlock()
	if ok {
		return c
	}
	claims, err := Claims(tok)
	if err != nil {
		return caller{tenant: "unknown", app: "unknown"}
	}
	tid, _ := claims["tid"].(string)
	app, _ := claims["appid"].(string)
	return caller{tenant: strings.ToLower(tid), app: strings.ToLower(app)}
}
