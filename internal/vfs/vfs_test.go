package vfs

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/internal/safefile"
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
