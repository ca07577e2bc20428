package topmap

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		keys []string // nil: not split
	}{
		{"entries", "alice:\n  cn: Alice\nbob:\n  cn: Bob\n  status:\n  - employee\n", []string{"alice", "bob"}},
		{"document start", "---\nalice:\n  cn: Alice\n", []string{"alice"}},
		{"dotted and dashed keys", "a.b-c_d@x:\n  cn: X\n", []string{"a.b-c_d@x"}},
		{"entry without lines", "alice:\nbob:\n  cn: Bob\n", []string{"alice", "bob"}},
		{"empty", "", nil},
		{"only a document start", "---\n", nil},
		{"no final newline", "alice:\n  cn: Alice", nil},
		{"value on the key line", "alice: {cn: Alice}\n", nil},
		{"comment at column 0", "# people\nalice:\n  cn: Alice\n", nil},
		{"blank line", "alice:\n  cn: Alice\n\nbob:\n  cn: Bob\n", nil},
		{"line of spaces", "alice:\n  cn: Alice\n   \n", nil},
		{"tab", "alice:\n\tcn: Alice\n", nil},
		{"CRLF", "alice:\r\n  cn: Alice\r\n", nil},
		{"duplicate key", "alice:\n  cn: A\nalice:\n  cn: B\n", nil},
		{"quoted key", "\"alice\":\n  cn: Alice\n", nil},
		{"boolean key", "yes:\n  cn: Y\n", nil},
		{"integer key", "012:\n  cn: Y\n", nil},
		{"date key", "2024-01-01:\n  cn: Y\n", nil},
		{"null key", "null:\n  cn: Y\n", nil},
		{"indented first line", "  alice:\n    cn: Alice\n", nil},
		{"second document", "alice:\n  cn: A\n---\nbob:\n  cn: B\n", nil},
		{"sequence at the top", "- alice\n", nil},
		// yaml.v3 reads NEL, LS and PS as line breaks: "\u0085..." ends the document there.
		{"NEL", "a:\n  cn: x\u0085...\nb:\n  cn: y\n", nil},
		{"line separator", "a:\n  cn: x\u2028---\nb:\n  cn: y\n", nil},
		{"paragraph separator", "a:\n  cn: x\u2029\nb:\n  cn: y\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := Split([]byte(c.in))
			if ok != (c.keys != nil) {
				t.Fatalf("split = %v, want %v", ok, c.keys != nil)
			}
			if !ok {
				return
			}
			if !slices.Equal(d.Keys, c.keys) {
				t.Fatalf("keys %q, want %q", d.Keys, c.keys)
			}
			// The entries are the whole text after the document start, in order.
			var all []byte
			for i := range d.Keys {
				all = append(all, d.Entry(i)...)
			}
			if want := c.in[len(c.in)-len(all):]; string(all) != want || (len(c.in)-len(all) != 0 && c.in[:4] != "---\n") {
				t.Fatalf("entries %q do not cover %q", all, c.in)
			}
		})
	}
}

func TestSame(t *testing.T) {
	prev, _ := Split([]byte("alice:\n  cn: Alice\nbob:\n  cn: Bob\n"))
	next, _ := Split([]byte("bob:\n  cn: Bob\nalice:\n  cn: Alicia\ncarol:\n  cn: Carol\n"))
	for i, want := range []struct {
		j    int
		same bool
	}{{1, true}, {0, false}, {-1, false}} {
		j, same := next.Same(i, prev)
		if j != want.j || same != want.same {
			t.Errorf("entry %s: Same = %d, %v; want %d, %v", next.Keys[i], j, same, want.j, want.same)
		}
	}
}

// TestUnsortedKeys: keys out of order are indexed at once (duplicates found), keys in order
// only when a lookup needs it.
func TestUnsortedKeys(t *testing.T) {
	if _, ok := Split([]byte("b:\n  x: 1\na:\n  x: 2\nb:\n  x: 3\n")); ok {
		t.Error("duplicate among unsorted keys accepted")
	}
	if _, ok := Split([]byte("a:\n  x: 1\na:\n  x: 2\n")); ok {
		t.Error("adjacent duplicate among sorted keys accepted")
	}
	d, ok := Split([]byte("b:\n  x: 1\na:\n  x: 2\n"))
	if !ok || d.Find("a") != 1 || d.Find("b") != 0 || d.Find("c") != -1 {
		t.Errorf("unsorted: ok %v, Find a %d, b %d, c %d", ok, d.Find("a"), d.Find("b"), d.Find("c"))
	}
	s, ok := Split([]byte("a:\n  x: 1\nb:\n  x: 2\n"))
	if !ok || s.Find("b") != 1 || s.Find("a") != 0 {
		t.Errorf("sorted: ok %v, Find b %d", ok, s.Find("b"))
	}
}
