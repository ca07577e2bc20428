// Package termsafe keeps text that comes from a config repo or a target system from steering
// the terminal (or CI log viewer) it is printed on. Group names, uids, DNs, LDAP values and
// error messages are written by others: an ESC or a C1 control in one of them can recolour,
// hide or rewrite what an operator reads in a plan, and a bidirectional override can make a
// line read differently from what it says. Every such rune is shown as a visible escape in
// the style of Go's %q (\x1b, \u202e) instead.
//
// Escape is for one value; NewWriter wraps a renderer's writer, letting through the newlines
// and tabs of its layout; NewJSONWriter wraps the writer of a JSON encoder and produces JSON
// escapes (\u202e) that decode to the very same string.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r (decoded from s with the given size) must not reach a terminal
// raw: C0 and C1 controls, DEL, invalid UTF-8, the bidirectional formatting characters of
// Unicode (embeddings, overrides, isolates and marks) and the line and paragraph separators.
func unsafe(r rune, size int) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == utf8.RuneError && size == 1:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

type mode int

const (
	value  mode = iota // every unsafe rune escaped, newlines included
	layout             // newlines and tabs pass: they are the renderer's own
	jsonm              // JSON escapes; the C0 whitespace of the encoder's indentation passes
)

// appendEscaped appends s to b with its unsafe runes escaped for m.
func appendEscaped(b []byte, s []byte, m mode) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if !unsafe(r, size) || (m != value && (r == '\n' || r == '\t')) || (m == jsonm && r < 0x20) {
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		switch {
		case m == jsonm && size == 1 && r == utf8.RuneError:
			b = append(b, `\ufffd`...) // what encoding/json makes of invalid UTF-8
		case m == jsonm:
			b = fmt.Appendf(b, `\u%04x`, r)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case size == 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		default:
			b = fmt.Appendf(b, `\u%04x`, r)
		}
		i += size
	}
	return b
}

// clean reports whether s holds nothing to escape for m (the common case: no copy).
func clean(s []byte, m mode) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if unsafe(r, size) && !(m != value && (r == '\n' || r == '\t')) && !(m == jsonm && r < 0x20) {
			return false
		}
		i += size
	}
	return true
}

// Escape returns s with every control character (newlines and tabs included), invalid UTF-8
// byte and bidirectional formatting character replaced by a visible escape: \n, \t, \r,
// \x1b, \u0085, \u202e. Anything else, printable Unicode included, is kept as is, so an
// ordinary string comes back unchanged. Backslashes are not doubled: the result is for
// reading, not for parsing back.
func Escape(s string) string {
	if clean([]byte(s), value) {
		return s
	}
	return string(appendEscaped(nil, []byte(s), value))
}

// Writer escapes what is written through it; see NewWriter and NewJSONWriter.
type Writer struct {
	w io.Writer
	m mode
}

// NewWriter returns a writer that passes newlines and tabs (the layout of the text written
// through it) and escapes every other unsafe rune as Escape does. Each Write is escaped on
// its own: a rune split across two Writes is shown as escaped bytes (fmt.Fprintf and
// io.WriteString never split one).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, m: layout} }

// NewJSONWriter returns a writer for the output of encoding/json. The encoder already
// escapes C0 controls, U+2028 and U+2029; it leaves DEL, C1 controls and the bidirectional
// formatting characters raw. This writer replaces those by JSON escapes (\u0085, \u202e),
// which are valid only inside JSON strings, where such runes can only be: the document
// decodes to the same values, byte for byte.
func NewJSONWriter(w io.Writer) *Writer { return &Writer{w: w, m: jsonm} }

// Write escapes p and writes it; it reports len(p) on success.
func (e *Writer) Write(p []byte) (int, error) {
	if clean(p, e.m) {
		return e.w.Write(p)
	}
	if _, err := e.w.Write(appendEscaped(make([]byte, 0, len(p)+16), p, e.m)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the underlying writer (the CLI's progress display draws on the terminal
// itself, with its own escape sequences).
func (e *Writer) Unwrap() io.Writer { return e.w }

// Fprintf is fmt.Fprintf with every argument escaped on its own, as Escape does: strings,
// errors, fmt.Stringers and string slices (which %v prints as [a b]). The format is the
// caller's layout and its newlines pass; a value's newline, tab or carriage return does not,
// so a member name or an error a server chose cannot start a line of its own that reads like
// the renderer's (a forged "+ ADD"). An argument of a %q verb is left to Go's quoting, which
// escapes it already; other arguments (numbers, durations) are printed as they are.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	verbs := verbsOf(format)
	safe := make([]any, len(args))
	for i, a := range args {
		if i < len(verbs) && verbs[i] == 'q' {
			safe[i] = a
			continue
		}
		safe[i] = escapeArg(a)
	}
	return fmt.Fprintf(w, format, safe...)
}

// Sprintf is Fprintf to a string.
func Sprintf(format string, args ...any) string {
	var b strings.Builder
	Fprintf(&b, format, args...)
	return b.String()
}

// escapeArg returns a with its text escaped, for the argument types that carry text.
func escapeArg(a any) any {
	switch v := a.(type) {
	case string:
		return Escape(v)
	case error:
		if v == nil {
			return a
		}
		return Escape(v.Error())
	case fmt.Stringer:
		return Escape(v.String())
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = Escape(s)
		}
		return out
	}
	return a
}

// verbsOf returns the verb of each argument a format consumes, in order ('*' for a width or
// precision taken from an argument).
func verbsOf(format string) []byte {
	var out []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '*' {
				out = append(out, '*')
				continue
			}
			if c == '[' {
				return nil // explicit argument indexes: no %q exemption, every argument escaped
			}
			if strings.IndexByte("+-# 0123456789.", c) >= 0 {
				continue
			}
			if c != '%' {
				out = append(out, c)
			}
			break
		}
	}
	return out
}
