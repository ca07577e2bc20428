package yaml11

import (
	"bytes"
	"strings"
)

// maxLineSearch bounds the prefix re-parses that locate a parser error (each one parses the
// file up to a line); beyond it the context line is kept.
const maxLineSearch = 400

// problemLine finds the line an error is really about. yaml.v3 reports a parser error ("did
// not find expected key", an unclosed flow collection) at the 0-based line of the enclosing
// context (the mapping that started lines earlier), and some scanner errors one line early,
// not where the text goes wrong. The first prefix of the document, from the reported line on,
// that already fails with the same message ends on the offending line.
func problemLine(data []byte, e *Error) int {
	from := max(e.Line, 1)
	lines := bytes.SplitAfter(data, []byte("\n"))
	off := 0
	for i := 0; i < from-1 && i < len(lines); i++ {
		off += len(lines[i])
	}
	for k := from; k <= len(lines) && k < from+maxLineSearch; k++ {
		off += len(lines[k-1])
		_, err := parseRaw(data[:off])
		if pe, ok := err.(*Error); ok && pe.Msg == e.Msg {
			return k
		}
	}
	return e.Line
}

// anchorLine locates an unknown alias (yaml.v3 reports it without a line).
func anchorLine(data []byte, msg string) int {
	name, ok := strings.CutPrefix(msg, "unknown anchor '")
	if !ok {
		return 0
	}
	name, _, _ = strings.Cut(name, "'")
	for i, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte("*"+name)) {
			return i + 1
		}
	}
	return 0
}
