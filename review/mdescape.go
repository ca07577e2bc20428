package review

import (
	"strings"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// Escaping for GitHub-flavoured Markdown. Every string the Markdown renderers print that
// comes from a config repo or a target (group keys, OU keys, uids, DNs, file paths,
// descriptions, metadata, rule text, error messages) goes through exactly one of these,
// chosen by where it lands:
//
//   - mdCode: inside a code span (names, uids, DNs, paths, values);
//   - mdText: running text after fixed text on its line (descriptions, reasons, errors);
//   - mdCell: a table cell;
//   - mdHeading: running text in a heading.
//
// A pull request chooses these strings, so each must show as itself and do nothing else: no
// @mention (a team ping), no link or image (a tracking beacon), no raw HTML, no code span or
// <details> block closed early, no new line, heading or table cell. Control characters and
// bidirectional overrides are shown as escapes (termsafe.Escape), which also removes every
// newline, so data never starts a line of the document.

// zwsp (a zero-width space, as an entity) breaks what GitHub links after rendering, on the
// text itself, where a backslash escape is already gone: @mentions, issue references,
// autolinked URLs and e-mail addresses.
const zwsp = "&#8203;"

// mdInline escapes s for running text; heading also escapes '#' (a trailing run of them
// would close an ATX heading).
func mdInline(s string, heading bool) string {
	s = termsafe.Escape(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '&' && i+1 < len(s) && (s[i+1] == '#' || isAlnum(s[i+1])):
			// Only where it would start a character reference: "&#64;" must not become an
			// '@' (nor "&#x202e;" an override) once GitHub decodes it.
			b.WriteString("&amp;")
		case strings.IndexByte("\\`*_~[]|$", c) >= 0:
			// Emphasis, code spans, links and images, table cells and GitHub's math.
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '#':
			if heading {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			if i+1 < len(s) && isDigit(s[i+1]) {
				b.WriteString(zwsp) // #123 and owner/repo#123 are issue links
			}
		case c == '@':
			b.WriteString("@" + zwsp)
		case c == ':' && strings.HasPrefix(s[i+1:], "//"):
			b.WriteString(":" + zwsp)
		case (c == 'w' || c == 'W') && len(s)-i >= 4 && strings.EqualFold(s[i:i+4], "www."):
			b.WriteString(s[i:i+3] + zwsp)
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mdText escapes s for running text that follows fixed text on its line (a list item, a
// paragraph, an alert): data never starts a line, so it cannot open a block.
func mdText(s string) string { return mdInline(s, false) }

// mdCell escapes s for a table cell. GitHub splits a row at every unescaped '|', even in a
// code span, before it reads the cell; mdText escapes '|' and leaves no newline, so a cell
// is running text.
func mdCell(s string) string { return mdInline(s, false) }

// mdHeading escapes s for running text in a heading.
func mdHeading(s string) string { return mdInline(s, true) }

// mdCode renders s as one code span, which nothing in s can close: the fence is one backtick
// longer than the longest run of backticks in s, and a space pads content that begins or
// ends with a backtick or a space (CommonMark strips one from each end). Nothing else is
// interpreted in a code span, and GitHub neither mentions nor links inside one, so only
// control characters need escaping (they would break the line).
func mdCode(s string) string {
	s = termsafe.Escape(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" {
		return "` `" // "``" would open a code span, not close one
	}
	if strings.Trim(s, " ") != "" && (s[0] == '`' || s[0] == ' ' || s[len(s)-1] == '`' || s[len(s)-1] == ' ') {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// maxMarkdownError bounds an error message in a comment (in runes): the full message is in
// the text and JSON output, and one long message must not push the changes out of the
// comment.
const maxMarkdownError = 500

// clip shortens s to n runes, cutting before escaping so that no escape is cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }
