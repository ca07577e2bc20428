// Package people holds the person model of entitlements-go: a Directory that interns every
// person of the selected people source to a dense integer ID (so group memberships are sets of
// small integers), the YAML people source, and the org chart used by the management and
// direct_report rules.
package people

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/topmap"
	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// Person is one entry of a people source. UID keeps the source's spelling; lookups are
// case-insensitive.
type Person struct {
	UID   string
	Attrs map[string]any
}

// Directory is an immutable, interned view of the people of one run. IDs are dense (0..Len-1)
// and follow the order of the source, so they can index slices and bitsets directly.
type Directory struct {
	persons []Person
	byLower map[string]uint32
}

// DuplicateError reports two people whose uids differ only in letter case: lookups are
// case-insensitive, so the reference would silently pick one; we refuse the data instead.
type DuplicateError struct{ A, B string }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("people %q and %q differ only in letter case; uids must be unique case-insensitively", e.A, e.B)
}

// NewDirectory interns persons. It fails on empty uids and case-insensitive duplicates.
// IDs are assigned in byte order of the uids, so iterating a set of IDs in ascending order
// yields the members already sorted the way every output wants them.
func NewDirectory(persons []Person) (*Directory, error) {
	persons = slices.Clone(persons)
	slices.SortStableFunc(persons, func(a, b Person) int { return strings.Compare(a.UID, b.UID) })
	d := &Directory{persons: persons, byLower: make(map[string]uint32, len(persons))}
	for i, p := range persons {
		if p.UID == "" {
			return nil, fmt.Errorf("person #%d has an empty uid", i+1)
		}
		k := strings.ToLower(p.UID)
		if j, dup := d.byLower[k]; dup {
			return nil, &DuplicateError{A: persons[j].UID, B: p.UID}
		}
		d.byLower[k] = uint32(i)
	}
	return d, nil
}

// Len is the number of people.
func (d *Directory) Len() int { return len(d.persons) }

// Lookup finds a person by uid, ignoring letter case.
func (d *Directory) Lookup(uid string) (uint32, bool) {
	id, ok := d.byLower[uid]
	if !ok {
		id, ok = d.byLower[strings.ToLower(uid)]
	}
	return id, ok
}

// UID is the canonical spelling of the person with that ID.
func (d *Directory) UID(id uint32) string { return d.persons[id].UID }

// Person returns the person with that ID.
func (d *Directory) Person(id uint32) Person { return d.persons[id] }

// UIDs returns every uid in ID order.
func (d *Directory) UIDs() []string {
	out := make([]string, len(d.persons))
	for i, p := range d.persons {
		out[i] = p.UID
	}
	return out
}

// LoadYAML reads a YAML people file: a map uid → attribute map. As in the reference, an
// attribute is a string, a list of strings, or null (dropped); anything else is refused.
func LoadYAML(path string) ([]Person, error) { return LoadYAMLFile(path, 0) }

// LoadYAMLFile is LoadYAML with a size cap in bytes (0: the default of 64 MiB; negative:
// none). Only a regular file is read.
func LoadYAMLFile(path string, maxSize int64) ([]Person, error) {
	data, err := safefile.Read(path, safefile.Options{MaxSize: maxSize})
	if err != nil {
		return nil, fmt.Errorf("people file: %w", err)
	}
	return ParseYAML(data)
}

// LineError is a people-file problem with its line.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// LineErrors is every problem of a file that can be told apart entry by entry (a value of
// the wrong type), so that one run reports them all. errors.As finds each *LineError.
type LineErrors []*LineError

func (l LineErrors) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap exposes the individual errors to errors.Is / errors.As.
func (l LineErrors) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// ParseYAML parses people YAML text. Problems found at a line are returned as LineErrors:
// every entry's, or the one syntax error.
func ParseYAML(data []byte) ([]Person, error) {
	if out, ok := parseEntries(data); ok {
		return out, nil
	}
	return parseWhole(data)
}

// parseWhole parses a people file as one document.
func parseWhole(data []byte) ([]Person, error) {
	root, _, err := yaml11.Parse(data, yaml11.Options{AllowDates: true})
	if err != nil {
		if e, ok := err.(*yaml11.Error); ok && e.Line > 0 {
			return nil, LineErrors{{e.Line, "invalid YAML: " + e.Msg}}
		}
		return nil, err
	}
	if root.Kind == yaml11.Null {
		return nil, nil
	}
	if root.Kind != yaml11.Map {
		return nil, LineErrors{{root.Line, "people data must be a map of uid to attributes, not " + root.RubyClass()}}
	}
	out := make([]Person, 0, len(root.Keys))
	var errs LineErrors
	for i, k := range root.Keys {
		var p Person
		p, errs = personOf(k, root.Values[i], errs)
		out = append(out, p)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parseEntries parses a people file entry by entry (see eachEntry). It reports false for a
// file not in that layout or with any error, which the whole-document parse then reports at
// its line.
func parseEntries(data []byte) ([]Person, bool) {
	var out []Person
	ok := eachEntry(data, func(n int) { out = make([]Person, 0, n) }, func(k, v *yaml11.Node) bool {
		person, errs := personOf(k, v, nil)
		out = append(out, person)
		return errs == nil
	})
	return out, ok
}

// eachEntry cuts a top-level map into its entries (topmap: each entry on its own gives what
// the whole document gives for it) and parses them one by one into storage reused from one
// entry to the next, so that the YAML trees of 50,000 people are never all in memory. size
// is told the number of entries first; fn gets each entry's key and value, and stops the
// walk by returning false. eachEntry reports false for a text not in that layout, an entry
// that does not parse as a one-key map, or a stop.
func eachEntry(data []byte, size func(n int), fn func(k, v *yaml11.Node) bool) bool {
	doc, ok := topmap.Split(data)
	if !ok {
		return false
	}
	size(len(doc.Keys))
	text := string(data) // the strings fn keeps are substrings of one copy
	var p yaml11.Parser
	for i := range doc.Keys {
		start, end := doc.Span(i)
		root, _, err := p.ParseString(text[start:end], yaml11.Options{AllowDates: true})
		if err != nil || root.Kind != yaml11.Map || len(root.Keys) != 1 || !fn(root.Keys[0], root.Values[0]) {
			return false
		}
	}
	return true
}

// personOf converts one entry of a people file, appending its problems to errs. The
// reference's Person takes a map of string keys to a string, a list of strings or nil
// (Entitlements::Models::Person's contract): a number, boolean, date or map, a list holding
// anything but strings, or a key that is not a string fails the whole run.
func personOf(k, v *yaml11.Node, errs LineErrors) (Person, LineErrors) {
	if k.Kind != yaml11.String {
		return Person{}, append(errs, &LineError{k.Line, fmt.Sprintf("uid %s is %s, not a string (quote it)", textsafe.ExcerptRaw(k.Inspect()), article(k.RubyClass()))})
	}
	if v.Kind != yaml11.Map {
		return Person{}, append(errs, &LineError{v.Line, fmt.Sprintf("person %s must have a map of attributes, not %s", textsafe.Excerpt(k.Str), v.RubyClass())})
	}
	attrs := make(map[string]any, len(v.Keys))
	for j, ak := range v.Keys {
		if ak.Kind != yaml11.String {
			errs = append(errs, &LineError{ak.Line, fmt.Sprintf("attribute name %s of person %s is %s, not a string (quote it)",
				textsafe.ExcerptRaw(ak.Inspect()), textsafe.Excerpt(k.Str), article(ak.RubyClass()))})
			continue
		}
		av := v.Values[j]
		if bad := notAttribute(av); bad != nil {
			what := "is " + article(bad.RubyClass())
			if bad != av {
				what = "is a list holding " + article(bad.RubyClass())
			}
			errs = append(errs, &LineError{bad.Line, fmt.Sprintf("attribute %s of person %s %s (%s); an attribute is a string or a list of strings: quote the value",
				textsafe.Excerpt(ak.Str), textsafe.Excerpt(k.Str), what, written(bad))})
			continue
		}
		if av.Kind != yaml11.Null {
			attrs[ak.Str] = av.Interface()
		}
	}
	return Person{UID: k.Str, Attrs: attrs}, errs
}

// notAttribute returns the node that keeps n from being an attribute value (a string, a list
// of strings, or null): n itself, or the first list item that is not a string. nil when n is
// valid.
func notAttribute(n *yaml11.Node) *yaml11.Node {
	switch n.Kind {
	case yaml11.String, yaml11.Null:
		return nil
	case yaml11.Seq:
		for _, it := range n.Items {
			if it.Kind != yaml11.String {
				return it
			}
		}
		return nil
	}
	return n
}

// written shows a value as the file writes it: a scalar's text (010, not the 8 that YAML 1.1
// reads), a list or map as Ruby inspects it.
func written(n *yaml11.Node) string {
	if n.Kind == yaml11.Seq || n.Kind == yaml11.Map || n.Str == "" {
		return textsafe.ExcerptRaw(n.Inspect())
	}
	return textsafe.ExcerptRaw(n.Str)
}
