package review

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
)

// A small reader of the Markdown the renderers produce, enough to check where data ended up:
// each line is split into code spans and text the way CommonMark does (backtick strings of
// equal length pair up; a backslash escapes ASCII punctuation in text, not in code).

type mdSeg struct {
	code bool
	s    string
}

func isASCIIPunct(c byte) bool {
	return c < 0x80 && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

func backtickRun(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

func mdSegments(line string) []mdSeg {
	var out []mdSeg
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, mdSeg{s: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && i+1 < len(line) && isASCIIPunct(line[i+1]) {
			text.WriteString(line[i : i+2])
			i += 2
			continue
		}
		if c != '`' {
			text.WriteByte(c)
			i++
			continue
		}
		n := backtickRun(line, i)
		closing := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := backtickRun(line, j)
			if m == n {
				closing = j
				break
			}
			j += m
		}
		if closing < 0 {
			text.WriteString(line[i : i+n])
			i += n
			continue
		}
		flush()
		content := line[i+n : closing]
		if len(content) >= 2 && content[0] == ' ' && content[len(content)-1] == ' ' && strings.Trim(content, " ") != "" {
			content = content[1 : len(content)-1]
		}
		out = append(out, mdSeg{code: true, s: content})
		i = closing + n
	}
	flush()
	return out
}

// mdDecode is what a reader sees of a text segment: backslash escapes and entities resolved,
// the zero-width spaces that break mentions and autolinks removed.
func mdDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return strings.ReplaceAll(html.UnescapeString(b.String()), "\u200b", "")
}

// templateLine matches the lines the renderers write themselves around data (HTML of
// collapsed lists, GitHub alerts).
var templateLine = regexp.MustCompile(`^\s*(<details><summary>[^<>&]*</summary>|</details>|> \[!(WARNING|CAUTION)\])$`)

// mdShape counts what gives a Markdown document its structure: lines by their leading
// marker, code spans, unescaped punctuation that opens inline constructs, raw HTML. Data
// that injects nothing leaves the shape of a document as it is with harmless data in the
// same places.
func mdShape(doc string) map[string]int {
	shape := map[string]int{}
	marker := regexp.MustCompile(`^\s*([-#>|*+=]+|\d+[.)]|<|)`)
	for _, line := range strings.Split(doc, "\n") {
		shape["line "+marker.FindStringSubmatch(line)[1]]++
		if templateLine.MatchString(line) {
			shape["template html"]++
			continue
		}
		for _, sg := range mdSegments(line) {
			if sg.code {
				shape["code span"]++
				continue
			}
			for i := 0; i < len(sg.s); i++ {
				c := sg.s[i]
				if c == '\\' && i+1 < len(sg.s) && isASCIIPunct(sg.s[i+1]) {
					i++
					continue
				}
				if strings.IndexByte("*_~[]|<>$`", c) >= 0 {
					shape[fmt.Sprintf("unescaped %c", c)]++
				}
			}
		}
	}
	return shape
}

// checkMarkdownText fails on what must never be in a text segment however it is escaped:
// raw HTML, a live mention, an autolink, an entity the data brought.
func checkMarkdownText(t *testing.T, doc string) {
	t.Helper()
	entity := regexp.MustCompile(`&(#?[A-Za-z0-9]+;?)`)
	for n, line := range strings.Split(doc, "\n") {
		if templateLine.MatchString(line) {
			continue
		}
		for _, sg := range mdSegments(line) {
			if sg.code {
				if strings.Contains(sg.s, "\n") {
					t.Errorf("line %d: newline in a code span", n+1)
				}
				continue
			}
			s := sg.s
			fail := func(why string) { t.Errorf("line %d: %s in text %q\nof line %q", n+1, why, s, line) }
			if strings.Contains(s, "<") {
				fail("raw <")
			}
			if i := strings.Index(s, "@"); i >= 0 && !strings.HasPrefix(s[i+1:], "&#8203;") {
				fail("live @ mention")
			}
			if strings.Contains(s, "://") || strings.Contains(strings.ToLower(s), "www.") {
				fail("autolinkable URL")
			}
			for _, m := range entity.FindAllStringSubmatch(s, -1) {
				switch m[1] {
				case "lt;", "gt;", "amp;", "#8203;":
				default:
					fail("entity &" + m[1])
				}
			}
			if strings.Contains(s, "](") && !strings.Contains(s, `\](`) {
				fail("link ](")
			}
			if strings.Contains(s, "![") && !strings.Contains(s, `!\[`) {
				fail("image ![")
			}
		}
	}
}

// codeSpans returns the content of every code span of doc.
func codeSpans(doc string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		for _, sg := range mdSegments(line) {
			if sg.code {
				out[sg.s] = true
			}
		}
	}
	return out
}

// decodedText is the text a reader sees, line by line (code spans included as they show).
func decodedText(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		for _, sg := range mdSegments(line) {
			if sg.code {
				b.WriteString(sg.s)
			} else {
				b.WriteString(mdDecode(sg.s))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestMDSegments(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string
	}{
		{"a `b` c", "T(a )C(b)T( c)"},
		{"`` a`b ``", "C(a`b)"},
		{"\\`x` y", "T(\\`x` y)"},
		{"`a``", "T(`a``)"},
		{"``` `` ```", "C(``)"},
	} {
		var b strings.Builder
		for _, sg := range mdSegments(tc.line) {
			if sg.code {
				fmt.Fprintf(&b, "C(%s)", sg.s)
			} else {
				fmt.Fprintf(&b, "T(%s)", sg.s)
			}
		}
		if b.String() != tc.want {
			t.Errorf("%q: %s, want %s", tc.line, b.String(), tc.want)
		}
	}
}

// detailsBalanced reports whether every <details> block the renderer opened is closed
// (counting the template's own lines: a code span may show the tags as text).
func detailsBalanced(doc string) bool {
	open := 0
	for _, line := range strings.Split(doc, "\n") {
		switch l := strings.TrimSpace(line); {
		case strings.HasPrefix(l, "<details><summary>") && templateLine.MatchString(line):
			open++
		case l == "</details>":
			open--
			if open < 0 {
				return false
			}
		}
	}
	return open == 0
}
