package calc

import (
	"path/filepath"
	"testing"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
)

// TestFilePathsMatchJoinAndRel: the per-listing shortcut gives exactly filepath.Join and
// config.RelPath of the joined path, inside, at and outside the base directory.
func TestFilePathsMatchJoinAndRel(t *testing.T) {
	for _, c := range []struct{ base, dir string }{
		{"/repo", "/repo/ldap-config/pizza_teams"},
		{"/repo", "/repo"},
		{"/repo", "/elsewhere/teams"},
		{"/repo", "/repo-other/teams"},
		{"/repo", "/"},
		{"", "/repo/teams"},
		{"/repo/sub", "/repo"},
		{"/", "/teams"},
	} {
		relTo := func(p string) string { return config.RelPath(c.base, p) }
		l := &listing{}
		for _, name := range []string{"a.txt", "b-c.yaml"} {
			path, rel := l.filePaths(c.dir, name, relTo)
			wantPath := filepath.Join(c.dir, name)
			if path != wantPath || rel != relTo(wantPath) {
				t.Errorf("base %q dir %q name %q: got %q, %q; want %q, %q", c.base, c.dir, name, path, rel, wantPath, relTo(wantPath))
			}
		}
	}
}

// A group DN escapes its cn per RFC 4514, so any name is one RDN that the audit log stores
// as one path element and reads back as the same DN. The names an enumerated OU admits
// need no escaping: those DNs are the reference's, byte for byte.
func TestGroupDNEscapesCN(t *testing.T) {
	const base = "ou=Teams,dc=example,dc=com"
	for _, tc := range []struct{ cn, dn, path string }{
		{"sre", "cn=sre," + base, "dc=com/dc=example/ou=Teams/cn=sre"},
		{"on-call_2", "cn=on-call_2," + base, "dc=com/dc=example/ou=Teams/cn=on-call_2"},
		{"a,b", `cn=a\,b,` + base, `dc=com/dc=example/ou=Teams/%cn=a%5C,b`},
		{"a+b=c", `cn=a\+b\=c,` + base, `dc=com/dc=example/ou=Teams/%cn=a%5C+b%5C=c`},
		{"x/../../etc", "cn=x/../../etc," + base, "dc=com/dc=example/ou=Teams/%cn=x%2F..%2F..%2Fetc"},
	} {
		got := groupDN(tc.cn, base)
		if got != tc.dn {
			t.Errorf("groupDN(%q) = %q, want %q", tc.cn, got, tc.dn)
			continue
		}
		if d, err := dn.Parse(got); err != nil || len(d) != 4 || d[0][0].Value != tc.cn {
			t.Errorf("groupDN(%q) = %q does not parse to one cn RDN: %v %v", tc.cn, got, d, err)
		}
		p := cache.PathFromDN(got)
		if p != tc.path || cache.DNFromPath(p) != got {
			t.Errorf("audit path of %q: %q (back %q), want %q", got, p, cache.DNFromPath(p), tc.path)
		}
	}
}
