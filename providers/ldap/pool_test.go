package ldap

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/internal/testldap"
)

// TestPagedSearchesShareOnePool runs paged searches of several pages and plain reads at once
// over pools of one and two connections: each paged search must hold its connection to its
// last page (OpenLDAP keeps one paged state per connection), plain reads may share it, and
// the pool never opens more connections than its size.
func TestPagedSearchesShareOnePool(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{})
	const perOU = 700
	var b strings.Builder
	for o := range 3 {
		fmt.Fprintf(&b, "dn: ou=P%d,%s\nobjectClass: organizationalUnit\nou: P%d\n\n", o, srv.Suffix, o)
		for i := range perOU {
			fmt.Fprintf(&b, "dn: cn=g%d,ou=P%d,%s\nobjectClass: groupOfNames\ncn: g%d\nmember: cn=g%d,ou=P%d,%s\n\n", i, o, srv.Suffix, i, i, o, srv.Suffix)
		}
	}
	srv.Add(t, b.String())
	for _, size := range []int{1, 2} {
		t.Run(fmt.Sprintf("pool=%d", size), func(t *testing.T) {
			c := &poolCounters{}
			p, err := newPool(connSettings{URI: srv.URL, BindDN: srv.BindDN, Password: srv.Password, PoolSize: size, PageSize: 100}, c)
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			for o := range 3 {
				for range 2 {
					wg.Go(func() {
						req := goldap.NewSearchRequest(fmt.Sprintf("ou=P%d,%s", o, srv.Suffix), goldap.ScopeSingleLevel,
							goldap.NeverDerefAliases, 0, 0, false, "(cn=*)", []string{"cn"}, nil)
						es, err := p.search(ctx, req, nil)
						if err == nil && len(es) != perOU {
							err = fmt.Errorf("ou=P%d: %d entries, want %d", o, len(es), perOU)
						}
						if err != nil {
							errs <- err
						}
					})
				}
			}
			for i := range 20 {
				wg.Go(func() {
					err := p.do(ctx, func(conn *goldap.Conn) error {
						res, err := conn.Search(goldap.NewSearchRequest(fmt.Sprintf("cn=g%d,ou=P0,%s", i, srv.Suffix),
							goldap.ScopeBaseObject, goldap.NeverDerefAliases, 0, 0, false, "(objectClass=*)", []string{"cn"}, nil))
						if err == nil && len(res.Entries) != 1 {
							err = fmt.Errorf("g%d: %d entries", i, len(res.Entries))
						}
						return err
					})
					if err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			s := c.Snapshot()
			if s["connections"] > int64(size) || s["binds"] > int64(size) {
				t.Errorf("%d connections, %d binds; want ≤ %d", s["connections"], s["binds"], size)
			}
			// 6 searches of 700 entries at 100 a page: 7 or 8 pages each (an empty last page).
			if s["searches"] < 42 || s["searches"] > 48 {
				t.Errorf("%d page requests, want 42-48", s["searches"])
			}
		})
	}
}

// TestPagedSearchWaitsHonourContext: a paged search that finds every connection holding one
// stops waiting when its context ends.
func TestPagedSearchWaitsHonourContext(t *testing.T) {
	p, err := newPool(connSettings{URI: "ldap://127.0.0.1:1", PoolSize: 1}, &poolCounters{})
	if err != nil {
		t.Fatal(err)
	}
	p.slots[0].paged = true // held by another paged search
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.acquire(ctx, true); err != context.Canceled {
		t.Fatalf("acquire = %v, want context.Canceled", err)
	}
}

// Credentials written into ldap_uri never reach an error message.
func TestPoolURIRedacted(t *testing.T) {
	const secret = "s3cretPW"
	for _, uri := range []string{"ldap://cn=admin:" + secret + "@127.0.0.1:1", "ftp://u:" + secret + "@h"} {
		p, err := newPool(connSettings{URI: uri}, &poolCounters{})
		if err == nil {
			_, err = p.dial(context.Background())
			p.close()
		}
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "***@") {
			t.Errorf("%s: %v", uri, err)
		}
	}
}
