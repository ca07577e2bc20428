package people

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/corpus"
	"github.com/entitlements-go/entitlements/internal/synth"
)

// TestEntriesEqualWhole: reading a people file or a manager map entry by entry gives exactly
// what parsing it as one document gives, whenever it answers; and it answers for the usual
// layout, or this test checks nothing.
func TestEntriesEqualWhole(t *testing.T) {
	inputs := map[string][]byte{
		"lists, numbers, dates, quotes, nulls": []byte("---\nalice:\n  cn: Alice A\n  groups:\n  - b\n  - a\n  none: []\n  shell: '/bin/sh'\n  uidnumber: '1001'\n  start: \"2020-01-02\"\n  title:\n  manager: bob\nbob:\n  cn: \"Bob\"\n  manager: bob\n"),
		"mixed list":                           []byte("alice:\n  tags:\n  - x\n  - 1\n"),
		// Issue 23: values that are not attributes (YAML 1.1 reads yes, 010 and dates as
		// such on both paths), refused alike.
		"typed attributes":      []byte("alice:\n  cn: yes\n  gid: 010\n  start: 2026-01-01\n  f: 1.5\n  l: [1, 2]\nbob:\n  n:\n  - a\n  - ~\n  m:\n    a: b\n  1: x\n"),
		"typed managers":        []byte("alice:\n  manager: 123\nbob:\n  manager:\n  - alice\ncarol:\n  manager: 2026-01-01\ndave:\n  manager: yes\n"),
		"not a map":             []byte("alice:\n  - x\n"),
		"flow style":            []byte("alice: {cn: A}\n"),
		"nested attributes":     []byte("alice:\n  address:\n    city: Paris\n"),
		"manager null":          []byte("alice:\n  manager:\n  status:\n  - employee\n"),
		"NEL ends the document": []byte("a:\n  cn: x\u0085...\nb:\n  cn: y\n  manager: a\n"),
	}
	repo, err := synth.Generate(synth.Options{People: 300, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	inputs["synth people"] = repo.Files["people.yaml"]
	inputs["synth manager map"] = repo.Files["manager-map.yaml"]
	root, _ := corpus.Find() // no corpus: the other inputs only
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") && (strings.Contains(p, "people") || strings.Contains(p, "manager")) {
			if b, err := os.ReadFile(p); err == nil {
				inputs[p] = b
			}
		}
		return nil
	})
	answered := 0
	for _, name := range []string{"typed attributes", "typed managers"} {
		// Entry by entry gives up on an entry with an error; the whole parse reports them
		// all, and ParseYAML / ParseManagerMap return exactly that.
		data := inputs[name]
		if _, ok := parseEntries(data); ok {
			t.Errorf("%s: people read entry by entry", name)
		}
		if _, ok := managerEntries(data); ok && name == "typed managers" {
			t.Errorf("%s: manager map read entry by entry", name)
		}
		_, werr := parseWhole(data)
		_, perr := ParseYAML(data)
		var les LineErrors
		if !errors.As(werr, &les) || len(les) < 3 || perr == nil || perr.Error() != werr.Error() {
			t.Errorf("%s: people errors %v; ParseYAML: %v", name, werr, perr)
		}
		if name == "typed managers" {
			_, werr = managerWhole("m", data)
			_, perr = ParseManagerMap("m", data)
			if !errors.As(werr, &les) || len(les) != 4 || perr == nil || perr.Error() != werr.Error() {
				t.Errorf("%s: manager map errors %v; ParseManagerMap: %v", name, werr, perr)
			}
		}
	}
	for name, data := range inputs {
		if strings.Contains(name, "NEL") {
			// Entry by entry must not answer: the whole parse stops at the document end.
			if _, ok := parseEntries(data); ok {
				t.Errorf("%s: read entry by entry", name)
			}
		}
		if got, ok := parseEntries(data); ok {
			answered++
			want, err := parseWhole(data)
			if err != nil || !same(got, want) {
				t.Errorf("%s: people entry by entry %+v, whole %+v (%v)", name, got, want, err)
			}
		}
		if got, ok := managerEntries(data); ok {
			answered++
			want, err := managerWhole("m.yaml", data)
			if err != nil || !same(got, want) {
				t.Errorf("%s: manager map entry by entry %v, whole %v (%v)", name, got, want, err)
			}
		}
	}
	for _, must := range []string{"synth people", "synth manager map", "lists, numbers, dates, quotes, nulls"} {
		if _, ok := parseEntries(inputs[must]); !ok {
			t.Errorf("%s: not read entry by entry", must)
		}
	}
	t.Logf("%d of %d parses answered entry by entry", answered, 2*len(inputs))
}

// same compares parse results by their Go syntax (NaN equals NaN; map keys are sorted).
func same(a, b any) bool { return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) }

// FuzzEntries: whenever a people file or manager map is read entry by entry, the result is
// the whole-document parse's.
func FuzzEntries(f *testing.F) {
	f.Add([]byte("alice:\n  cn: Alice\n  manager: bob\nbob:\n  manager: bob\n  groups:\n  - x\n"))
	f.Add([]byte("---\nu1:\n  n: 1\n  d: 2020-01-01\n  q: 'x'\nu2:\n  l:\n  - 1\n  - 2\n"))
	f.Add([]byte("a:\n  manager:\n"))
	f.Add([]byte("a:\n  x: .nan\n"))
	f.Add([]byte("a:\n  cn: x\u0085...\nb:\n  cn: y\n"))
	f.Add([]byte("a:\n  cn: yes\n  l: [1, x]\n  manager: 010\nb:\n  manager: ''\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := parseEntries(data); ok {
			if want, err := parseWhole(data); err != nil || !same(got, want) {
				t.Fatalf("people entry by entry %+v, whole %+v (%v)", got, want, err)
			}
		}
		if got, ok := managerEntries(data); ok {
			if want, err := managerWhole("m", data); err != nil || !same(got, want) {
				t.Fatalf("manager map entry by entry %v, whole %v (%v)", got, want, err)
			}
		}
	})
}
