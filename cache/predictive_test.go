package cache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPredictiveLayouts(t *testing.T) {
	const teamDN = "cn=Eng,ou=teams,ou=GitHub,dc=example,dc=com"
	content := "uid=alice,ou=people,dc=example,dc=com\nbob\n# No members\nmetadata_team_maintainers=Alice\n"
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"flat", map[string]string{teamDN: content}},
		{"nested audit log", map[string]string{
			"dc=com/dc=example/ou=GitHub/ou=teams/cn=Eng": content,
			"README.md":        "the audit log\n",
			".git/HEAD":        "ref: refs/heads/master\n",
			"dc=com/README.md": "not a group\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, c := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := LoadPredictive(dir)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != 1 {
				t.Fatalf("%d entries, want 1 (README.md and .git skipped)", p.Len())
			}
			e, ok := p.Lookup("CN=eng, ou=Teams,ou=github,dc=example,dc=com")
			if !ok {
				t.Fatal("no entry")
			}
			if !slices.Equal(e.Members, []string{"alice", "bob"}) || e.Metadata["team_maintainers"] != "alice" {
				t.Errorf("entry %+v", e)
			}
			if p.Hits() != 1 {
				t.Errorf("hits %d", p.Hits())
			}
			p.Invalidate(teamDN)
			if _, ok := p.Lookup(teamDN); ok || p.Hits() != 0 {
				t.Errorf("invalidated entry served (hits %d)", p.Hits())
			}
		})
	}
	if _, err := LoadPredictive(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory must be an error")
	}
}

func TestPathFromDN(t *testing.T) {
	const d = "cn=t,ou=teams,ou=GitHub,dc=github,dc=com"
	if got := PathFromDN(d); got != "dc=com/dc=github/ou=GitHub/ou=teams/cn=t" {
		t.Errorf("path %q", got)
	}
	if got := DNFromPath(PathFromDN(d)); got != d {
		t.Errorf("round trip %q", got)
	}
}

func TestSameMetadata(t *testing.T) {
	e := &PredictiveEntry{Metadata: map[string]string{"team_maintainers": "alice,bob", "list": `["a", "b"]`}}
	md := map[string]any{"team_maintainers": "Alice,Bob", "list": []any{"a", "b"}, "_filename": "x.txt"}
	if !SameMetadata(md, e) {
		t.Error("equal metadata differs")
	}
	md["extra"] = "1"
	if SameMetadata(md, e) {
		t.Error("extra key not seen")
	}
}
