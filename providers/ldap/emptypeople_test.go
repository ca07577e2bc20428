package ldap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/testldap"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// Issue 10 item 7: an LDAP people base that exists but holds nobody fails the load (every
// group of every target would otherwise lose every member), unless explicitly allowed.
func TestEmptyLDAPPeopleBase(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{Suffix: "dc=kittens,dc=net"}) // ou=People exists, empty
	dir := copyCase(t, "acc_initial_run", srv, srv.URL, "")
	t.Chdir(dir)
	for _, allow := range []bool{false, true} {
		reg := ldapprov.NewRegistry(ldapprov.Options{})
		_, err := calc.Load(context.Background(), "config.yaml", calc.Options{Types: backends.Types(), Now: now, People: reg.PeopleLoader(), AllowEmptyPeople: allow})
		reg.Close()
		if allow {
			// The calculation then goes on (and fails for its own reasons only, never ErrNoPeople).
			if errors.Is(err, calc.ErrNoPeople) {
				t.Errorf("allowed: %v", err)
			}
			continue
		}
		if !errors.Is(err, calc.ErrNoPeople) {
			t.Fatalf("err = %v, want ErrNoPeople", err)
		}
	}
}
