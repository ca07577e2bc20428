// Package topmap cuts a YAML document whose top level is a block mapping into its entries,
// without parsing them, so that a new version of a large file (a people file, a manager
// map) can reuse what was parsed from the old version for every entry whose text did not
// change. Only a conservative layout is accepted: an optional "---" first line, then entries
// that each start with a line "key:" at column 0 (a key of letters, digits and . _ @ -, no
// value on that line) followed by indented lines; no comments, tabs, carriage returns, other
// line breaks (NEL, LS, PS) or other
// lines at column 0; keys that load as strings (not `yes`, `12` or a date), all different; a
// final newline. Anything else is not split, and the caller parses the whole document as usual.
//
// Entries of such a document are independent: parsing one entry on its own gives what the
// whole document gives for it, because the top level holds nothing but these keys and YAML
// indentation is absolute.
package topmap

import (
	"bytes"
	"slices"
	"sync"

	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// Doc is a document cut into entries.
type Doc struct {
	Data []byte
	Keys []string
	// starts[i] is the offset of entry i's key line; starts[len(Keys)] is len(Data).
	starts []int
	index  map[string]int
	once   sync.Once // builds index on first use when Split did not need it
}

// Split cuts data, or reports false when data is not in the accepted layout.
func Split(data []byte) (*Doc, bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' || bytes.IndexByte(data, '\t') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		return nil, false
	}
	// YAML also breaks lines at NEL, LS and PS: a document end after one of them would end
	// the whole document, which entries read one by one cannot see.
	for _, lb := range []string{"\u0085", "\u2028", "\u2029"} {
		if bytes.Contains(data, []byte(lb)) {
			return nil, false
		}
	}
	d := &Doc{Data: data}
	off := 0
	if bytes.HasPrefix(data, []byte("---\n")) {
		off = 4
	}
	if off == len(data) || data[off] == ' ' {
		return nil, false
	}
	n := bytes.Count(data, []byte("\n"))
	d.Keys = make([]string, 0, n/2)
	d.starts = make([]int, 0, n/2+1)
	for off < len(data) {
		eol := off + bytes.IndexByte(data[off:], '\n')
		line := data[off:eol]
		if len(line) == 0 {
			return nil, false
		}
		if line[0] != ' ' {
			if len(line) < 2 || line[len(line)-1] != ':' || !plainKey(line[:len(line)-1]) ||
				!yaml11.PlainString(string(line[:len(line)-1])) {
				return nil, false
			}
			d.Keys = append(d.Keys, string(line[:len(line)-1]))
			d.starts = append(d.starts, off)
		} else if bytes.IndexFunc(line, func(r rune) bool { return r != ' ' }) < 0 {
			return nil, false // a line of spaces: keep the layout simple
		}
		off = eol + 1
	}
	if len(d.Keys) == 0 {
		return nil, false
	}
	d.starts = append(d.starts, len(data))
	// Keys in increasing order (the usual export of a directory) cannot repeat; others are
	// checked, and indexed, through a map.
	if !slices.IsSorted(d.Keys) {
		var dup bool
		d.once.Do(func() { dup = d.buildIndex() })
		if dup {
			return nil, false
		}
	} else {
		for i := 1; i < len(d.Keys); i++ {
			if d.Keys[i] == d.Keys[i-1] {
				return nil, false
			}
		}
	}
	return d, true
}

// buildIndex indexes the keys and reports whether one repeats.
func (d *Doc) buildIndex() (dup bool) {
	d.index = make(map[string]int, len(d.Keys))
	for i, k := range d.Keys {
		if _, seen := d.index[k]; seen {
			dup = true
		}
		d.index[k] = i
	}
	return dup
}

func plainKey(k []byte) bool {
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '@':
		case c == '-':
		default:
			return false
		}
	}
	return k[0] != '-' && k[0] != '.' && k[0] != '@'
}

// Entry returns the text of entry i (its key line and its indented lines).
func (d *Doc) Entry(i int) []byte { return d.Data[d.starts[i]:d.starts[i+1]] }

// Span returns the offsets of entry i in Data.
func (d *Doc) Span(i int) (start, end int) { return d.starts[i], d.starts[i+1] }

// Find returns the index of the entry with key k, or -1.
func (d *Doc) Find(k string) int {
	d.once.Do(func() {
		if d.index == nil {
			d.buildIndex()
		}
	})
	if i, ok := d.index[k]; ok {
		return i
	}
	return -1
}

// Same reports whether entry i of d has the same text as the entry of prev with the same
// key, and returns that entry's index in prev. Documents whose entries did not move answer
// without an index.
func (d *Doc) Same(i int, prev *Doc) (int, bool) {
	k := d.Keys[i]
	j := -1
	if i < len(prev.Keys) && prev.Keys[i] == k {
		j = i
	} else {
		j = prev.Find(k)
	}
	if j < 0 {
		return -1, false
	}
	return j, bytes.Equal(d.Entry(i), prev.Entry(j))
}
