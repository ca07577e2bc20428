package testldap

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// TestDS checks what the provider's 389 tests rely on: the base tree, the root DN, a size
// limit that an ordinary bind meets and paging gets past, the answer to a paged search of a
// base that does not exist, and Restart keeping the data.
func TestDS(t *testing.T) {
	t0 := time.Now()
	s := StartDS(t, DSOptions{Suffix: "dc=kittens,dc=net", SizeLimit: 20, LDIF: `dn: uid=svc,ou=People,dc=kittens,dc=net
objectClass: account
objectClass: simpleSecurityObject
uid: svc
userPassword: svc-password
`})
	t.Logf("StartDS took %s (%s)", time.Since(t0), s.URL)
	aci := ldap.NewModifyRequest(s.Suffix, nil)
	aci.Add("aci", []string{`(targetattr="*")(version 3.0; acl "svc"; allow (all) userdn="ldap:///uid=svc,ou=People,dc=kittens,dc=net";)`})
	if err := s.Dial(t).Modify(aci); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{s.Suffix, "ou=People," + s.Suffix, "ou=Groups," + s.Suffix} {
		if s.Entry(t, d) == nil {
			t.Fatalf("base entry %s missing", d)
		}
	}
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "dn: cn=g%02d,ou=Groups,%s\nobjectClass: groupOfUniqueNames\ncn: g%02d\n\n", i, s.Suffix, i)
	}
	s.Add(t, b.String())

	svc, err := ldap.DialURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Bind("uid=svc,ou=People,"+s.Suffix, "svc-password"); err != nil {
		t.Fatal(err)
	}
	oneLevel := func(base string, ctrls ...ldap.Control) *ldap.SearchRequest {
		return ldap.NewSearchRequest(base, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0, false, "(cn=*)", []string{"cn"}, ctrls)
	}
	groups := "ou=Groups," + s.Suffix
	if _, err := svc.Search(oneLevel(groups)); !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		t.Errorf("plain search of 50 entries with a size limit of 20: %v, want Size Limit Exceeded", err)
	}
	if res, err := svc.SearchWithPaging(oneLevel(groups), 10); err != nil || len(res.Entries) != 50 {
		t.Errorf("paged search, pages of 10: %v entries, %v; want 50", entriesOf(res), err)
	}
	if res, err := s.dialAndSearch(oneLevel(groups)); err != nil || len(res.Entries) != 50 {
		t.Errorf("the root DN meets no limit: %v entries, %v; want 50", entriesOf(res), err)
	}

	// The behaviour the provider has to work around: a paged search of a base that does not
	// exist succeeds with no entries, while a plain one says No Such Object.
	missing := "ou=nope," + s.Suffix
	if res, err := svc.SearchWithPaging(oneLevel(missing), 10); err != nil || len(res.Entries) != 0 {
		t.Errorf("paged search of a missing base: %v entries, %v; 389 2.3 answers success with none", entriesOf(res), err)
	}
	if _, err := svc.Search(oneLevel(missing)); !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		t.Errorf("plain search of a missing base: %v, want No Such Object", err)
	}

	s.Restart(t)
	if got := len(s.Search(t, groups, "(objectClass=groupOfUniqueNames)", "cn")); got != 50 {
		t.Fatalf("after Restart: %d groups, want 50", got)
	}
}

func entriesOf(res *ldap.SearchResult) int {
	if res == nil {
		return -1
	}
	return len(res.Entries)
}

// dialAndSearch runs one plain search as the administrator.
func (s *Server) dialAndSearch(req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	c, err := s.dialBind(s.adminURL(), true, opTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Search(req)
}

func TestDSELDIF(t *testing.T) {
	tmpl := "dn: cn=config\nnsslapd-port: %ds_port%\nnsslapd-rootpw: %ds_passwd%\n\n" +
		"dn: cn=config,cn=ldbm database,cn=plugins,cn=config\nnsslapd-directory: %db_dir%\n\n"
	out, err := dseLDIF(tmpl, dsParams{dir: "/d", port: 1234, suffix: "dc=a,dc=b", rootDN: "cn=dm", rootPW: "pw", salt: []byte("12345678"), sizeLimit: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"dn: cn=config\nnsslapd-listenhost: 127.0.0.1\n",
		"nsslapd-sizelimit: 7\nnsslapd-port: 1234\n",
		"nsslapd-rootpw: {SSHA512}",
		"dn: cn=config,cn=ldbm database,cn=plugins,cn=config\nnsslapd-cache-autosize: 0\n",
		"nsslapd-directory: /d/db\n",
		"\n\ndn: cn=userRoot,cn=ldbm database,cn=plugins,cn=config\n",
		"nsslapd-suffix: dc=a,dc=b\n",
		`dn: cn=dc\=a\,dc\=b,cn=mapping tree,cn=config`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dse.ldif lacks %q:\n%s", want, out)
		}
	}
	// 389 rejects an LDIF with two blank lines in a row ("Entry has no dn").
	if strings.Contains(out, "\n\n\n") {
		t.Errorf("dse.ldif has an empty entry:\n%s", out)
	}
	if _, err := dseLDIF(tmpl+"x: %new_thing%\n", dsParams{}); err == nil || !strings.Contains(err.Error(), "%new_thing%") {
		t.Errorf("unknown placeholder: %v", err)
	}
	if _, err := dseLDIF("dn: cn=other\n", dsParams{}); err == nil {
		t.Error("a template without cn=config was accepted")
	}
	// {SSHA512} of "pw" with salt "12345678", as 389's pwdhash computes it.
	if got, _ := ssha512("pw", []byte("12345678")); !strings.HasPrefix(got, "{SSHA512}") || len(got) != len("{SSHA512}")+96 {
		t.Errorf("ssha512 = %q", got)
	}
}
