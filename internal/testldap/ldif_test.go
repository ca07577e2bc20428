package testldap

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseLDIF(t *testing.T) {
	reqs, err := parseLDIF("version: 1\n\n# comment\n continued comment\ndn: cn=a,dc=x\r\nchangetype: add\r\nobjectClass: top\nobjectClass: person\ncn:  a\nsn:: Zm9v\ndescription: long\n  value\n\n\n\t\ndn: cn=b,dc=x\nobjectClass: person\ncn: b\nsn: b")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("got %d records", len(reqs))
	}
	a := reqs[0]
	if a.DN != "cn=a,dc=x" {
		t.Fatalf("DN %q", a.DN)
	}
	got := map[string][]string{}
	for _, at := range a.Attributes {
		got[at.Type] = at.Vals
	}
	want := map[string][]string{"objectClass": {"top", "person"}, "cn": {"a"}, "sn": {"foo"}, "description": {"long value"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("attrs %v, want %v", got, want)
	}

	// Indented raw strings are dedented by their common tabs.
	reqs, err = parseLDIF("\n\t\tdn: cn=c,dc=x\n\t\tcn: c\n\t\t  folded\n\t\t\n")
	if err != nil || len(reqs) != 1 || reqs[0].Attributes[0].Vals[0] != "c folded" {
		t.Fatalf("dedent: %v %+v", err, reqs)
	}

	for _, bad := range []string{
		"cn: no dn\n",
		"dn: cn=a\nchangetype: modify\nreplace: cn\n",
		"dn: cn=a\njpegPhoto:< file:///etc/passwd\n",
		"dn: cn=a\nsn:: !!!\n",
		"dn: cn=a\n",
		" leading continuation\n",
	} {
		if _, err := parseLDIF(bad); err == nil {
			t.Errorf("parseLDIF(%q) succeeded, want error", bad)
		}
	}
}

func TestSuffixLDIF(t *testing.T) {
	for suffix, want := range map[string]string{
		"dc=example,dc=net": "objectClass: dcObject",
		"o=kittens":         "objectClass: organization",
		"ou=x,dc=y":         "objectClass: organizationalUnit",
	} {
		got, err := suffixLDIF(suffix)
		if err != nil || !strings.Contains(got, want) {
			t.Errorf("suffixLDIF(%q) = %q, %v", suffix, got, err)
		}
	}
	if _, err := suffixLDIF("cn=foo"); err == nil {
		t.Error("suffixLDIF(cn=foo) succeeded")
	}
}

// caOnlyConfig builds a client config from the CAFile alone, as code under
// test would, rather than using Server.TLSConfig.
func caOnlyConfig(t *testing.T, caFile string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificates in %s", caFile)
	}
	return &tls.Config{RootCAs: pool}
}
