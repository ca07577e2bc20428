package ldap

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	goldap "github.com/go-ldap/ldap/v3"
	"golang.org/x/sync/errgroup"

	"github.com/entitlements-go/entitlements/providers"
)

var _ providers.ModificationReader = (*Provider)(nil)

// lastModifiedConcurrency bounds the lookups LastModified has in flight: they are plain
// base-object searches, which share the pool's connections.
const lastModifiedConcurrency = 8

// LastModified implements providers.ModificationReader with the operational attributes that
// OpenLDAP, 389 Directory Server and Active Directory keep on every entry: modifiersName (the
// DN bound when the entry was last modified; AD has none) and modifyTimestamp. Operational
// attributes are returned only when asked for by name, so the bulk read of the base (every
// user attribute) never carries them: this is one base-object search per group, made only
// for the few groups a drift report names. A group that no longer exists is left out.
func (p *Provider) LastModified(ctx context.Context, _ *providers.Target, dns []string) (map[string]providers.Modification, error) {
	out := map[string]providers.Modification{}
	var mu sync.Mutex
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(lastModifiedConcurrency)
	for _, d := range dns {
		eg.Go(func() error {
			e, err := p.svc.readAttrs(ctx, d, []string{"modifiersName", "modifyTimestamp"})
			if err != nil || e == nil {
				return err
			}
			var m providers.Modification
			m.By = e.GetEqualFoldAttributeValue("modifiersName")
			if ts := e.GetEqualFoldAttributeValue("modifyTimestamp"); ts != "" {
				at, err := parseGeneralizedTime(ts)
				if err != nil {
					return fmt.Errorf("%s: modifyTimestamp %q: %w", d, ts, err)
				}
				m.At = at
			}
			if m == (providers.Modification{}) {
				return nil
			}
			mu.Lock()
			out[providers.Key(d)] = m
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseGeneralizedTime reads an LDAP GeneralizedTime (RFC 4517 3.3.13: "20260501101500Z",
// AD's "20260501101500.0Z"), in UTC.
func parseGeneralizedTime(s string) (time.Time, error) {
	t, err := ber.ParseGeneralizedTime([]byte(strings.TrimSpace(s)))
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// readAttrs reads the named attributes of one entry (base-object search); nil when the entry
// does not exist.
func (s *ldapServer) readAttrs(ctx context.Context, d string, attrs []string) (*goldap.Entry, error) {
	var res *goldap.SearchResult
	err := s.pool.do(ctx, func(c *goldap.Conn) error {
		s.counters.Searches.Add(1)
		req := goldap.NewSearchRequest(d, goldap.ScopeBaseObject, goldap.NeverDerefAliases, 0, 0, false,
			"(objectClass=*)", attrs, nil)
		var err error
		res, err = c.Search(req)
		return err
	})
	if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", d, err)
	}
	if len(res.Entries) != 1 {
		return nil, nil
	}
	return res.Entries[0], nil
}
