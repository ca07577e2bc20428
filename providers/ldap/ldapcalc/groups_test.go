package ldapcalc

import (
	"context"
	"slices"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers/ldap"
)

// The adapter hands calc the groups that exist, keyed and named by the DN asked, and the
// reader's error (never an empty answer that would read as "no such group").
func TestGroupsReadLDAPGroups(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{LDIF: "dn: cn=staff,ou=Groups,dc=example,dc=net\nobjectClass: groupOfUniqueNames\ncn: staff\nuniqueMember: uid=alice,ou=People,dc=example,dc=net\n"})
	settings := func(uri string) config.Value {
		t.Helper()
		v, err := config.ParseValue("ldap_uri: " + uri + "\nldap_binddn: " + srv.BindDN + "\nldap_bindpw: " + srv.Password + "\n")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	reg := ldap.NewRegistry(ldap.Options{})
	defer reg.Close()
	staff, nope := "cn=staff,ou=Groups,dc=example,dc=net", "cn=nope,ou=Groups,dc=example,dc=net"
	got, err := Groups(reg.GroupReader(settings(srv.URL))).ReadLDAPGroups(context.Background(), []string{staff, nope})
	if err != nil {
		t.Fatal(err)
	}
	if g := got[staff]; len(got) != 1 || g == nil || g.DN != staff || !slices.Equal(g.Attrs["uniquemember"], []string{"uid=alice,ou=People,dc=example,dc=net"}) {
		t.Errorf("groups %+v", got)
	}
	got, err = Groups(reg.GroupReader(settings("ldap://127.0.0.1:1"))).ReadLDAPGroups(context.Background(), []string{staff})
	if err == nil || got != nil {
		t.Errorf("server down: %v, %v; want an error", got, err)
	}
}
