package validate

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

// CheckControl finds the first forbidden control character of a file's text (see
// ForbiddenControl; a carriage return is only allowed before a line feed). It returns its
// 1-based line and a message, or 0 and "" when the text is clean. Invalid UTF-8 is left to the
// parsers, which report it in their own words.
func CheckControl(data []byte) (int, string) {
	line := 1
	for i := 0; i < len(data); {
		c := data[i]
		if c == '\n' {
			line++
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if c == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
				return line, ControlMessage('\r')
			}
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
