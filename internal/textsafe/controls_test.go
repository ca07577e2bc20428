package textsafe

import "testing"

// The edges of the forbidden ranges: C0 below space, DEL, C1 0x80-0x9F.
func TestForbiddenControlEdges(t *testing.T) {
	for r, want := range map[rune]bool{
		0x00: true, 0x1f: true, ' ': false, '~': false, 0x7f: true,
		0x80: true, 0x9f: true, 0xa0: false, 'é': false, '\t': false, '\n': false, '\r': false,
	} {
		if got := ForbiddenControl(r); got != want {
			t.Errorf("ForbiddenControl(U+%04X) = %v, want %v", r, got, want)
		}
	}
}

// A byte that is not valid UTF-8 is left to the parsers: 0x80 alone is not U+0080.
func TestCheckControlLeavesInvalidUTF8(t *testing.T) {
	for _, in := range []string{"a\x80b", "\x9f", "\xc2"} {
		if line, msg := CheckControl([]byte(in)); line != 0 {
			t.Errorf("CheckControl(%q) = %d %q, want clean", in, line, msg)
		}
	}
	if line, _ := CheckControl([]byte("a\n\u0080")); line != 2 {
		t.Errorf("U+0080 encoded: line %d, want 2", line)
	}
}
