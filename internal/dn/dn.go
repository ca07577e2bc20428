// Package dn parses, compares and builds LDAP distinguished names. Every DN in the project
// goes through it: DNs from config files and from servers differ in letter case, spacing,
// escaping (`\,` and `\2C` are the same character) and in the order of the values of a
// multi-valued RDN (`cn=a+uid=b` is `uid=b+cn=a`). Comparing them raw makes a group look both
// deleted and added (the reference's Q-11 hazard) and a member look both added and removed
// on every run.
//
// Parsing is go-ldap's RFC 4514 parser (ldap.ParseDN), so the provider and the comparisons
// read a DN exactly as the LDAP client library does.
package dn

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	goldap "github.com/go-ldap/ldap/v3"
)

// AVA is one attribute type and value of an RDN, unescaped.
type AVA struct{ Type, Value string }

// RDN is one relative DN: usually one AVA, several for a multi-valued RDN (`cn=a+uid=b`).
type RDN []AVA

// DN is a parsed distinguished name, most specific RDN first.
type DN []RDN

// Parse parses an RFC 4514 DN. The empty string is the empty (root) DN.
func Parse(s string) (DN, error) {
	d, err := goldap.ParseDN(s)
	if err != nil {
		return nil, err
	}
	out := make(DN, len(d.RDNs))
	for i, r := range d.RDNs {
		out[i] = make(RDN, len(r.Attributes))
		for j, a := range r.Attributes {
			out[i][j] = AVA{Type: a.Type, Value: a.Value}
		}
	}
	return out, nil
}

// String encodes d per RFC 4514 (attribute types as given, values escaped by EscapeValue).
func (d DN) String() string {
	var b strings.Builder
	for i, r := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		for j, a := range r {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(a.Type)
			b.WriteByte('=')
			b.WriteString(EscapeValue(a.Value))
		}
	}
	return b.String()
}

// Parent is d without its first RDN (nil for the empty DN and for a one-RDN DN's parent).
func (d DN) Parent() DN {
	if len(d) == 0 {
		return nil
	}
	return d[1:]
}

// Key is the comparison form of d: types and values case-folded, values escaped one way,
// the AVAs of each RDN sorted. Two DNs are the same entry to an LDAP server whose naming
// attributes match case-insensitively (cn, ou, uid, dc, ...) exactly when their keys are
// equal.
func (d DN) Key() string {
	var b strings.Builder
	for i, r := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		avas := make([]string, len(r))
		for j, a := range r {
			avas[j] = EscapeValue(fold(a.Type)) + "=" + EscapeValue(fold(a.Value))
		}
		slices.Sort(avas)
		b.WriteString(strings.Join(avas, "+"))
	}
	return b.String()
}

// Normalize returns the comparison key of a DN (see DN.Key). A string that is not a valid
// DN is only lower-cased and trimmed, so that it still equals itself.
func Normalize(s string) string {
	if simple(s) {
		// Most DNs (group DNs from the config, member DNs from the server) are plain
		// ASCII: their key is their lower case, without a trip through the parser.
		return strings.ToLower(s)
	}
	if strings.IndexByte(s, '=') < 0 {
		// Not a DN (a bare uid or name): the parser would refuse it.
		return fold(strings.TrimSpace(s))
	}
	return parseNormalize(s)
}

// parseNormalize is Normalize through the parser (any string).
func parseNormalize(s string) string {
	d, err := Parse(s)
	if err != nil {
		return fold(strings.TrimSpace(s))
	}
	return d.Key()
}

// simple reports whether s is a DN of one or more RDNs `type=value` joined by commas, each
// type and value non-empty and made only of ASCII letters, digits and `.`, `_`, `-`, `@`: a
// DN that needs no unescaping, has no multi-valued RDN and no spacing to normalise, so its
// parse is its text.
func simple(s string) bool {
	if s == "" {
		return false
	}
	for part := range strings.SplitSeq(s, ",") {
		typ, val, ok := strings.Cut(part, "=")
		if !ok || typ == "" || val == "" || !plain(typ) || !plain(val) {
			return false
		}
	}
	return true
}

func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-', c == '@':
		default:
			return false
		}
	}
	return true
}

// Equal reports whether a and b name the same entry (see DN.Key).
func Equal(a, b string) bool { return Normalize(a) == Normalize(b) }

// ParentKey is the comparison key of the parent of s, and false when s is not a DN of at
// least two RDNs.
func ParentKey(s string) (string, bool) {
	d, err := Parse(s)
	if err != nil || len(d) < 2 {
		return "", false
	}
	return d.Parent().Key(), true
}

// FirstValue returns the unescaped value of the first RDN (`uid=a\2Cb,ou=People` → `a,b`),
// the first AVA's of a multi-valued RDN. As in the reference, a string that is not of the
// form `attr=value,rest` (a bare uid in a posixGroup's memberUid, a one-RDN DN) is returned
// whole; a string that is not a valid DN gets the reference's reading: the text between the
// first `=` and the first `,`, trimmed.
func FirstValue(s string) string { return FirstValueOf(s, "") }

// FirstValueOf is FirstValue, preferring the value of attribute typ (case-insensitive) when
// the first RDN is multi-valued (`cn=Bob+uid=bob,ou=People` with typ uid → `bob`).
func FirstValueOf(s, typ string) string {
	if first, _, ok := strings.Cut(s, ","); ok && simple(s) {
		_, val, _ := strings.Cut(first, "=")
		return val
	}
	if strings.IndexByte(s, '=') < 0 || strings.IndexByte(s, ',') < 0 {
		// A bare value or a one-RDN string is returned whole either way (see FirstValue);
		// predictive state and memberUid lists are mostly such values.
		return s
	}
	return parseFirstValueOf(s, typ)
}

// parseFirstValueOf is FirstValueOf through the parser (any string).
func parseFirstValueOf(s, typ string) string {
	d, err := Parse(s)
	if err != nil {
		first, _, ok := strings.Cut(s, ",")
		if !ok {
			return s
		}
		_, val, ok := strings.Cut(first, "=")
		if !ok {
			return s
		}
		return strings.TrimSpace(val)
	}
	if v, ok := d.FirstValue(typ); ok {
		return v
	}
	return s
}

// FirstValue is the value of the first RDN of d (of attribute typ when that RDN has one, of
// its first AVA otherwise), and false for a DN of fewer than two RDNs.
func (d DN) FirstValue(typ string) (string, bool) {
	if len(d) < 2 {
		return "", false
	}
	if typ != "" {
		for _, a := range d[0] {
			if strings.EqualFold(strings.TrimSpace(a.Type), typ) {
				return a.Value, true
			}
		}
	}
	return d[0][0].Value, true
}

// EscapeValue escapes a string for use as an RDN value (RFC 4514 §2.4): the special
// characters with a backslash, a leading space or '#' and a trailing space, NUL as \00.
// '=' is escaped too (allowed, and clearer to a reader of `uid=x\=y`).
func EscapeValue(v string) string {
	if !needsEscape(v) {
		return v // most values (every group name a config repo may hold): no copy
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';' || c == '=':
			b.WriteByte('\\')
			b.WriteByte(c)
		case (c == ' ' || c == '#') && i == 0, c == ' ' && i == len(v)-1:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 0:
			b.WriteString(`\00`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// needsEscape reports whether EscapeValue changes v.
func needsEscape(v string) bool {
	if v == "" {
		return false
	}
	if v[0] == ' ' || v[0] == '#' || v[len(v)-1] == ' ' {
		return true
	}
	return strings.ContainsAny(v, ",+\"\\<>;=\x00")
}

// fold maps s to one representative of its case-folding class, so that fold(a) == fold(b)
// exactly when strings.EqualFold(a, b) (the comparison go-ldap's DN.EqualFold makes).
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= utf8.RuneSelf {
			// The lower case of the smallest rune of r's orbit under simple case folding:
			// one rune per orbit, and readable (the Kelvin sign becomes 'k').
			orig := r
			for f := unicode.SimpleFold(orig); f != orig; f = unicode.SimpleFold(f) {
				r = min(r, f)
			}
			r = unicode.ToLower(r)
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
