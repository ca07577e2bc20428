package cache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
			if e.DN != teamDN {
				t.Errorf("DN %q, want the file's %q", e.DN, teamDN)
			}
			p.Invalidate(teamDN)
			if _, ok := p.Lookup(teamDN); ok || p.Hits() != 0 {
				t.Errorf("invalidated entry served (hits %d)", p.Hits())
			}
			// Entries is the whole last applied state: an invalidated entry is still part of it.
			if all := p.Entries(); len(all) != 1 || all[0] != e {
				t.Errorf("Entries() = %v, want the one entry", all)
			}
		})
	}
	if _, err := LoadPredictive(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory must be an error")
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

// The predictive state is written by others (it may be a checkout of the audit log): a link
// is never followed, wherever it points, and an entry that is neither a file nor a
// directory fails the load, named; dot entries and README.md are never read, whatever they
// are.
func TestPredictiveRefusesLinksAndSpecialFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("root\n"), 0o644)
	for _, tc := range []struct {
		name string
		make func(dir string) error
		err  string // "": loads
	}{
		{"link to a file outside", func(d string) error { return os.Symlink(outside, filepath.Join(d, "dc=com/cn=x")) },
			"dc=com/cn=x: not a regular file (a symbolic link)"},
		{"link inside", func(d string) error { return os.Symlink("cn=ok", filepath.Join(d, "dc=com/cn=x")) },
			"dc=com/cn=x: not a regular file (a symbolic link)"},
		{"linked directory", func(d string) error { return os.Symlink(filepath.Dir(outside), filepath.Join(d, "dc=net")) },
			"dc=net: not a regular file (a symbolic link)"},
		{"fifo", func(d string) error { return syscall.Mkfifo(filepath.Join(d, "dc=com/cn=x"), 0o644) },
			"dc=com/cn=x: not a regular file (a named pipe)"},
		{"dot entries and README.md are skipped", func(d string) error {
			os.Symlink(outside, filepath.Join(d, ".hidden"))
			os.Symlink(filepath.Dir(outside), filepath.Join(d, ".git"))
			return os.Symlink(outside, filepath.Join(d, "dc=com/README.md"))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "dc=com"), 0o755)
			os.WriteFile(filepath.Join(dir, "dc=com/cn=ok"), []byte("bob\n"), 0o644)
			if err := tc.make(dir); err != nil {
				t.Fatal(err)
			}
			p, err := LoadPredictive(dir)
			if tc.err == "" {
				if err != nil || p.Len() != 1 {
					t.Fatalf("load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.err)) {
				t.Fatalf("load: %v, want an error naming %s", err, tc.err)
			}
		})
	}
}

func TestPredictiveEntriesOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"cn=b,ou=t,dc=x", "cn=A,ou=t,dc=x", "cn=c,ou=t,dc=x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# No members\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := LoadPredictive(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Entries() {
		got = append(got, e.DN)
	}
	if want := []string{"cn=A,ou=t,dc=x", "cn=b,ou=t,dc=x", "cn=c,ou=t,dc=x"}; !slices.Equal(got, want) {
		t.Errorf("Entries in order %q, want %q (by normalised DN, spelled as the files)", got, want)
	}
	var none *Predictive
	if none.Entries() != nil {
		t.Error("a nil state has entries")
	}
}
