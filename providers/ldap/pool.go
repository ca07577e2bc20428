package ldap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/internal/safefile"
	goldap "github.com/go-ldap/ldap/v3"
)

// connSettings is how to reach and bind to one LDAP server.
type connSettings struct {
	URI, BindDN, Password string
	// CAFile pins the CA bundle (default: $LDAP_CACERT, else the system pool).
	CAFile string
	// InsecureSkipVerify disables certificate checks (config flag or $LDAP_DISABLE_SSL_VERIFICATION).
	InsecureSkipVerify bool
	// StartTLS upgrades a plain ldap:// connection before binding.
	StartTLS bool
	// PoolSize is the number of bound connections kept for the run. Default 2.
	PoolSize int
	// Timeout bounds dialing and each operation. Default 30 s.
	Timeout time.Duration
	// PageSize for paged searches. Default 500.
	PageSize uint32
}

func (c connSettings) withDefaults() connSettings {
	if c.PoolSize <= 0 {
		c.PoolSize = 2
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.PageSize == 0 {
		c.PageSize = 500
	}
	return c
}

// key identifies a pool: one per server and identity.
func (c connSettings) key() string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%v\x00%v", c.URI, c.BindDN, c.Password, c.CAFile, c.InsecureSkipVerify, c.StartTLS)
}

// poolCounters are the counters of one pool. Read them with Snapshot.
type poolCounters struct {
	Searches, Adds, Modifies, Deletes, Connections, Binds, Retries atomic.Int64
}

// Snapshot returns the counters as a map (the form providers.Counter reports).
func (c *poolCounters) Snapshot() map[string]int64 {
	return map[string]int64{
		"searches": c.Searches.Load(), "adds": c.Adds.Load(), "modifies": c.Modifies.Load(),
		"deletes": c.Deletes.Load(), "connections": c.Connections.Load(), "binds": c.Binds.Load(),
		"retries": c.Retries.Load(),
	}
}

// pool is a fixed set of slots, each holding at most one bound connection (dialled lazily,
// redialled when it breaks). See the package documentation for the model: any number of
// plain operations share a slot (go-ldap multiplexes requests by message ID), but a slot
// carries at most one paged search at a time, from its first page to its last.
type pool struct {
	cfg      connSettings
	tls      *tls.Config
	counters *poolCounters
	// secrets are the bind password and a password in ldap_uri, masked in every error the
	// pool returns: a server may quote the bind request in its answer.
	secrets redact.Set
	// uri is cfg.URI as messages show it (redact.URLs).
	uri string

	mu    sync.Mutex
	slots []*slot
	// freed is closed (and replaced) whenever a paged search gives its slot back, waking
	// the paged searches that wait for one.
	freed chan struct{}
}

type slot struct {
	// dialMu serialises (re)dialling, so concurrent users of an empty slot wait for one
	// dial instead of each opening a connection.
	dialMu sync.Mutex
	// Guarded by pool.mu:
	conn  *goldap.Conn
	users int  // operations holding the slot, paged or not
	paged bool // a paged search is between its first and last page on this connection
}

func newPool(cfg connSettings, counters *poolCounters) (*pool, error) {
	cfg = cfg.withDefaults()
	u, err := url.Parse(cfg.URI)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return nil, fmt.Errorf("invalid ldap_uri %q (expected ldap://host:port or ldaps://host:port)", redact.URLs(cfg.URI))
	}
	tc := &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: cfg.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	ca := cfg.CAFile
	if ca == "" {
		ca = os.Getenv("LDAP_CACERT")
	}
	if ca != "" {
		pem, err := safefile.Read(ca, safefile.Options{})
		if err != nil {
			return nil, fmt.Errorf("reading LDAP CA file: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("LDAP CA file %s holds no PEM certificate", ca)
		}
		tc.RootCAs = roots
	}
	p := &pool{cfg: cfg, tls: tc, counters: counters, freed: make(chan struct{}), uri: redact.URLs(cfg.URI)}
	p.secrets.Add(cfg.Password)
	if pw, ok := u.User.Password(); ok {
		p.secrets.Add(pw)
	}
	for range cfg.PoolSize {
		p.slots = append(p.slots, &slot{})
	}
	return p, nil
}

// acquire reserves a slot and returns its live connection. A paged reservation waits for a
// slot that no other paged search holds; a plain one never waits. Among the eligible slots
// the least busy wins, a connected one on a tie, so the pool opens a second connection only
// when the first is in use. The caller must release the slot.
func (p *pool) acquire(ctx context.Context, paged bool) (*slot, *goldap.Conn, error) {
	for {
		p.mu.Lock()
		var best *slot
		for _, s := range p.slots {
			if paged && s.paged {
				continue
			}
			if best == nil || s.users < best.users || s.users == best.users && best.conn == nil && s.conn != nil {
				best = s
			}
		}
		if best != nil {
			best.users++
			best.paged = best.paged || paged
			p.mu.Unlock()
			c, err := p.connect(ctx, best)
			if err != nil {
				p.release(best, paged)
				return nil, nil, err
			}
			return best, c, nil
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-freed:
		}
	}
}

func (p *pool) release(s *slot, paged bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.users--
	if paged {
		s.paged = false
		close(p.freed)
		p.freed = make(chan struct{})
	}
}

// connect returns the slot's connection, dialling one if it is empty or broken.
func (p *pool) connect(ctx context.Context, s *slot) (*goldap.Conn, error) {
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	p.mu.Lock()
	c := s.conn
	p.mu.Unlock()
	if c != nil && !c.IsClosing() {
		return c, nil
	}
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	s.conn = c
	p.mu.Unlock()
	return c, nil
}

func (p *pool) dial(ctx context.Context) (*goldap.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: p.cfg.Timeout}
	opts := []goldap.DialOpt{goldap.DialWithDialer(d)}
	if u, _ := url.Parse(p.cfg.URI); u.Scheme == "ldaps" {
		opts = append(opts, goldap.DialWithTLSConfig(p.tls))
	}
	c, err := goldap.DialURL(p.cfg.URI, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", p.uri, err)
	}
	p.counters.Connections.Add(1)
	c.SetTimeout(p.cfg.Timeout)
	if p.cfg.StartTLS {
		if err := c.StartTLS(p.tls); err != nil {
			c.Close()
			return nil, fmt.Errorf("StartTLS with %s: %w", p.uri, err)
		}
	}
	if p.cfg.BindDN != "" {
		p.counters.Binds.Add(1)
		if err := c.Bind(p.cfg.BindDN, p.cfg.Password); err != nil {
			c.Close()
			hint := ""
			if goldap.IsErrorWithCode(err, goldap.LDAPResultStrongAuthRequired) && !p.cfg.StartTLS && !strings.HasPrefix(strings.ToLower(p.cfg.URI), "ldaps:") {
				// Active Directory refuses simple binds in clear text.
				hint = " (the server wants TLS: use an ldaps:// URI or ldap_starttls: true)"
			}
			return nil, fmt.Errorf("binding to %s as %s: %w%s", p.uri, p.cfg.BindDN, err, hint)
		}
	}
	return c, nil
}

func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
	}
}

// isNetwork reports an error that broke the connection (the request may or may not have
// reached the server).
func isNetwork(err error) bool {
	var le *goldap.Error
	if errors.As(err, &le) {
		return le.ResultCode == goldap.ErrorNetwork
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// do runs a plain operation (not a paged search) on a pooled connection; see run.
func (p *pool) do(ctx context.Context, op func(*goldap.Conn) error) error {
	return p.run(ctx, false, op)
}

// run runs op on a pooled connection, holding the slot for a paged search when paged. After
// a broken connection it redials and runs op again once: callers only pass operations that
// are safe to repeat (reads, whole-attribute replaces, adds/deletes whose "already done"
// answer they map to success). Every error the pool returns comes from here, with the
// credentials masked.
func (p *pool) run(ctx context.Context, paged bool, op func(*goldap.Conn) error) error {
	return p.secrets.Error(p.runOnce(ctx, paged, op))
}

func (p *pool) runOnce(ctx context.Context, paged bool, op func(*goldap.Conn) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			p.counters.Retries.Add(1)
		}
		var s *slot
		var c *goldap.Conn
		s, c, err = p.acquire(ctx, paged)
		if err != nil {
			if isNetwork(err) || isDial(err) {
				continue
			}
			return err
		}
		err = op(c)
		if err != nil && isNetwork(err) {
			c.Close()
		}
		p.release(s, paged)
		if err == nil || !isNetwork(err) {
			return err
		}
	}
	return err
}

// search runs a search to its end and returns every entry, paging with the simple paged
// results control (RFC 2696) at the configured page size: a server's size limit (500 by
// default on OpenLDAP and Active Directory) caps a plain search, not a paged one. Every
// page is counted as a search. The slot is held for paging from the first page to the
// last, since servers keep one paged-results state per connection (OpenLDAP answers a
// second paged search on the same connection by invalidating the first one's cookie).
// page, when set, is told the number of entries received so far after each page.
func (p *pool) search(ctx context.Context, req *goldap.SearchRequest, page func(entries int)) ([]*goldap.Entry, error) {
	var entries []*goldap.Entry
	err := p.run(ctx, true, func(c *goldap.Conn) error {
		entries = entries[:0] // a retry starts over
		paging := goldap.NewControlPaging(p.cfg.PageSize)
		r := *req
		r.Controls = append(slices.Clip(req.Controls), paging)
		for {
			p.counters.Searches.Add(1)
			res, err := c.Search(&r)
			if err != nil {
				return err
			}
			entries = append(entries, res.Entries...)
			if page != nil {
				page(len(entries))
			}
			next, _ := goldap.FindControl(res.Controls, goldap.ControlTypePaging).(*goldap.ControlPaging)
			if next == nil || len(next.Cookie) == 0 {
				return nil
			}
			paging.SetCookie(next.Cookie)
			if err := ctx.Err(); err != nil {
				// A page size of 0 tells the server to drop the search's state (RFC 2696 §3).
				paging.PagingSize = 0
				p.counters.Searches.Add(1)
				c.Search(&r)
				return err
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

func isDial(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}
