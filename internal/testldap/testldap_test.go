package testldap

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

const numPeople = 3000

// peopleLDIF generates n inetOrgPerson entries; the first carries the
// auxiliary entitlementsPerson class so schema loading is covered too.
func peopleLDIF(suffix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "dn: uid=user%04d,ou=People,%s\nobjectClass: inetOrgPerson\n", i, suffix)
		fmt.Fprintf(&b, "uid: user%04d\ncn: User %d\nsn: %d\nmail: user%04d@example.net\n\n", i, i, i, i)
	}
	return b.String()
}

// TestServer exercises everything the integration tests of the entitlements
// tool rely on, against one TLS-enabled server to keep the runtime low.
func TestServer(t *testing.T) {
	t0 := time.Now()
	s := Start(t, Options{TLS: true})
	t.Logf("Start took %s (%s, %s)", time.Since(t0), s.URL, s.TLSURL)

	for _, dn := range []string{s.Suffix, "ou=People," + s.Suffix, "ou=Groups," + s.Suffix} {
		if s.Entry(t, dn) == nil {
			t.Fatalf("base entry %s missing", dn)
		}
	}
	if e := s.Entry(t, "uid=nobody,ou=People,"+s.Suffix); e != nil {
		t.Fatalf("Entry of a missing DN = %v, want nil", e.DN)
	}

	t0 = time.Now()
	s.Add(t, peopleLDIF(s.Suffix, numPeople))
	t.Logf("adding %d people took %s", numPeople, time.Since(t0))

	t.Run("PagedSearch", func(t *testing.T) {
		c := s.Dial(t)
		ctrl := ldap.NewControlPaging(500)
		req := ldap.NewSearchRequest("ou=People,"+s.Suffix, ldap.ScopeSingleLevel, ldap.NeverDerefAliases,
			0, 0, false, "(objectClass=inetOrgPerson)", []string{"uid"}, []ldap.Control{ctrl})
		total, pages := 0, 0
		for {
			res, err := c.Search(req)
			if err != nil {
				t.Fatalf("paged search page %d: %v", pages+1, err)
			}
			pages++
			if len(res.Entries) > 500 {
				t.Fatalf("page %d has %d entries, want <= 500", pages, len(res.Entries))
			}
			total += len(res.Entries)
			resp, ok := ldap.FindControl(res.Controls, ldap.ControlTypePaging).(*ldap.ControlPaging)
			if !ok {
				t.Fatalf("page %d: server returned no paged-results control", pages)
			}
			if len(resp.Cookie) == 0 {
				break
			}
			ctrl.SetCookie(resp.Cookie)
			if pages > numPeople/500+1 {
				t.Fatalf("paging does not terminate after %d pages", pages)
			}
		}
		if total != numPeople || pages != numPeople/500 {
			t.Fatalf("paged search: %d entries in %d pages, want %d in %d", total, pages, numPeople, numPeople/500)
		}

		// sizelimit unlimited: an anonymous, non-paged search gets all
		// entries instead of slapd's default 500.
		anon, err := s.dialBind(s.URL, false, opTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer anon.Close()
		res, err := anon.Search(ldap.NewSearchRequest("ou=People,"+s.Suffix, ldap.ScopeSingleLevel,
			ldap.NeverDerefAliases, 0, 0, false, "(uid=*)", []string{"1.1"}, nil))
		if err != nil {
			t.Fatalf("anonymous unpaged search: %v", err)
		}
		if len(res.Entries) != numPeople {
			t.Fatalf("anonymous unpaged search: %d entries, want %d", len(res.Entries), numPeople)
		}
		if got := len(s.Search(t, s.Suffix, "(objectClass=inetOrgPerson)", "uid")); got != numPeople {
			t.Fatalf("Search helper: %d entries, want %d", got, numPeople)
		}
	})

	t.Run("LDAPS", func(t *testing.T) {
		if s.CAFile == "" || !strings.HasPrefix(s.TLSURL, "ldaps://127.0.0.1:") {
			t.Fatalf("TLS fields not set: CAFile=%q TLSURL=%q", s.CAFile, s.TLSURL)
		}
		for _, url := range []string{s.TLSURL, strings.Replace(s.TLSURL, "127.0.0.1", "localhost", 1)} {
			cfg := caOnlyConfig(t, s.CAFile) // no ServerName: taken from the URL
			c, err := ldap.DialURL(url, ldap.DialWithTLSConfig(cfg))
			if err != nil {
				t.Fatalf("dial %s: %v", url, err)
			}
			if err := c.Bind(s.BindDN, s.Password); err != nil {
				t.Fatalf("bind over %s: %v", url, err)
			}
			if _, ok := c.TLSConnectionState(); !ok {
				t.Fatalf("%s: connection is not TLS", url)
			}
			c.Close()
		}
		// Without the CA the handshake must fail: the server cert is real.
		if c, err := ldap.DialURL(s.TLSURL); err == nil {
			c.Close()
			t.Fatal("ldaps with the system roots unexpectedly verified the throwaway CA")
		}
	})

	t.Run("StartTLS", func(t *testing.T) {
		c, err := s.dialBind(s.URL, false, opTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.StartTLS(s.TLSConfig()); err != nil {
			t.Fatalf("StartTLS: %v", err)
		}
		if st, ok := c.TLSConnectionState(); !ok || !st.HandshakeComplete {
			t.Fatal("StartTLS did not complete a handshake")
		}
		if err := c.Bind(s.BindDN, s.Password); err != nil {
			t.Fatalf("bind after StartTLS: %v", err)
		}
	})

	personDN := "uid=user0001,ou=People," + s.Suffix
	groups := []string{"cn=shell5,ou=Groups," + s.Suffix, "cn=shell3,ou=Groups," + s.Suffix}
	t.Run("ShellEntitlements", func(t *testing.T) {
		c := s.Dial(t)
		m := ldap.NewModifyRequest(personDN, nil)
		m.Add("objectClass", []string{"entitlementsPerson"})
		m.Add("shellentitlements", groups)
		if err := c.Modify(m); err != nil {
			t.Fatalf("set shellentitlements: %v", err)
		}
		e := s.Entry(t, personDN)
		if got := e.GetAttributeValues("shellentitlements"); strings.Join(got, "|") != strings.Join(groups, "|") {
			t.Fatalf("shellentitlements = %q, want %q", got, groups)
		}
		// DN matching: deleting by a differently-cased value works.
		del := ldap.NewModifyRequest(personDN, nil)
		del.Delete("shellentitlements", []string{strings.ToUpper(groups[1])})
		if err := c.Modify(del); err != nil {
			t.Fatalf("delete shellentitlements value by DN match: %v", err)
		}
		if got := s.Entry(t, personDN).GetAttributeValues("shellentitlements"); len(got) != 1 || got[0] != groups[0] {
			t.Fatalf("after delete: %q, want [%s]", got, groups[0])
		}
		// Without the auxiliary class the attribute is a schema violation,
		// i.e. the schema is really enforced.
		bad := ldap.NewModifyRequest("uid=user0002,ou=People,"+s.Suffix, nil)
		bad.Add("shellentitlements", groups[:1])
		if err := c.Modify(bad); !ldap.IsErrorWithCode(err, ldap.LDAPResultObjectClassViolation) {
			t.Fatalf("shellentitlements without entitlementsPerson: err = %v, want objectClassViolation", err)
		}
		// Persons created with the class via LDIF work too.
		s.Add(t, `
			dn: uid=aux,ou=People,`+s.Suffix+`
			objectClass: inetOrgPerson
			objectClass: entitlementsPerson
			uid: aux
			cn: Aux
			sn: Aux
			shellentitlements: `+groups[0]+`
			shellentitlements: `+groups[1]+`
		`)
		if got := s.Search(t, s.Suffix, "(shellentitlements="+groups[1]+")", "uid"); len(got) != 1 {
			t.Fatalf("search by shellentitlements: %d entries, want 1", len(got))
		}
	})

	t.Run("KillRestart", func(t *testing.T) {
		c := s.Dial(t)
		s.Kill()
		if _, err := c.Search(ldap.NewSearchRequest(s.Suffix, ldap.ScopeBaseObject, ldap.NeverDerefAliases,
			0, 0, false, "(objectClass=*)", nil, nil)); err == nil {
			t.Fatal("search on a connection to a killed server succeeded")
		}
		if _, err := s.dialBind(s.URL, true, opTimeout); err == nil {
			t.Fatal("dial to a killed server succeeded")
		}
		url, tlsURL := s.URL, s.TLSURL
		t0 := time.Now()
		s.Restart(t)
		t.Logf("Restart took %s", time.Since(t0))
		if s.URL != url || s.TLSURL != tlsURL {
			t.Fatalf("Restart moved the server: %s %s -> %s %s", url, tlsURL, s.URL, s.TLSURL)
		}
		if got := len(s.Search(t, "ou=People,"+s.Suffix, "(objectClass=inetOrgPerson)", "1.1")); got != numPeople+1 {
			t.Fatalf("after Kill+Restart: %d people, want %d", got, numPeople+1)
		}
		if got := s.Entry(t, personDN).GetAttributeValues("shellentitlements"); len(got) != 1 {
			t.Fatalf("after Kill+Restart: shellentitlements = %q", got)
		}
		// Graceful Stop + Restart also keeps the data, and TLS still works.
		s.Stop()
		s.Restart(t)
		if s.Entry(t, "uid=aux,ou=People,"+s.Suffix) == nil {
			t.Fatal("after Stop+Restart: uid=aux missing")
		}
		tc, err := s.dialBind(s.TLSURL, true, opTimeout)
		if err != nil {
			t.Fatalf("ldaps after restart: %v", err)
		}
		tc.Close()
	})
}

// TestOptions covers a non-default suffix, initial LDIF, extra schema and a
// plain (no TLS) server.
func TestOptions(t *testing.T) {
	s := Start(t, Options{
		Suffix: "o=kittens",
		ExtraSchema: `attributetype ( 2.25.168010142701851684884953114343621723593.100 NAME 'testColor'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 2.25.168010142701851684884953114343621723593.101 NAME 'testColored' AUXILIARY MAY testColor )`,
		LDIF: `
# a group and a colored person
dn: cn=shell5,ou=Groups,o=kittens
objectClass: groupOfNames
cn: shell5
member: uid=blackmanx,ou=People,o=kittens

dn: uid=blackmanx,ou=People,o=kittens
objectClass: inetOrgPerson
objectClass: testColored
uid: blackmanx
cn: Black
 manx
sn:: TWFueA==
testColor: black
`,
	})
	if s.TLSURL != "" || s.CAFile != "" || s.TLSConfig() != nil {
		t.Fatalf("TLS fields set without Options.TLS: %q %q", s.TLSURL, s.CAFile)
	}
	if s.BindDN != "cn=admin,o=kittens" {
		t.Fatalf("BindDN = %q", s.BindDN)
	}
	e := s.Entry(t, "uid=blackmanx,ou=People,o=kittens")
	if e == nil {
		t.Fatal("LDIF entry missing")
	}
	if cn, sn, color := e.GetAttributeValue("cn"), e.GetAttributeValue("sn"), e.GetAttributeValue("testColor"); cn != "Blackmanx" || sn != "Manx" || color != "black" {
		t.Fatalf("cn=%q sn=%q testColor=%q", cn, sn, color)
	}
	if got := s.Search(t, "o=kittens", "(member=uid=blackmanx,ou=People,o=kittens)", "cn"); len(got) != 1 {
		t.Fatalf("group search: %d entries", len(got))
	}
	// Restart without a prior Stop/Kill stops the running server first.
	s.Restart(t)
	if s.Entry(t, "cn=shell5,ou=Groups,o=kittens") == nil {
		t.Fatal("group missing after Restart")
	}
}
