package dn

import (
	"strings"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"CN=Foo, OU=Groups ,dc=Example,dc=net", "cn=foo,ou=groups,dc=example,dc=net"},
		{`cn=a\,b,ou=x`, `cn=a\,b,ou=x`},
		{`cn=a\2Cb,ou=x`, `cn=a\,b,ou=x`},
		{`cn=a\2cb,ou=x`, `cn=a\,b,ou=x`},
		{`uid=b+cn=A,ou=x`, `cn=a+uid=b,ou=x`},
		{`uid=x\3Dy,ou=x`, `uid=x\=y,ou=x`},
		{`uid=x=y,ou=x`, `uid=x\=y,ou=x`},
		{`uid=back\5Cslash,ou=x`, `uid=back\\slash,ou=x`},
		{`uid=\23hash,ou=x`, `uid=\#hash,ou=x`},
		{`uid=\ lead,ou=x`, `uid=\ lead,ou=x`},
		{`uid=\C3\9Cn,ou=x`, `uid=ün,ou=x`},
		{"uid=Ün,ou=x", `uid=ün,ou=x`},
		{"", ""},
		{"weird", "weird"},
		{" Weird ", "weird"},
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEqualMatchesGoLDAP pins Equal to go-ldap's DN.EqualFold on pairs that differ in every
// way a DN can be respelled.
func TestEqualMatchesGoLDAP(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`cn=a\,b,ou=x`, `cn=a\2Cb,ou=x`, true},
		{`cn=a+uid=b,ou=x`, `uid=b+cn=a,ou=x`, true},
		{`CN=A , OU=X`, `cn=a,ou=x`, true},
		{`uid=quote\"d,ou=x`, `uid=quote\22d,ou=x`, true},
		{`uid=lt\<gt\>,ou=x`, `UID=LT\3cGT\3E,ou=x`, true},
		{`uid=p\+q,ou=x`, `uid=p+q=r,ou=x`, false},
		{`cn=a,ou=x`, `cn=a,ou=y`, false},
		{`cn=a,ou=x`, `cn=a,ou=x,dc=z`, false},
		{`cn=a+uid=b,ou=x`, `cn=a,ou=x`, false},
		{"uid=\u212Aelvin,ou=x", "uid=kelvin,ou=x", true},
	} {
		da, errA := goldap.ParseDN(tc.a)
		db, errB := goldap.ParseDN(tc.b)
		if errA != nil || errB != nil {
			t.Fatalf("go-ldap cannot parse %q / %q: %v %v", tc.a, tc.b, errA, errB)
		}
		if lib := da.EqualFold(db); lib != tc.want {
			t.Fatalf("go-ldap says %q ~ %q is %v; the table is wrong", tc.a, tc.b, lib)
		}
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%q, %q) = %v, want %v (as go-ldap's EqualFold)", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFirstValue(t *testing.T) {
	for _, tc := range []struct{ in, typ, want string }{
		{"uid=NEBELUNg,ou=People,dc=kittens,dc=net", "", "NEBELUNg"},
		{"uid= bob ,ou=x", "", "bob"},
		{`uid=a\,b,ou=x`, "", "a,b"},
		{`uid=a\2Cb,ou=x`, "", "a,b"},
		{`uid=x\3Dy,ou=x`, "", "x=y"},
		{`uid=p\2Bq,ou=x`, "", "p+q"},
		{`uid=back\5Cslash,ou=x`, "", `back\slash`},
		{`uid=quote\22d,ou=x`, "", `quote"d`},
		{`uid=lt\3Cgt\3E,ou=x`, "", "lt<gt>"},
		{`uid=\23hash,ou=x`, "", "#hash"},
		{`uid=trail\ ,ou=x`, "", "trail "},
		{`cn=Bob+uid=bob2,ou=x`, "", "Bob"},
		{`cn=Bob+uid=bob2,ou=x`, "UID", "bob2"},
		{`cn=Bob,ou=x`, "uid", "Bob"},
		{"plainuser", "", "plainuser"},
		{"uid=single", "", "uid=single"},
		{"no-equals,ou=x", "", "no-equals,ou=x"},
		// Not a DN (an unescaped '+' in a value): the reference's reading.
		{"cn=c++,ou=teams,dc=x", "", "c++"},
	} {
		if got := FirstValueOf(tc.in, tc.typ); got != tc.want {
			t.Errorf("FirstValueOf(%q, %q) = %q, want %q", tc.in, tc.typ, got, tc.want)
		}
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, v := range []string{"bob", "a,b+c", " lead", "trail ", "#hash", `q"<>;=\`, "x=y", "Ünïcode", "nul\x00", "in#side", "sp ace"} {
		s := "uid=" + EscapeValue(v) + ",ou=People,dc=x"
		d, err := goldap.ParseDN(s)
		if err != nil {
			t.Errorf("EscapeValue(%q) = %q: go-ldap cannot parse it: %v", v, s, err)
			continue
		}
		if got := d.RDNs[0].Attributes[0].Value; got != v {
			t.Errorf("EscapeValue(%q) round-trips to %q", v, got)
		}
		if got := FirstValue(s); got != v {
			t.Errorf("FirstValue(%q) = %q, want %q", s, got, v)
		}
	}
	for in, want := range map[string]string{
		"bob":     "bob",
		"a,b+c":   `a\,b\+c`,
		" lead":   `\ lead`,
		"trail ":  `trail\ `,
		"#hash":   `\#hash`,
		`q"<>;=\`: `q\"\<\>\;\=\\`,
		"":        "",
		"a b":     "a b",
		"a=b":     `a\=b`,
		"x\x00":   `x\00`,
		"in#side": "in#side",
		" ":       `\ `,
	} {
		if got := EscapeValue(in); got != want {
			t.Errorf("EscapeValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseStringParent(t *testing.T) {
	d, err := Parse(`ou=a\,b + cn=c, ou=Parent,dc=x`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.String(), `ou=a\,b+cn=c,ou=Parent,dc=x`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := d.Parent().String(), "ou=Parent,dc=x"; got != want {
		t.Errorf("Parent = %q, want %q", got, want)
	}
	if k, ok := ParentKey(`cn=x\,y,OU=P,dc=x`); !ok || k != "ou=p,dc=x" {
		t.Errorf("ParentKey = %q %v", k, ok)
	}
	if _, ok := ParentKey("dc=x"); ok {
		t.Error("a one-RDN DN has a parent key")
	}
	if _, err := Parse("cn=a,b"); err == nil {
		t.Error("Parse accepted an RDN without a type")
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{`cn=a\,b,ou=x`, `uid=b+cn=a,ou=x`, "weird", `cn=\23,ou=x`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Normalize(s)
		// A key is a fixed point once it parses: normalising twice changes nothing.
		if _, err := Parse(s); err == nil && !strings.ContainsRune(s, 0) {
			if k2 := Normalize(k); k2 != k {
				t.Errorf("Normalize(Normalize(%q)) = %q, want %q", s, k2, k)
			}
		}
		_ = FirstValue(s)
	})
}
