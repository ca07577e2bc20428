package calc

import (
	"path/filepath"
	"testing"

	"github.com/entitlements-go/entitlements/config"
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
