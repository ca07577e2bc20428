package termsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"alice", "alice"},
		{"cn=Équipe,ou=Groups", "cn=Équipe,ou=Groups"}, // printable Unicode is kept
		{"a\\b", "a\\b"},
		{"bob\x1b[2J\x1b]0;pwned\x07", `bob\x1b[2J\x1b]0;pwned\x07`},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bad\xffutf8\xe2\x80", `bad\xffutf8\xe2\x80`},
		{"admin\u202etxt.exe", `admin\u202etxt.exe`},
		{"\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriterKeepsLayout(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := io.WriteString(w, "+ bob\x1b[31m\n\tnext\r\n")
	if err != nil || n != len("+ bob\x1b[31m\n\tnext\r\n") {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if got, want := b.String(), "+ bob\\x1b[31m\n\tnext\\r\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if w.Unwrap() != &b {
		t.Error("Unwrap does not return the underlying writer")
	}
}

func TestJSONWriterDecodesToTheSameValues(t *testing.T) {
	in := map[string]any{
		"uid":  "bob\x1b[2J\u009b\x7f",
		"desc": "admin\u202etxt\u2066\u2028",
		"ok":   "plain ✓",
	}
	var b bytes.Buffer
	enc := json.NewEncoder(NewJSONWriter(&b))
	enc.SetIndent("", "\t")
	if err := enc.Encode(in); err != nil {
		t.Fatal(err)
	}
	assertSafe(t, b.String(), true)
	var out map[string]any
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatalf("%v in %s", err, b.String())
	}
	for k, v := range in {
		if out[k] != v {
			t.Errorf("%s: decoded %q, want %q", k, out[k], v)
		}
	}
	if !strings.Contains(b.String(), `"ok": "plain ✓"`) {
		t.Errorf("an ordinary value changed: %s", b.String())
	}
}

// assertSafe fails when s holds an unsafe rune (layout: newlines and tabs allowed).
func assertSafe(t *testing.T, s string, layout bool) {
	t.Helper()
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, size) && !(layout && (r == '\n' || r == '\t')) {
			t.Fatalf("raw %q at byte %d of %q", s[i:i+size], i, s)
		}
		i += size
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "alice", "\x1b[31m", "\u202e", "\xff\xe2\x80", "a\nb", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		assertSafe(t, e, false)
		if Escape(e) != e {
			t.Errorf("not idempotent: %q → %q → %q", s, e, Escape(e))
		}
		if clean([]byte(s), value) && e != s {
			t.Errorf("changed a safe string: %q → %q", s, e)
		}
		var b bytes.Buffer
		NewWriter(&b).Write([]byte(s))
		assertSafe(t, b.String(), true)
		// The JSON writer keeps what the encoder wrote decodable to the same string.
		b.Reset()
		json.NewEncoder(NewJSONWriter(&b)).Encode(s)
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("%v: %q", err, b.String())
		}
		var want string
		raw, _ := json.Marshal(s)
		json.Unmarshal(raw, &want)
		if back != want {
			t.Errorf("JSON decodes to %q, want %q", back, want)
		}
		assertSafe(t, strings.TrimSuffix(b.String(), "\n"), false)
	})
}

// Fprintf escapes each value on its own: a value's newline cannot start a line, whatever the
// verb, and %q is left to Go's quoting.
func TestFprintf(t *testing.T) {
	evil := "bob\n+ ADD cn=forged\t\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\\u009b31m\u202e"
	for _, tc := range []struct {
		format string
		args   []any
		want   string
	}{
		{"  + %s (%v)\n", []any{evil, errors.New(evil)},
			`  + bob\n+ ADD cn=forged\t\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\\u009b31m\u202e (bob\n+ ADD cn=forged\t\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\\u009b31m\u202e)` + "\n"},
		{"%q -> %s\n", []any{"a\nb", "a\nb"}, `"a\nb" -> a\nb` + "\n"},
		{"%5.1f%% %d %v\n", []any{1.25, 7, []string{"x\ny", "z"}}, "  1.2% 7 [x\\ny z]\n"},
		{"%[1]q %[1]s\n", []any{"a\nb"}, `"a\\nb" a\nb` + "\n"},
		{"%s %v", []any{stringer("s\x1b"), error(nil)}, `s\x1b <nil>`},
	} {
		if got := Sprintf(tc.format, tc.args...); got != tc.want {
			t.Errorf("Sprintf(%q) =\n%q, want\n%q", tc.format, got, tc.want)
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
