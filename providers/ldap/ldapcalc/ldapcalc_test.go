package ldapcalc

import (
	"context"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/providers/ldap"
)

func TestOptions(t *testing.T) {
	reg := ldap.NewRegistry(ldap.Options{})
	defer reg.Close()
	opt := Options(reg, calc.Options{Types: backends.Types()})
	if opt.People == nil || opt.LDAPGroupsFor == nil {
		t.Fatal("people loader or LDAP group reader not set")
	}
	// A config without the ldap_group extra needs no reader.
	if rd, err := opt.LDAPGroupsFor(&config.Config{}); rd != nil || err != nil {
		t.Errorf("reader %v, err %v", rd, err)
	}
	// Fields the caller set are kept.
	mine := func(context.Context, *config.PeopleSource) ([]people.Person, error) { return nil, nil }
	if got := Options(reg, calc.Options{Types: backends.Types(), People: mine}); got.People == nil || got.LDAPGroupsFor == nil {
		t.Error("lost a field")
	}
}
