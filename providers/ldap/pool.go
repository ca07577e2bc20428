// Package ldap is the LDAP provider of entitlements-go (github.com/go-ldap/ldap/v3): groups
// of `ldap` OUs (groupOfUniqueNames, groupOfNames, posixGroup), missing OUs created on demand,
// the member_of person attribute, the LDAP people source and the reader behind ldap_group
// rules. It keeps a small pool of bound connections for the whole run, reads each managed
// base with one search, and remembers which bases exist.
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/entitlements-go/entitlements/internal/safefile"
	goldap "github.com/go-ldap/ldap/v3"
)

// ConnConfig is how to reach and bind to one LDAP server.
type ConnConfig struct {
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

func (c ConnConfig) withDefaults() ConnConfig {
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
func (c ConnConfig) key() string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%v\x00%v", c.URI, c.BindDN, c.Password, c.CAFile, c.InsecureSkipVerify, c.StartTLS)
}

// Counters of one pool. Read them with Snapshot.
type Counters struct {
	Searches, Adds, Modifies, Deletes, Connections, Binds, Retries atomic.Int64
}

// Snapshot returns the counters as a map (the form providers.Counter reports).
func (c *Counters) Snapshot() map[string]int64 {
	return map[string]int64{
		"searches": c.Searches.Load(), "adds": c.Adds.Load(), "modifies": c.Modifies.Load(),
		"deletes": c.Deletes.Load(), "connections": c.Connections.Load(), "binds": c.Binds.Load(),
		"retries": c.Retries.Load(),
	}
}

// pool hands out bound connections round-robin. go-ldap's Conn multiplexes requests by
// message ID, so several goroutines can use one connection; each connection is dialled and
// bound once, before anyone else sees it, and is redialled lazily when it breaks (servers
// close idle connections during long runs).
type pool struct {
	cfg      ConnConfig
	tls      *tls.Config
	counters *Counters

	slots []slot
	next  atomic.Uint64
}

// slot holds one connection. Its mutex serialises (re)dialling, so concurrent users of an
// empty slot wait for one dial instead of each opening a connection.
type slot struct {
	mu   sync.Mutex
	conn *goldap.Conn
}

func newPool(cfg ConnConfig, counters *Counters) (*pool, error) {
	cfg = cfg.withDefaults()
	u, err := url.Parse(cfg.URI)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return nil, fmt.Errorf("invalid ldap_uri %q (expected ldap://host:port or ldaps://host:port)", cfg.URI)
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
	return &pool{cfg: cfg, tls: tc, counters: counters, slots: make([]slot, cfg.PoolSize)}, nil
}

// get returns a live bound connection, dialling one if its slot is empty or broken.
func (p *pool) get(ctx context.Context) (*goldap.Conn, error) {
	s := &p.slots[(p.next.Add(1)-1)%uint64(len(p.slots))]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.IsClosing() {
		return s.conn, nil
	}
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.conn = c
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
		return nil, fmt.Errorf("connecting to %s: %w", p.cfg.URI, err)
	}
	p.counters.Connections.Add(1)
	c.SetTimeout(p.cfg.Timeout)
	if p.cfg.StartTLS {
		if err := c.StartTLS(p.tls); err != nil {
			c.Close()
			return nil, fmt.Errorf("StartTLS with %s: %w", p.cfg.URI, err)
		}
	}
	if p.cfg.BindDN != "" {
		p.counters.Binds.Add(1)
		if err := c.Bind(p.cfg.BindDN, p.cfg.Password); err != nil {
			c.Close()
			return nil, fmt.Errorf("binding to %s as %s: %w", p.cfg.URI, p.cfg.BindDN, err)
		}
	}
	return c, nil
}

func (p *pool) close() {
	for i := range p.slots {
		s := &p.slots[i]
		s.mu.Lock()
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
		s.mu.Unlock()
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

// do runs op on a pooled connection. After a broken connection it redials and runs op again
// once: callers only pass operations that are safe to repeat (reads, whole-attribute
// replaces, adds/deletes whose "already done" answer they map to success).
func (p *pool) do(ctx context.Context, op func(*goldap.Conn) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			p.counters.Retries.Add(1)
		}
		var c *goldap.Conn
		c, err = p.get(ctx)
		if err != nil {
			if isNetwork(err) || isDial(err) {
				continue
			}
			return err
		}
		err = op(c)
		if err == nil || !isNetwork(err) {
			return err
		}
		c.Close()
	}
	return err
}

func isDial(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}
