package ldap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/internal/testldap"
)

// Cases written from the mutation run (issue 15, see MUTANTS.md), white-box where the
// behaviour is the pool's own choice.

// Zero (or negative) settings take the documented defaults. A zero write concurrency or pool
// size would make every write or read wait forever, a zero timeout would let a hung server
// hang the run.
func TestDefaults(t *testing.T) {
	for _, in := range []connSettings{{}, {PoolSize: -1, Timeout: -time.Second}} {
		c := in.withDefaults()
		if c.PoolSize != 2 || c.Timeout != 30*time.Second || c.PageSize != 500 {
			t.Errorf("%+v.withDefaults() = pool %d, timeout %v, page %d; want 2, 30s, 500", in, c.PoolSize, c.Timeout, c.PageSize)
		}
	}
	if c := (connSettings{PoolSize: 3, Timeout: time.Second, PageSize: 7}).withDefaults(); c.PoolSize != 3 || c.Timeout != time.Second || c.PageSize != 7 {
		t.Errorf("set values replaced: %+v", c)
	}
	for _, n := range []int{0, -1} {
		if o := (Options{WriteConcurrency: n}).withDefaults(); o.WriteConcurrency != 4 || o.Getenv == nil {
			t.Errorf("WriteConcurrency %d: %d, want 4", n, o.WriteConcurrency)
		}
	}
	if o := (Options{WriteConcurrency: 9}).withDefaults(); o.WriteConcurrency != 9 {
		t.Errorf("WriteConcurrency 9 replaced by %d", o.WriteConcurrency)
	}
}

// A plain operation takes the least busy slot, a connected one on a tie: the pool opens a
// second connection only when the first is in use.
func TestAcquirePicksTheLeastBusySlot(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{})
	p, err := newPool(connSettings{URI: srv.URL, BindDN: srv.BindDN, Password: srv.Password, PoolSize: 2}, &poolCounters{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	conn := srv.Dial(t)
	defer conn.Close()
	a, b := p.slots[0], p.slots[1]
	for _, tc := range []struct {
		name           string
		usersA, usersB int
		connA, connB   bool
		want           *slot
	}{
		{"tie, only the first connected", 0, 0, true, false, a},
		{"tie, only the second connected", 0, 0, false, true, b},
		{"tie, both connected", 0, 0, true, true, a},
		{"second less busy", 2, 1, true, true, b},
		{"first less busy", 1, 2, true, true, a},
		{"less busy but not connected", 1, 0, true, false, b},
	} {
		a.users, b.users = tc.usersA, tc.usersB
		a.conn, b.conn = nil, nil
		if tc.connA {
			a.conn = conn
		}
		if tc.connB {
			b.conn = conn
		}
		// A plain acquire never waits: the deadline turns a pool that would wait forever
		// into a failure instead of a hung test.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, _, err := p.acquire(ctx, false)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if s != tc.want {
			t.Errorf("%s: took the other slot", tc.name)
		}
		p.release(s, false)
		if a.users != tc.usersA || b.users != tc.usersB {
			t.Errorf("%s: users %d %d after release, want %d %d", tc.name, a.users, b.users, tc.usersA, tc.usersB)
		}
		// A slot dialled by acquire is not the shared conn: close it.
		for _, s := range p.slots {
			if s.conn != nil && s.conn != conn {
				s.conn.Close()
			}
		}
	}
	a.conn, b.conn = nil, nil
}

// An operation broken by the network is run once more on a fresh connection; one the server
// refused is not run again, and is not taken for a network failure (a write it refused is
// Failed, not Unknown).
func TestRunRetriesOnceOnANewConnection(t *testing.T) {
	ctx := context.Background()
	search := func(c *goldap.Conn) error {
		_, err := c.Search(goldap.NewSearchRequest("dc=example,dc=net", goldap.ScopeBaseObject, goldap.NeverDerefAliases, 0, 0, false, "(objectClass=*)", nil, nil))
		return err
	}

	// A server that accepts connections and never answers: the request times out (a network
	// error), the broken connection is closed and the retry dials a new one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	c := &poolCounters{}
	p, err := newPool(connSettings{URI: "ldap://" + ln.Addr().String(), PoolSize: 1, Timeout: 300 * time.Millisecond}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	err = p.do(ctx, search)
	if !isNetwork(err) {
		t.Fatalf("hung server: %v, want a network error", err)
	}
	if n, r := accepted.Load(), c.Retries.Load(); n != 2 || r != 1 {
		t.Errorf("hung server: %d connections, %d retries; want 2 and 1", n, r)
	}

	// Nobody listening: two attempts, one retry.
	c = &poolCounters{}
	dead, _ := newPool(connSettings{URI: "ldap://127.0.0.1:1", PoolSize: 1}, c)
	if err := dead.do(ctx, search); err == nil {
		t.Fatal("no server: no error")
	}
	if r := c.Retries.Load(); r != 1 {
		t.Errorf("no server: %d retries, want 1", r)
	}

	// A live server: an operation that succeeds or that the server refuses runs once.
	srv := testldap.Start(t, testldap.Options{})
	c = &poolCounters{}
	live, _ := newPool(connSettings{URI: srv.URL, BindDN: srv.BindDN, Password: srv.Password}, c)
	defer live.close()
	if err := live.do(ctx, search); err != nil {
		t.Fatal(err)
	}
	refused := live.do(ctx, func(c *goldap.Conn) error { return c.Del(goldap.NewDelRequest("cn=nobody,"+srv.Suffix, nil)) })
	if !goldap.IsErrorWithCode(refused, goldap.LDAPResultNoSuchObject) || isNetwork(refused) {
		t.Errorf("refused delete: %v (network: %v), want no such object, not a network error", refused, isNetwork(refused))
	}
	if r, n := c.Retries.Load(), c.Connections.Load(); r != 0 || n != 1 {
		t.Errorf("live server: %d retries, %d connections; want 0 and 1", r, n)
	}
}

func TestIsNetwork(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{goldap.NewError(goldap.ErrorNetwork, errors.New("connection closed")), true},
		{fmt.Errorf("wrapped: %w", goldap.NewError(goldap.ErrorNetwork, errors.New("x"))), true},
		{goldap.NewError(goldap.LDAPResultNoSuchObject, errors.New("no such object")), false},
		{goldap.NewError(goldap.LDAPResultUnwillingToPerform, errors.New("no")), false},
		{&net.OpError{Op: "read", Err: errors.New("reset")}, true},
		{errors.New("other"), false},
	} {
		if got := isNetwork(tc.err); got != tc.want {
			t.Errorf("isNetwork(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
