// Package textsafe is how input text that may be anything (a line of a config repo, a value a
// server returned) appears in messages: excerpts cut and masked, and the control characters
// no value may hold.
package textsafe

import (
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/internal/redact"
)

// ExcerptLen is the most characters of input text that an error message quotes.
const ExcerptLen = 40

// tokenLike matches well-known token shapes (GitHub, Slack, AWS, JWT) and long runs of
// base64/hex that look like keys.
var tokenLike = regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9_]+|github_pat_[A-Za-z0-9_]+|xox[abpors]-[A-Za-z0-9-]+|AKIA[A-Z0-9]{12,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9._-]+|[A-Za-z0-9+/=_-]{32,})`)

// Excerpt returns a short, quoted, sanitised excerpt of input text for an error message: a
// line that failed to parse may be anything (a file that should never have been read, a
// secret pasted in the wrong place), so errors never echo it whole. Credentials in URLs and
// token-like words are masked, control characters escaped, and the text cut to ExcerptLen
// characters.
func Excerpt(s string) string {
	s = redact.URLs(s)
	s = tokenLike.ReplaceAllString(s, "***")
	cut := false
	if utf8.RuneCountInString(s) > ExcerptLen {
		n := 0
		for i := range s {
			if n == ExcerptLen {
				s, cut = s[:i], true
				break
			}
			n++
		}
	}
	// strconv.Quote escapes control characters and invalid UTF-8.
	q := strconv.Quote(s)
	if cut {
		q += "…"
	}
	return q
}

// ExcerptRaw is Excerpt for text already formatted by the caller (a Ruby inspect string):
// the same masking and cut, without adding quotes.
func ExcerptRaw(s string) string {
	s = redact.URLs(s)
	s = tokenLike.ReplaceAllString(s, "***")
	if utf8.RuneCountInString(s) <= ExcerptLen*2 {
		return s
	}
	n := 0
	for i := range s {
		if n == ExcerptLen*2 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
