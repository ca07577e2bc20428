package textsafe

import (
	"fmt"
	"unicode/utf8"
)

// ForbiddenControl reports whether r is a control character that no value may contain: every
// C0 control but tab, line feed and carriage return, DEL, and the C1 controls. A NUL in a
// username silently matches nobody; one in a description is sent to a provider.
func ForbiddenControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}

// CheckControl finds the first forbidden control character of a line-oriented text file (a
// .txt group file; see ForbiddenControl). A carriage return is allowed among the blanks
// (space, tab, carriage return) at the start or end of a line: the reference splits such a
// file on line feeds and strips each line (String#strip), so it is whitespace there, as in a
// CRLF line end. Inside a line it would become part of a value, and is refused. It returns
// the 1-based line and a message, or 0 and "" when the text is clean. Invalid UTF-8 is left
// to the parsers, which report it in their own words.
func CheckControl(data []byte) (int, string) {
	line := 1
	// lead: only blanks so far on this line.
	lead := true
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			line++
			lead = true
			i++
			continue
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\r':
			if lead {
				i++
				continue
			}
			// Allowed when only blanks follow up to the line's end: skip them all at once,
			// so that a long run of carriage returns is read once.
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r') {
				j++
			}
			if j < len(data) && data[j] != '\n' {
				return line, ControlMessage('\r')
			}
			i = j
			continue
		}
		lead = false
		if c < utf8.RuneSelf {
			if ForbiddenControl(rune(c)) {
				return line, ControlMessage(rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if ForbiddenControl(r) {
			return line, ControlMessage(r)
		}
		i += n
	}
	return 0, ""
}

// ControlMessage is the error text for a forbidden control character.
func ControlMessage(r rune) string {
	return fmt.Sprintf("control character U+%04X is not allowed (values may contain tabs, not control characters)", r)
}
