package testldap

import (
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// TestSamba checks what the provider's AD tests rely on: the domain's base tree, AD's refusal
// of simple binds in clear text, binds over LDAPS and StartTLS with the throwaway CA, AD
// groups, and Restart.
func TestSamba(t *testing.T) {
	t0 := time.Now()
	s := StartSamba(t, SambaOptions{LDIF: `dn: CN=ops,OU=Groups,DC=example,DC=net
objectClass: group
sAMAccountName: ops
`})
	t.Logf("StartSamba took %s (%s, %s)", time.Since(t0), s.URL, s.TLSURL)
	if s.Suffix != "DC=example,DC=net" || !strings.HasPrefix(s.BindDN, "CN=Administrator,CN=Users,") {
		t.Fatalf("Suffix %q, BindDN %q", s.Suffix, s.BindDN)
	}
	for _, d := range []string{s.Suffix, "OU=People," + s.Suffix, "OU=Groups," + s.Suffix} {
		if s.Entry(t, d) == nil {
			t.Fatalf("base entry %s missing", d)
		}
	}
	// groupType defaults to a global security group (0x80000002).
	if e := s.Entry(t, "CN=ops,OU=Groups,"+s.Suffix); e == nil || e.GetAttributeValue("groupType") != "-2147483646" {
		t.Fatalf("AD group: %v", e)
	}

	plain, err := ldap.DialURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Bind(s.BindDN, s.Password); !ldap.IsErrorWithCode(err, ldap.LDAPResultStrongAuthRequired) {
		t.Errorf("simple bind in clear text: %v, want Strong(er) authentication required", err)
	}
	if err := plain.StartTLS(s.TLSConfig()); err != nil {
		t.Fatalf("StartTLS: %v", err)
	}
	if err := plain.Bind(s.BindDN, s.Password); err != nil {
		t.Errorf("bind after StartTLS: %v", err)
	}
	c, err := ldap.DialURL(s.TLSURL, ldap.DialWithTLSConfig(caOnlyConfig(t, s.CAFile)))
	if err != nil {
		t.Fatalf("ldaps with the CA file (server name from the URL): %v", err)
	}
	c.Close()
	if c, err := ldap.DialURL(s.TLSURL); err == nil {
		c.Close()
		t.Error("ldaps with the system roots verified the throwaway CA")
	}

	s.Restart(t)
	if s.Entry(t, "CN=ops,OU=Groups,"+s.Suffix) == nil {
		t.Fatal("group missing after Restart")
	}
}
