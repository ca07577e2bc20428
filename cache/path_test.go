package cache

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPathFromDN(t *testing.T) {
	for _, tc := range []struct {
		dn, path string
		back     string // DNFromPath(path) when not dn
	}{
		// Ordinary DNs: the reference's path, byte for byte (existing audit repos).
		{dn: "cn=t,ou=teams,ou=GitHub,dc=github,dc=com", path: "dc=com/dc=github/ou=GitHub/ou=teams/cn=t"},
		{dn: "cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net", path: "dc=net/dc=example/ou=Groups/ou=Pizza_Teams/cn=sre"},
		{dn: "cn=Ünïcode group+uid=x,ou=a b,dc=x", path: "dc=x/ou=a b/cn=Ünïcode group+uid=x"},
		{dn: "cn=100%,ou=x", path: "ou=x/cn=100%"},
		{dn: "cn=README.md.txt,ou=x", path: "ou=x/cn=README.md.txt"},
		{dn: "cn=a, ou=b", path: "ou=b/cn=a", back: "cn=a,ou=b"},
		// Path separators and traversal are encoded: one RDN is one element.
		{dn: "cn=x/../../../tmp/precious.txt,ou=Groups,dc=example", path: "dc=example/ou=Groups/%cn=x%2F..%2F..%2F..%2Ftmp%2Fprecious.txt"},
		{dn: `cn=a\,b,ou=Groups`, path: `ou=Groups/%cn=a%5C,b`},
		{dn: `cn=a\\,ou=Groups`, path: `ou=Groups/%cn=a%5C%5C`},
		{dn: `cn=a\ ,ou=Groups`, path: `ou=Groups/%cn=a%5C `},
		{dn: "cn=a\x00b,ou=x", path: "ou=x/%cn=a%00b"},
		{dn: `cn=a\2Fb,ou=x`, path: `ou=x/%cn=a%5C2Fb`},
		{dn: "..,.,ou=x", path: "ou=x/%./%.."},
		{dn: "cn=a,.git", path: "%.git/cn=a"},
		{dn: "cn=a,,ou=x", path: "ou=x/%/cn=a"},
		{dn: "", path: "%"},
		{dn: "README.md", path: "%README.md"},
		{dn: "%41,ou=x", path: "ou=x/%%2541"},
	} {
		got := PathFromDN(tc.dn)
		if got != tc.path {
			t.Errorf("PathFromDN(%q) = %q, want %q", tc.dn, got, tc.path)
		}
		want := tc.dn
		if tc.back != "" {
			want = tc.back
		}
		if back := DNFromPath(got); back != want {
			t.Errorf("DNFromPath(%q) = %q, want %q", got, back, want)
		}
	}
}

// Names that are not the encoding of what they decode to are taken as they are: a file
// pushed under another spelling of a group's path is not that group's file.
func TestDNFromPathForeignNames(t *testing.T) {
	for _, p := range []string{"%cn=a", "ou=x/%cn=a%2f", "%cn=%41", "%a%", "%a%2", "%a%G0", `ou=x/cn=a\,b`, "cn=a,ou=x"} {
		elems := strings.Split(p, "/")
		want := elems[len(elems)-1]
		if got := DNFromPath(p); !strings.HasPrefix(got, want) {
			t.Errorf("DNFromPath(%q) = %q, want it to start with %q", p, got, want)
		}
	}
}

func checkPath(t *testing.T, d string) {
	t.Helper()
	p := PathFromDN(d)
	if !filepath.IsLocal(p) || strings.ContainsAny(p, "\\\x00") {
		t.Fatalf("PathFromDN(%q) = %q is not a local path", d, p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el[0] == '.' || el == "README.md" {
			t.Fatalf("PathFromDN(%q) = %q has element %q", d, p, el)
		}
	}
	rdns := splitRDNs(d)
	for i, r := range rdns {
		rdns[i] = trimRDN(r)
	}
	if want, got := strings.Join(rdns, ","), DNFromPath(p); got != want {
		t.Fatalf("DNFromPath(PathFromDN(%q)) = %q, want %q", d, got, want)
	}
	parts := strings.Split(d, ",")
	oddRDN := func(r string) bool { return r == "" || r[0] == '.' || r[0] == '%' || r == "README.md" }
	if !strings.ContainsAny(d, "/\\\x00 \t\n\r\v\f") && !slices.ContainsFunc(parts, oddRDN) {
		// An ordinary DN: the reference's path (RDNs reversed, joined with '/').
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		if p != strings.Join(parts, "/") {
			t.Fatalf("PathFromDN(%q) = %q, not the reference's path", d, p)
		}
	}
}

func FuzzPathFromDN(f *testing.F) {
	for _, s := range []string{"cn=t,ou=teams,dc=com", "cn=x/../../../tmp/p,ou=a", `cn=a\,b,ou=x`, `cn=a\ ,ou=x`, "..", "%", "%25", ".git", "README.md", "", ",", `\`, "cn=a\x00"} {
		f.Add(s)
	}
	f.Fuzz(checkPath)
}

func TestFileNameFromDN(t *testing.T) {
	for dn, want := range map[string]string{
		"cn=t,ou=teams,dc=com": "cn=t,ou=teams,dc=com",
		`cn=a\,b,ou=x`:         `%cn=a%5C,b,ou=x`,
		"cn=a/b,ou=x":          "%cn=a%2Fb,ou=x",
	} {
		if got := FileNameFromDN(dn); got != want || DNFromPath(got) != dn {
			t.Errorf("FileNameFromDN(%q) = %q (back %q), want %q", dn, got, DNFromPath(got), want)
		}
	}
}
