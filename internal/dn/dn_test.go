package dn

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"CN=Foo, OU=Groups ,dc=Example,dc=net": "cn=foo,ou=groups,dc=example,dc=net",
		"cn=a\\,b,ou=x":                        "cn=a\\,b,ou=x",
		"":                                     "",
		"weird":                                "weird",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitAndFirstValue(t *testing.T) {
	if got := Split(`cn=a\,b,ou=x,dc=y`); !slices.Equal(got, []string{`cn=a\,b`, "ou=x", "dc=y"}) {
		t.Errorf("Split = %q", got)
	}
	for in, want := range map[string]string{
		"uid=NEBELUNg,ou=People,dc=kittens,dc=net": "NEBELUNg",
		"uid= bob ,ou=x": "bob",
		"plainuser":      "plainuser",
		"no-equals,ou=x": "no-equals,ou=x",
	} {
		if got := FirstValue(in); got != want {
			t.Errorf("FirstValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeValue(t *testing.T) {
	for in, want := range map[string]string{
		"bob":     "bob",
		"a,b+c":   `a\,b\+c`,
		" lead":   `\ lead`,
		"trail ":  `trail\ `,
		"#hash":   `\#hash`,
		`q"<>;=\`: `q\"\<\>\;\=\\`,
	} {
		if got := EscapeValue(in); got != want {
			t.Errorf("EscapeValue(%q) = %q, want %q", in, got, want)
		}
	}
}
