package ldap

import (
	"context"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/internal/testldap"
)

// Cases written from the mutation run (issue 15, see MUTANTS.md), white-box where the
// behaviour is the pool's own choice.

// Zero (or negative) settings take the documented defaults. A zero write concurrency or pool
// size would make every write or read wait forever, a zero timeout would let a hung server
// hang the run.
func TestDefaults(t *testing.T) {
	for _, in := range []ConnConfig{{}, {PoolSize: -1, Timeout: -time.Second}} {
		c := in.withDefaults()
		if c.PoolSize != 2 || c.Timeout != 30*time.Second || c.PageSize != 500 {
			t.Errorf("%+v.withDefaults() = pool %d, timeout %v, page %d; want 2, 30s, 500", in, c.PoolSize, c.Timeout, c.PageSize)
		}
	}
	if c := (ConnConfig{PoolSize: 3, Timeout: time.Second, PageSize: 7}).withDefaults(); c.PoolSize != 3 || c.Timeout != time.Second || c.PageSize != 7 {
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
	p, err := newPool(ConnConfig{URI: srv.URL, BindDN: srv.BindDN, Password: srv.Password, PoolSize: 2}, &Counters{})
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
		s, _, err := p.acquire(context.Background(), false)
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
