package vfs

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/validate"
)

func TestMount(t *testing.T) {
	m := Mount(fstest.MapFS{"cfg/entitlements.yaml": {Data: []byte("x")}, "people.yaml": {Data: []byte("p")}}, "cfg")
	wd, _ := m.Getwd()
	if wd != "/cfg" {
		t.Errorf("wd %q", wd)
	}
	abs, _ := Abs(m, "entitlements.yaml")
	if abs != "/cfg/entitlements.yaml" {
		t.Errorf("abs %q", abs)
	}
	if b, err := m.ReadFile(abs, safefile.Options{}); err != nil || string(b) != "x" {
		t.Errorf("read %q %v", b, err)
	}
	if b, err := m.ReadFile("/cfg/../people.yaml", safefile.Options{}); err != nil || string(b) != "p" {
		t.Errorf("read through .. %q %v", b, err)
	}
	for _, p := range []string{"relative.yaml", "/nope"} {
		if _, err := m.ReadFile(p, safefile.Options{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if ents, err := m.ReadDir("/"); err != nil || len(ents) != 2 {
		t.Errorf("readdir / %v %v", ents, err)
	}
	if m.Rel("/cfg/entitlements.yaml") != "cfg/entitlements.yaml" {
		t.Errorf("rel %q", m.Rel("/cfg/entitlements.yaml"))
	}
}

// TestMountedRoots: a file system with symbolic links (fs.ReadLinkFS: a git tree) keeps the
// confinement of a read to its roots, as the operating system's does: a link leading out of
// every root is refused, links inside one, and linked roots, are followed.
func TestMountedRoots(t *testing.T) {
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
	}
	m := Mount(fstest.MapFS{
		"secret.txt":              {Data: []byte("s")},
		"cfg/people.yaml":         {Data: []byte("p")},
		"cfg/groups/a/plain.txt":  {Data: []byte("x")},
		"cfg/groups/a/inside.txt": link("../shared.txt"),
		"cfg/groups/shared.txt":   {Data: []byte("shared")},
		"cfg/groups/a/out.txt":    link("../../../secret.txt"),
		"cfg/groups/a/chain.txt":  link("out.txt"),
		"cfg/groups/b":            link("a"),
		"cfg/linked-people.yaml":  link("../secret.txt"),
	}, "")
	roots := []string{"/cfg/groups", "/cfg", "/cfg/groups/a"}
	for _, c := range []struct {
		path, want string
		outside    bool
	}{
		{"/cfg/groups/a/plain.txt", "x", false},
		{"/cfg/groups/a/inside.txt", "shared", false},
		{"/cfg/groups/b/plain.txt", "x", false},
		{"/cfg/people.yaml", "p", false},
		{"/cfg/groups/a/out.txt", "", true},
		{"/cfg/groups/a/chain.txt", "", true},
		{"/cfg/groups/b/out.txt", "", true},
		{"/cfg/linked-people.yaml", "", true},
	} {
		b, err := m.ReadFile(c.path, safefile.Options{Roots: roots})
		if c.outside {
			if !errors.Is(err, validate.ErrOutsideTree) {
				t.Errorf("%s: %q, %v; want ErrOutsideTree", c.path, b, err)
			}
			// Without roots (--allow-symlinks-outside) the link is followed.
			if b, err := m.ReadFile(c.path, safefile.Options{}); err != nil || string(b) != "s" {
				t.Errorf("%s without roots: %q, %v", c.path, b, err)
			}
			continue
		}
		if err != nil || string(b) != c.want {
			t.Errorf("%s = %q, %v; want %q", c.path, b, err, c.want)
		}
	}
}
