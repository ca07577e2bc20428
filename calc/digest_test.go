package calc

import (
	"bytes"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/backends"
)

// TestDigest: the config digest moves with the config file and any group file (content or
// name), the people digest with any person's attribute or manager; each only with its own.
func TestDigest(t *testing.T) {
	base := fstest.MapFS{
		"config.yaml":      {Data: []byte(conf{People: "people.yaml"}.String())},
		"people.yaml":      {Data: []byte(stdPeople)},
		"manager-map.yaml": {Data: []byte(stdManagerMap)},
		ax:                 {Data: []byte("username = bob\n")},
		by:                 {Data: []byte("username = alice\n")},
	}
	digest := func(m fstest.MapFS) Digest {
		t.Helper()
		r, err := LoadFS(t.Context(), m, "config.yaml", Options{Now: testNow, Types: backends.Types()})
		if err != nil {
			t.Fatal(err)
		}
		return r.Digest()
	}
	d0 := digest(base)
	if d0.Config == "" || d0.People == "" || d0.Config == d0.People {
		t.Fatalf("digest %+v", d0)
	}
	if d := digest(base); d != d0 {
		t.Fatalf("digest of the same repo differs: %+v, %+v", d, d0)
	}
	// A config file gone since the load cannot match any digest made from it.
	gone := fstest.MapFS{}
	for k, v := range base {
		gone[k] = v
	}
	r, err := LoadFS(t.Context(), gone, "config.yaml", Options{Now: testNow, Types: backends.Types()})
	if err != nil {
		t.Fatal(err)
	}
	delete(gone, "config.yaml")
	if d := r.Digest(); d.Config == d0.Config || d.People != d0.People {
		t.Errorf("digest after the config file was removed: %+v; want a config digest of its own", d)
	}
	cases := []struct {
		name        string
		change      func(m fstest.MapFS)
		config, ppl bool // which digest moves
	}{
		{"config file (same size)", func(m fstest.MapFS) {
			m["config.yaml"] = &fstest.MapFile{Data: bytes.Replace(base["config.yaml"].Data, []byte("example.net"), []byte("example.org"), 1)}
		}, true, false},
		{"group file content", func(m fstest.MapFS) { m[by] = &fstest.MapFile{Data: []byte("username = alice\nusername = eve\n")} }, true, false},
		{"group file renamed", func(m fstest.MapFS) {
			m["ldap-config/b/w.txt"] = m[by]
			delete(m, by)
		}, true, false},
		{"a person's attribute", func(m fstest.MapFS) {
			m["people.yaml"] = &fstest.MapFile{Data: []byte(stdPeople[:len(stdPeople)-len("mallory: {cn: Mallory}\n")] + "mallory: {cn: Mal}\n")}
		}, false, true},
		{"a manager", func(m fstest.MapFS) {
			m["manager-map.yaml"] = &fstest.MapFile{Data: []byte(stdManagerMap[:len(stdManagerMap)-len("mallory: {manager: eve}\n")] + "mallory: {manager: boss}\n")}
		}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fstest.MapFS{}
			for k, v := range base {
				m[k] = v
			}
			c.change(m)
			d := digest(m)
			if (d.Config != d0.Config) != c.config || (d.People != d0.People) != c.ppl {
				t.Errorf("config digest moved %v (want %v), people digest moved %v (want %v)",
					d.Config != d0.Config, c.config, d.People != d0.People, c.ppl)
			}
		})
	}
}
