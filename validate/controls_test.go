package validate

import (
	"testing"
	"time"
)

// Cases written from mutation testing (issue 15): each one fails under a small deliberate
// bug that the other tests let through.

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

// December (month 12) is a month, in whole-file dates as in line dates.
func TestDecemberDates(t *testing.T) {
	for _, s := range []string{"2026-12-31", "20261231", "2026-1231", "202612-31"} {
		d, err := ParseFileDate(s)
		if err != nil || d.Time() != time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC) {
			t.Errorf("ParseFileDate(%q) = %v, %v", s, d, err)
		}
	}
	if _, err := ParseFileDate("2026-13-01"); err == nil {
		t.Error("month 13 accepted")
	}
	if d, err := ParseLineDate("2026-12-31"); err != nil || d.String() != "2026-12-31" {
		t.Errorf("ParseLineDate(2026-12-31) = %v, %v", d, err)
	}
}
