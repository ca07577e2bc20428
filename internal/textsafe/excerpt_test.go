package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"username = bob", `"username = bob"`},
		{"https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com", `"https://***@github.com"`},
		{"token ghp_abcdefghij", `"token ***"`},
		{"key " + strings.Repeat("A", 40), `"key ***"`},
		{"a\x00b\x1b", `"a\x00b\x1b"`},
		{strings.Repeat("é", 50), `"` + strings.Repeat("é", ExcerptLen) + `"…`},
	} {
		if got := Excerpt(c.in); got != c.want {
			t.Errorf("Excerpt(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := ExcerptRaw(strings.Repeat("x ", 200)); utf8.RuneCountInString(got) != 2*ExcerptLen+1 {
		t.Errorf("ExcerptRaw length %d", utf8.RuneCountInString(got))
	}
}

func TestCheckControl(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
	}{
		{"a\tb\r\nc\n", 0}, {"é\n", 0}, {"a\n\x00", 2}, {"a\rb", 1}, {"x\n\n\u0085", 3}, {"\x7f", 1},
		// Issue 23: a carriage return among the blanks at either end of a line is whitespace
		// (Ruby's String#strip); inside a line it is refused.
		{"a\r", 0}, {"username = alice\n\r", 0}, {"username = alice\r\r\n", 0}, {"\r \tx \r\t\r\ny\r", 0},
		{"\r\r\n\r", 0}, {"a\n b \r c\n", 2}, {"a = b\r# c\n", 1}, {"\rx\ry\n", 1}, {"a\r\r \x00\n", 1},
		{"x\n\r\v\n", 2}, {"a \r\t\r\nb\rc", 2},
	} {
		if line, _ := CheckControl([]byte(c.in)); line != c.line {
			t.Errorf("CheckControl(%q) line %d, want %d", c.in, line, c.line)
		}
	}
}
