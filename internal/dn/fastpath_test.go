package dn

import "testing"

var fastPathSeeds = []string{"", " ", "alice", " Alice ", "a,b", `a\,b`, "ÜNÏ", "uid=alice", `uid=a\,b`,
	"cn=A+uid=b,ou=x", "=", ",", "a=", "x y", "UID=Bob ", "#hash", `cn=a\2Cb,ou=x`, "uid=Alice,ou=People,dc=Example,dc=com",
	"cn=a-b_c.d@e,ou=x", "cn=a,", ",cn=a", "cn=a,,ou=x", "cn==a,ou=x", "cn=a=b,ou=x", "cn= a,ou=x", "1.2.3=x,ou=y", "cn=#41,ou=x"}

// TestFastPathsMatchTheParser: the shortcuts for plain DNs and non-DNs give exactly what the
// parser path gives.
func TestFastPathsMatchTheParser(t *testing.T) {
	for _, s := range fastPathSeeds {
		checkFastPaths(t, s)
	}
}

func FuzzFastPaths(f *testing.F) {
	for _, s := range fastPathSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFastPaths)
}

func checkFastPaths(t *testing.T, s string) {
	if got, want := Normalize(s), parseNormalize(s); got != want {
		t.Errorf("Normalize(%q) = %q, parser path %q", s, got, want)
	}
	for _, typ := range []string{"", "uid"} {
		if got, want := FirstValueOf(s, typ), parseFirstValueOf(s, typ); got != want {
			t.Errorf("FirstValueOf(%q, %q) = %q, parser path %q", s, typ, got, want)
		}
	}
}
